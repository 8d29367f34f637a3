/**
 * The ACP `logout` revokes the agent's stored MCP sign-ins concurrently, a bounded number at a time: an editor's
 * "Log out" must not take (sign-ins × the engine's timeout) when an authorization server is slow or unreachable.
 * Real parts: sign-ins obtained from the embedded authorization server (oidc-provider), revoked at it for real; its
 * revocation endpoint is held (a hook on its refresh-token lookup, as test/support/token-hold.ts does) until
 * enough requests are in flight together. The unreachable server is a real loopback HTTP server that never answers.
 */

import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type TestContext, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import Provider from "oidc-provider";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { createLogger } from "../../src/core/log.ts";
import { Secret } from "../../src/core/secret.ts";
import type { RunningIdp } from "../../src/idp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import type { CredentialFilter, CredentialSummary } from "../../src/vault/types.ts";
import { loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tryRefresh } from "./fixtures/mcp-session.ts";

const idp = await useIdp();
const NAME = "logout-agent";
const SUBJECT = `acp-agent:${NAME}`;
/** The bound the fix promises: at most this many sign-ins are revoked at once. */
const MAX_IN_FLIGHT = 8;

type Finder = (this: unknown, ...args: unknown[]) => Promise<unknown>;

interface RevocationGate {
  /** Resolves once `together` revocation requests are held at the server at the same time. */
  allArrived: Promise<void>;
  /** The most revocation requests ever in flight together. */
  most(): number;
  /** Lets every held request (and later ones) through and removes the hook. */
  release(): void;
}

/**
 * Holds every revocation request of the embedded server at its refresh-token lookup until `release()`, and says
 * when `together` of them are in flight at once. A request counts as in flight until its answer is handed to the
 * socket or its client gives up (the engine's timeout), so a client that revokes one at a time never has more
 * than one counted.
 */
function gateRevocations(server: RunningIdp, together: number): RevocationGate {
  const model = server.provider.RefreshToken as unknown as { find: Finder };
  const own = Object.getOwnPropertyDescriptor(model, "find");
  const original = model.find;
  let inFlight = 0;
  let most = 0;
  let arrived = () => {};
  const allArrived = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const hooked: Finder = async function (this: unknown, ...args: unknown[]) {
    const ctx = (
      Provider as unknown as { ctx?: { oidc?: { route?: string }; res: ServerResponse } }
    ).ctx;
    if (ctx?.oidc?.route !== "revocation") return original.apply(this, args);
    inFlight++;
    most = Math.max(most, inFlight);
    let counted = true;
    const done = () => {
      if (counted) inFlight--;
      counted = false;
    };
    ctx.res.once("finish", done);
    ctx.res.once("close", done);
    if (inFlight >= together) arrived();
    await opened;
    return original.apply(this, args);
  };
  model.find = hooked;
  return {
    allArrived,
    most: () => most,
    release() {
      open();
      if (model.find !== hooked) return;
      if (own) Object.defineProperty(model, "find", own);
      else delete (model as { find?: Finder }).find;
    },
  };
}

