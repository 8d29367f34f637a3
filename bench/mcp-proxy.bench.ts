/**
 * `agentauth mcp proxy` against `mcp-remote` (0.15.1, the npm registry's stdio-to-remote bridge), measured in the
 * same run against the same protected MCP server (`@modelcontextprotocol/server` 2.x behind `protectMcpServer`) and
 * the same embedded authorization server (refresh-token rotation; a second use of a refresh token revokes the grant).
 *
 * (1) A fleet across an access-token expiry: 8 MCP client processes (the official SDK's stdio client, each starting
 *     its own bridge process, as 8 editor windows and terminals would), one sign-in first, then 100 ticks 100 ms
 *     apart where every client calls `whoami` once, the ticks straddling the stored token's refresh point (both
 *     bridges refresh 60 s before expiry: the token lives 90 s, so the point comes 30 s after the sign-in, time
 *     for 8 processes to start on a busy 2-core machine; the refreshed token outlives the run). Columns: calls succeeded, refresh requests and invalid_grant answers at the
 *     authorization server, browser sign-ins the bridges asked for during the run, whether the stored refresh token
 *     still works afterwards (if not, the next start needs a sign-in), and files under the bridge's folder holding a
 *     token in plain text (every access token the MCP server saw, every refresh token the server issued).
 * (1b) A revoked grant (see revokedRun): how many times each bridge asks the person to sign in again.
 * (2) The proxy's cost: `tools/call` throughput through each bridge and through the SDK client talking HTTP directly
 *     (a bearer token in its headers), rounds interleaved, 1 and 8 calls in flight, medians of the rounds. The
 *     servers run in a child process (bench/fixtures/mcp-stand.ts), so no path shares an event loop with them.
 *
 * Run: node_modules/.bin/node --no-warnings bench/mcp-proxy.bench.ts [fleet] [revoked] [throughput]
 */

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { type RunningIdp, startIdp } from "../src/idp/index.ts";
import { startProtectedMcpServer } from "./fixtures/mcp-server.ts";
import {
  agentauthProxy,
  type Bridge,
  connectThrough,
  mcpRemote,
  plaintextSecrets,
} from "./fixtures/stdio-bridges.ts";

const CLIENTS = 8;
const TICKS = 100;
const TICK_MS = 100;
const ACCESS_TOKEN_TTL_SECONDS = 90;
/** Both bridges treat a token as due this long before its expiry (agentauth: TokenRefresher; mcp-remote: its code). */
const REFRESH_MARGIN_MS = 60_000;
const CALL_TIMEOUT_MS = 30_000;
/** For (1b): a short-lived token (the run waits for it to expire at the server). */
const DUE_SOON_TTL_SECONDS = 61;
/** The MCP server's token verifier allows this much clock skew past `exp` (src/oauth/verifier.ts). */
const VERIFIER_SKEW_MS = 5_000;
const ROUNDS = 9;
const CALLS_PER_ROUND = 200;

const work = mkdtempSync(join(tmpdir(), "agentauth-proxy-bench-"));
// `node bench/mcp-proxy.bench.ts fleet|revoked|throughput…` runs those parts only (to profile one); default: all.
const asked = process.argv.slice(2);
const part = (name: string) => asked.length === 0 || asked.includes(name);
const idp = await startIdp({
  autoApproveAs: "alice",
  accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
});
const server = await startProtectedMcpServer({ issuer: idp.issuer, requiredScopes: ["read"] });
const refreshTokens = collectRefreshTokens(idp);
try {
  if (part("fleet")) {
    console.log(
      `(1) ${CLIENTS} client processes × ${TICKS} calls across the refresh point, token lifetime ` +
        `${ACCESS_TOKEN_TTL_SECONDS} s, rotation with reuse detection`,
    );
    const rows = [];
    for (const bridge of [agentauthProxy, mcpRemote]) rows.push(await fleetRun(bridge));
    console.table(rows);
  }
  if (part("revoked")) {
    console.log(`\n(1b) the grant revoked, then each of the ${CLIENTS} clients calls once`);
    const rows = [];
    for (const bridge of [agentauthProxy, mcpRemote]) rows.push(await revokedRun(bridge));
    console.table(rows);
  }
} finally {
  await server.close();
  await idp.close();
}
if (part("throughput")) await throughput();
rmSync(work, { recursive: true, force: true });

