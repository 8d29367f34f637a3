/**
 * Provider presets under load, against the GitHub simulator (test/sims/github.ts) as a GitHub App (8 h user tokens,
 * single-use refresh tokens) with a SQLite vault:
 * 1. 1,000 concurrent callers at expiry through `TokenRefresher` with the GitHub preset: wall time, refreshes the
 *    simulator saw (must be 1), failures (must be 0); baseline in the same run: the same number of refreshes done
 *    one after another (what callers cost when each refreshes for itself).
 * 2. The cost of the quirk layer: one refresh through the preset (oauth4webapi + `quirksFetch`: Accept header,
 *    body normalising) against one refresh by oauth4webapi alone with a fetch that only adds `Accept:
 *    application/json` (the least any GitHub client must do). Same simulator, same vault-free path. Medians.
 *
 * Run: node_modules/.bin/node bench/providers.bench.ts
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as oauth from "oauth4webapi";
import { login, type QuirkyServer, serverFetch, TokenRefresher } from "../src/oauth/index.ts";
import { github, resolveProvider } from "../src/providers/index.ts";
import { openVault } from "../src/vault/index.ts";
import { startGitHubSimulator } from "../test/sims/github.ts";

const ROUNDS = 5;
const CALLERS = 1000;
const SINGLE_REFRESHES = 200;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

const dir = mkdtempSync(join(tmpdir(), "agentauth-providers-bench-"));
const sim = await startGitHubSimulator({ appKind: "github_app" });
const store = openVault({ home: dir, env: {} });
try {
  const provider = github({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    host: sim.url,
    app: "github_app",
  });
  const browse = async (url: URL) => {
    const consent = await fetch(url, { redirect: "manual" });
    await (await fetch(consent.headers.get("location") as string)).text();
  };
  const first = await login({ provider, flow: "browser", store, openUrl: browse });
  const key = { subject: first.subject, issuer: first.issuer, resource: first.resource };
  const refresher = new TokenRefresher({ store, providers: resolveProvider });

  // 1. Single-flight at expiry.
  const concurrent: number[] = [];
  const sequential: number[] = [];
  let maxRefreshes = 0;
  let failures = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const record = await store.get(key);
    if (!record) throw new Error("the credential vanished");
    const { id: _i, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
    await store.put({ ...input, expiresAt: Date.now() - 1000 });
    const before = sim.stats().refreshGrants;
    let start = performance.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: CALLERS }, () => refresher.getAccessToken(key)),
    );
    concurrent.push(performance.now() - start);
    failures += outcomes.filter((o) => o.status === "rejected").length;
    maxRefreshes = Math.max(maxRefreshes, sim.stats().refreshGrants - before);

    start = performance.now();
    for (let i = 0; i < CALLERS; i++) await refresher.forceRefresh(key);
    sequential.push(performance.now() - start);
  }

  // 2. The quirk layer's cost per refresh.
  const as = await provider.server();
  const client: oauth.Client = { client_id: sim.clientId };
  const auth = oauth.ClientSecretPost(sim.clientSecret);
  const plainFetch = (url: string, init: RequestInit) =>
    fetch(url, { ...init, headers: { ...(init.headers as object), accept: "application/json" } });
  let refreshToken = (await store.get(key))?.tokens.refreshToken?.reveal() as string;
  const viaPreset: number[] = [];
  const viaPlain: number[] = [];
  for (let i = 0; i < SINGLE_REFRESHES; i++) {
    let start = performance.now();
    let response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, {
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: (as as QuirkyServer)[serverFetch],
    });
    let body = await oauth.processRefreshTokenResponse(as, client, response);
    viaPreset.push(performance.now() - start);
    refreshToken = body.refresh_token as string;

    start = performance.now();
    response = await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, {
      [oauth.allowInsecureRequests]: true,
      [oauth.customFetch]: plainFetch,
    });
    body = await oauth.processRefreshTokenResponse(as, client, response);
    viaPlain.push(performance.now() - start);
    refreshToken = body.refresh_token as string;
  }

  const c = median(concurrent);
  const s = median(sequential);
  const p = median(viaPreset);
  const b = median(viaPlain);
  console.log(
    `GitHub App, ${CALLERS} concurrent callers at expiry: ${c.toFixed(2)} ms (median of ${ROUNDS}); ` +
      `${CALLERS} sequential refreshes: ${s.toFixed(2)} ms; sequential/concurrent ${(s / c).toFixed(1)}x; ` +
      `refreshes seen by the simulator per round: ${maxRefreshes} (max); failed callers: ${failures}`,
  );
  console.log(
    `one refresh via the GitHub preset (quirks): ${p.toFixed(3)} ms; via oauth4webapi + Accept header only ` +
      `(baseline): ${b.toFixed(3)} ms; preset/baseline ${(p / b).toFixed(3)}x (median of ${SINGLE_REFRESHES})`,
  );
  console.log(
    JSON.stringify({
      bench: "providers",
      unit: "ms (median)",
      singleFlight: {
        callers: CALLERS,
        rounds: ROUNDS,
        concurrentMs: round2(c),
        sequentialMs: round2(s),
        ratio: round2(s / c),
        refreshesPerRound: maxRefreshes,
        failures,
      },
      quirkCost: { presetMs: round2(p), baselineMs: round2(b), ratio: round2(p / b) },
    }),
  );
  if (maxRefreshes !== 1 || failures !== 0) process.exitCode = 1;
} finally {
  await store.close();
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
}