/** A real loopback HTTP server that accepts every request and never answers; counts those open together. */
async function silentServer(t: TestContext): Promise<{ issuer: string; most(): number }> {
  let open = 0;
  let most = 0;
  const server = createServer((_req, res) => {
    open++;
    most = Math.max(most, open);
    res.once("close", () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, most: () => most };
}

/** The kit in this process, on its own store, its logs and stderr kept for the secret checks. */
function agent(store: MemoryCredentialStore) {
  const lines: string[] = [];
  const auth = createAgentAuth({
    name: NAME,
    methods: [{ kind: "api-key", id: "api-key", name: "API key" }],
    store,
    env: {},
    mcp: { probe: false },
    logger: createLogger({ level: "debug", write: (line) => lines.push(line) }),
    stderr: (text) => lines.push(text),
  });
  return { auth, lines };
}

/** `count` real MCP sign-ins of the kit's subject at the embedded server, one MCP server URL each. */
async function signIns(store: MemoryCredentialStore, count: number): Promise<string[]> {
  const secrets: string[] = [];
  for (let i = 0; i < count; i++) {
    const record = await loginForTest(idp, store, {
      subject: SUBJECT,
      resource: `https://mcp-${i}.example/mcp`,
    });
    for (const s of [record.tokens.accessToken, record.tokens.refreshToken]) {
      if (s) secrets.push(s.reveal());
    }
  }
  return secrets;
}

/** Stored sign-ins at an authorization server that never answers (the tokens are never sent: discovery hangs). */
async function unreachableSignIns(
  store: MemoryCredentialStore,
  issuer: string,
  count: number,
  first = 0,
): Promise<string[]> {
  const secrets: string[] = [];
  for (let i = first; i < first + count; i++) {
    const access = `silent-access-${i}-${crypto.randomUUID()}`;
    const refresh = `silent-refresh-${i}-${crypto.randomUUID()}`;
    await store.put({
      subject: SUBJECT,
      issuer,
      resource: `https://silent-${i}.example/mcp`,
      clientId: "agentauth-cli",
      tokens: { accessToken: new Secret(access), refreshToken: new Secret(refresh) },
      scopes: ["read"],
      account: {},
      status: "active",
    });
    secrets.push(access, refresh);
  }
  return secrets;
}

/** Whether the embedded server still honours `refreshToken` (false once it was revoked). */
async function refreshAccepted(refreshToken: string): Promise<boolean> {
  return (await tryRefresh(idp.issuer, refreshToken, "agentauth-cli")).status === 200;
}

async function refreshTokens(store: MemoryCredentialStore): Promise<string[]> {
  const out: string[] = [];
  for (const summary of await store.list({ subject: SUBJECT })) {
    const record = await store.get(summary);
    const token = record?.tokens.refreshToken?.reveal();
    if (token && summary.issuer === idp.issuer) out.push(token);
  }
  return out;
}

function assertNoSecret(text: string, secrets: readonly string[], where: string): void {
  for (const secret of secrets) {
    assert.ok(!text.includes(secret.slice(0, 24)), `a token appears in ${where}`);
  }
}

test("[ACP-mcp-logout-concurrent] logout revokes the stored MCP sign-ins together, at most 8 at a time, each at the real authorization server", {
  timeout: 120_000,
}, async (t) => {
  const store = new MemoryCredentialStore();
  const secrets = await signIns(store, 10);
  const refresh = await refreshTokens(store);
  assert.equal(
    refresh.length,
    10,
    "ten sign-ins with refresh tokens (the checks below are not vacuous)",
  );
  const { auth, lines } = agent(store);
  assert.equal(
    (await auth.status()).accounts.filter((a) => a._meta?.agentauth?.mcpServer).length,
    10,
    "auth/status lists the ten sign-ins logout is to revoke",
  );

  const gate = gateRevocations(idp, MAX_IN_FLIGHT);
  t.after(() => gate.release());
  const started = performance.now();
  const loggedOut = auth.logout();
  // Sequential revocation parks the first request at the gate until the engine's 10 s timeout, then the next one:
  // never two together. 20 s is two of those timeouts: a concurrent logout gets there in well under one.
  const arrived = await Promise.race([
    gate.allArrived.then(() => true),
    delay(20_000, false, { ref: false }),
  ]);
  // Room for a ninth request to arrive while eight are held, which a bounded logout never sends: this can miss an
  // unbounded logout on a very slow machine, never fail a bounded one.
  if (arrived) await delay(1_000);
  gate.release();
  await loggedOut;
  t.diagnostic(
    `logout of 10 sign-ins: ${Math.round(performance.now() - started)} ms, ${gate.most()} revocations in flight at most`,
  );
  assert.ok(
    arrived,
    `only ${gate.most()} revocation request(s) were ever in flight together within 20 s, ${MAX_IN_FLIGHT} expected: logout revokes one sign-in after another`,
  );
  assert.ok(
    gate.most() <= MAX_IN_FLIGHT,
    `${gate.most()} revocations in flight together: logout must bound them at ${MAX_IN_FLIGHT}`,
  );

  assert.deepEqual(await store.list({ subject: SUBJECT }), [], "every sign-in is deleted");
  for (const token of refresh) {
    assert.equal(await refreshAccepted(token), false, "a sign-in was not revoked at the server");
  }
  assert.deepEqual(
    (await auth.status()).accounts.filter((a) => a._meta?.agentauth?.mcpServer),
    [],
    "auth/status lists no MCP server any more",
  );
  assertNoSecret(lines.join("\n"), secrets, "the agent's logs");
});

test("[ACP-mcp-logout-concurrent] logout still answers when one authorization server never does: every sign-in deleted, the reachable ones revoked, no token logged", {
  timeout: 120_000,
}, async (t) => {
  const store = new MemoryCredentialStore();
  const silent = await silentServer(t);
  const secrets = [
    ...(await signIns(store, 2)),
    ...(await unreachableSignIns(store, silent.issuer, 3)),
  ];
  const refresh = await refreshTokens(store);
  assert.equal(refresh.length, 2);
  const { auth, lines } = agent(store);

  const started = performance.now();
  // Bounded by the engine's 10 s request timeout (each silent server's discovery gives up), not multiplied by it.
  await auth.logout();
  t.diagnostic(
    `logout with 3 sign-ins at a silent server: ${Math.round(performance.now() - started)} ms`,
  );
  assert.equal(
    silent.most(),
    3,
    "the three sign-ins at the silent server were tried together, not one timeout after another",
  );
  assert.deepEqual(await store.list({ subject: SUBJECT }), [], "every sign-in is deleted");
  for (const token of refresh) assert.equal(await refreshAccepted(token), false);

  const log = lines.join("\n");
  const failures = lines.filter((l) => l.includes("acp.mcp_logout_revoke_failed"));
  assert.equal(failures.length, 3, `one warning per unreachable sign-in:\n${log}`);
  assertNoSecret(log, secrets, "the agent's logs");
});

test("[ACP-mcp-logout-concurrent] signOut's results keep the vault's order, failures typed and without a token", {
  timeout: 120_000,
}, async (t) => {
  // The unreachable sign-ins fail last (at the engine's timeout), so a listing that puts one first and one last
  // tells results in the vault's order from results in the order they finished.
  const order = ["silent-0", "mcp-0", "mcp-1", "silent-1"].map((h) => `https://${h}.example/mcp`);
  const store = new (class extends MemoryCredentialStore {
    override async list(filter?: CredentialFilter): Promise<CredentialSummary[]> {
      const rank = (r: CredentialSummary) => order.indexOf(r.resource);
      return (await super.list(filter)).sort((a, b) => rank(a) - rank(b));
    }
  })();
  const silent = await silentServer(t);
  const secrets = [
    ...(await unreachableSignIns(store, silent.issuer, 1)),
    ...(await signIns(store, 2)),
    ...(await unreachableSignIns(store, silent.issuer, 1, 1)),
  ];
  const listed = await store.list({ subject: SUBJECT });
  assert.deepEqual(
    listed.map((r) => r.resource),
    order,
  );
  const { auth } = agent(store);

  const results = await auth.mcp.signOut();
  assert.equal(results.length, 4);
  results.forEach((result, i) => {
    const unreachable = listed[i]?.issuer === silent.issuer;
    assert.equal(result.found, true);
    assert.equal(result.deleted, true, `result ${i} was not deleted`);
    assert.equal(result.revoked, !unreachable, `result ${i} is not the record listed at ${i}`);
    if (unreachable) {
      assert.equal((result.error as { code?: string } | undefined)?.code, "timeout");
    } else {
      assert.equal(result.error, undefined);
    }
  });
  const shown = JSON.stringify(
    results.map((r) => ({
      ...r,
      error: r.error && { message: r.error.message, stack: r.error.stack },
    })),
  );
  assertNoSecret(shown, secrets, "signOut's results");
  assert.deepEqual(await store.list({ subject: SUBJECT }), []);
});