async function fleetRun(bridge: Bridge) {
  const dir = mkdtempSync(join(work, "home-"));
  const browserLog = join(work, `${slug(bridge)}-browser.log`);
  const first = await connectThrough(bridge, server.url, dir, browserLog);
  const clients = [
    first,
    ...(await Promise.all(
      Array.from({ length: CLIENTS - 1 }, () =>
        connectThrough(bridge, server.url, dir, browserLog),
      ),
    )),
  ];
  const expiry = await bridge.storedExpiry(dir);
  if (!expiry) throw new Error(`${bridge.name}: no stored token after the first client's sign-in`);
  const refreshPoint = expiry - REFRESH_MARGIN_MS;
  const start = refreshPoint - (TICKS / 2) * TICK_MS;
  const late = Date.now() > start;
  await sleep(start - Date.now());
  const signInsBefore = lines(browserLog);
  idp.resetStats();
  const began = Date.now();
  const calls: Promise<boolean>[] = [];
  for (let tick = 0; tick < TICKS; tick++) {
    for (const { client } of clients) calls.push(whoami(client));
    await sleep(began + (tick + 1) * TICK_MS - Date.now());
  }
  const succeeded = (await Promise.all(calls)).filter(Boolean).length;
  const ms = Date.now() - began;
  // Copied now: the check below makes one more refresh.
  const refresh = { ...(idp.stats.byGrant.refresh_token ?? { success: 0, error: 0 }) };
  const invalidGrant = idp.stats.errors.filter(
    (e) => e.grantType === "refresh_token" && e.error === "invalid_grant",
  ).length;
  const signInsAsked = lines(browserLog) - signInsBefore;
  await Promise.all(clients.map((c) => c.close()));
  const refreshWorks = await bridge.refreshStillWorks(dir, idp.issuer);
  const exposed = plaintextSecrets(dir, [...server.tokensSeen(), ...refreshTokens]);
  return {
    bridge: bridge.name,
    "calls ok": `${succeeded}/${calls.length}`,
    "refresh requests": refresh.success + refresh.error,
    invalid_grant: invalidGrant,
    "sign-ins asked": signInsAsked,
    "sign-in needed after": refreshWorks ? 0 : 1,
    "files with plaintext tokens": exposed.files.length,
    "tokens readable": exposed.tokens,
    ms,
    ...(late ? { note: "the fleet started after the planned first tick" } : {}),
  };
}

/**
 * (1b) A revoked grant: the fleet signed in, the grant revoked at the authorization server (RFC 7009, as a password
 * change or an admin would), then, once the access token has expired at the server, every client calls once. Each browser sign-in the bridges
 * ask for is completed (the test browser approves), so the columns say how many times a person would be asked.
 */
async function revokedRun(bridge: Bridge) {
  const dueIdp = await startIdp({
    autoApproveAs: "alice",
    accessTokenTtlSeconds: DUE_SOON_TTL_SECONDS,
  });
  const dueServer = await startProtectedMcpServer({
    issuer: dueIdp.issuer,
    requiredScopes: ["read"],
  });
  try {
    const dir = mkdtempSync(join(work, "revoked-"));
    const browserLog = join(work, `${slug(bridge)}-revoked-browser.log`);
    const clients = await startFleet(bridge, dueServer.url, dir, browserLog);
    // A refresh may still be in flight from the last start (the token is due a second after it is issued): revoke
    // the refresh token the bridge holds once it has stopped changing, and check it did not change meanwhile.
    let grant = await settledGrant(bridge, dir);
    for (;;) {
      const revoked = await fetch(`${dueIdp.issuer}/token/revocation`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          token: grant.refreshToken,
          token_type_hint: "refresh_token",
          client_id: grant.clientId,
        }),
      });
      if (!revoked.ok) throw new Error(`revocation failed: HTTP ${revoked.status}`);
      const after = await settledGrant(bridge, dir);
      if (after.refreshToken === grant.refreshToken) break;
      grant = after;
    }
    // Past the access token's real expiry (the server allows 5 s of skew): no bridge can lean on it any more.
    const expiry = (await bridge.storedExpiry(dir)) ?? Date.now();
    await sleep(expiry + VERIFIER_SKEW_MS + 1000 - Date.now());
    const signInsBefore = lines(browserLog);
    dueIdp.resetStats();
    const results = await Promise.all(clients.map(({ client }) => whoami(client)));
    // A bridge may still be opening windows after the calls answered.
    await sleep(2000);
    const row = {
      bridge: bridge.name,
      "calls ok": `${results.filter(Boolean).length}/${results.length}`,
      "sign-ins asked": lines(browserLog) - signInsBefore,
      "sign-ins completed": dueIdp.stats.byGrant.authorization_code?.success ?? 0,
      "refresh requests": Object.values(dueIdp.stats.byGrant.refresh_token ?? {}).reduce(
        (a, b) => a + b,
        0,
      ),
    };
    await Promise.all(clients.map((c) => c.close()));
    return row;
  } finally {
    await dueServer.close();
    await dueIdp.close();
  }
}

/** The refresh token the bridge stores, once it has stayed the same for a second. */
async function settledGrant(bridge: Bridge, dir: string) {
  let last = await bridge.storedGrant(dir);
  for (;;) {
    await sleep(1000);
    const now = await bridge.storedGrant(dir);
    if (now && now.refreshToken === last?.refreshToken) return now;
    last = now;
  }
}

/** One client first (its bridge signs in through the browser), then the others on the same folder. */
async function startFleet(bridge: Bridge, url: string, dir: string, browserLog: string) {
  const first = await connectThrough(bridge, url, dir, browserLog);
  const rest = await Promise.all(
    Array.from({ length: CLIENTS - 1 }, () => connectThrough(bridge, url, dir, browserLog)),
  );
  return [first, ...rest];
}

function slug(bridge: Bridge): string {
  return bridge.name.split(" ")[0] ?? "bridge";
}

async function throughput() {
  const stand = await startStand();
  const closers: (() => Promise<void>)[] = [];
  try {
    const { url, token } = stand;
    const direct = new Client({ name: "bench-direct", version: "1.0.0" });
    await direct.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    closers.push(() => direct.close());
    const paths: { name: string; client: Client }[] = [
      { name: "SDK client, direct HTTP", client: direct },
    ];
    for (const bridge of [agentauthProxy, mcpRemote]) {
      const dir = mkdtempSync(join(work, "tp-"));
      const connected = await connectThrough(bridge, url, dir, join(work, "tp-browser.log"));
      closers.push(connected.close);
      paths.push({ name: `through ${bridge.name}`, client: connected.client });
    }
    for (const { client } of paths) await run(client, 50, 1); // warm-up
    const rows = [];
    for (const inFlight of [1, 8]) {
      const samples = new Map<string, number[]>(paths.map((p) => [p.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        // The order turns each round, so no path always runs first (or right after another one's burst).
        for (let i = 0; i < paths.length; i++) {
          const { name, client } = paths[(round + i) % paths.length] as (typeof paths)[number];
          samples.get(name)?.push(await run(client, CALLS_PER_ROUND, inFlight));
        }
      }
      // Each round runs the paths back to back, so a ratio within a round cancels the machine's drift; the table
      // shows each path's median rate and the median of its per-round ratios.
      const directRates = samples.get(paths[0]?.name ?? "") ?? [];
      const remoteRates = samples.get(`through ${mcpRemote.name}`) ?? [];
      for (const { name } of paths) {
        const mine = samples.get(name) ?? [];
        rows.push({
          path: name,
          "in flight": inFlight,
          "calls/s (median)": Math.round(median(mine)),
          "× direct": ratio(mine, directRates),
          "× mcp-remote": ratio(mine, remoteRates),
        });
      }
    }
    console.log(
      `\n(2) tools/call throughput: ${ROUNDS} interleaved rounds of ${CALLS_PER_ROUND} calls per path`,
    );
    console.table(rows);
  } finally {
    for (const close of closers) await close().catch(() => {});
    await stand.close();
  }
}

/** bench/fixtures/mcp-stand.ts in a child process: the servers off this process's event loop. */
async function startStand(): Promise<{ url: string; token: string; close(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ["--no-warnings", join(import.meta.dirname, "fixtures", "mcp-stand.ts")],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      const end = buffered.indexOf("\n");
      if (end >= 0) resolve(buffered.slice(0, end));
    });
    child.once("exit", (code) => reject(new Error(`bench/fixtures/mcp-stand.ts exited (${code})`)));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return {
    url,
    token,
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Calls per second for `count` whoami calls with `inFlight` outstanding at a time; every answer checked. */
async function run(client: Client, count: number, inFlight: number): Promise<number> {
  let next = 0;
  let failed = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        next++;
        if (!(await whoami(client))) failed++;
      }
    }),
  );
  const seconds = (performance.now() - began) / 1000;
  if (failed) throw new Error(`${failed} of ${count} calls failed during a throughput round`);
  return count / seconds;
}

async function whoami(client: Client): Promise<boolean> {
  try {
    const result = await client.callTool(
      { name: "whoami", arguments: {} },
      { timeout: CALL_TIMEOUT_MS },
    );
    const text = (result.content as { text?: string }[])[0]?.text ?? "";
    return !result.isError && text.includes('"subject":"alice"');
  } catch {
    return false;
  }
}

/** Refresh tokens the server issues (opaque: the value is the token's id), to look for them on disk. */
function collectRefreshTokens(running: RunningIdp): Set<string> {
  const seen = new Set<string>();
  running.provider.on("refresh_token.saved", (token: { jti: string }) => seen.add(token.jti));
  return seen;
}

function lines(path: string): number {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The median of the per-round ratios `mine[i] / baseline[i]`. */
function ratio(mine: number[], baseline: number[]): string {
  const ratios = mine.map((value, i) => value / (baseline[i] ?? Number.NaN));
  return `${median(ratios).toFixed(2)}×`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
