/**
 * 1,000 concurrent MCP tool calls at token expiry through the official client (`@modelcontextprotocol/client`
 * 2.x), in the same run, against the same protected MCP server (`@modelcontextprotocol/server` 2.x behind
 * `protectMcpServer`) and the same embedded authorization server (refresh-token rotation, reuse revokes the grant):
 *   (a) the SDK's own OAuth orchestration (an `OAuthClientProvider`, bench/fixtures/mcp-sdk-provider.ts);
 *   (b) agentauth's `agentAuthProvider` (src/mcp/client): tokens from the single-flight TokenRefresher;
 *   (c) the same with DPoP-bound tokens (RFC 9449) against a twin server that requires DPoP and its own nonces, the
 *       authorization server requiring nonces too: one refresh with a proof of the sealed key, a fresh proof per
 *       call, and the nonce learnt once per key and origin (no nonce challenge per call at expiry).
 * Each row starts from a real sign-in whose access token has expired at the server. Per row: calls succeeded,
 * refresh requests seen at the authorization server, invalid_grant answers, and whether the user still holds a
 * valid refresh token afterwards (one refresh tried at the end; a rotated-away or revoked family fails it).
 *
 * Run: node_modules/.bin/node bench/mcp.bench.ts
 */

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { CLI_CLIENT_ID, MAX_ERROR_STATS, type RunningIdp, startIdp } from "../src/idp/index.ts";
import { TokenRefresher } from "../src/oauth/index.ts";
import { MemoryCredentialStore } from "../src/vault/index.ts";
import { authorizeAndRedeem, LOOPBACK_REDIRECT, tokenRequest } from "../test/support/authorize.ts";
import { loginForTest } from "../test/support/credentials.ts";
import { InMemorySdkOAuthProvider } from "./fixtures/mcp-sdk-provider.ts";
import { type RunningMcpServer, startProtectedMcpServer } from "./fixtures/mcp-server.ts";

const CALLS = 1000;
// Short enough that the bench waits a few seconds for expiry; long enough that a refreshed token outlives the burst.
const ACCESS_TOKEN_TTL_SECONDS = 6;
// The server's verifier allows 5 s of clock skew (src/oauth/verifier.ts): expired means past exp plus that.
const VERIFIER_TOLERANCE_SECONDS = 5;
// A row that has not settled by then counts its unsettled calls as failed (the SDK's own request timeout is 60 s).
const ROW_DEADLINE_MS = 20_000;
const SCOPE = "openid offline_access read";

interface Row {
  provider: string;
  available: boolean;
  calls: number;
  succeeded: number;
  refreshRequests: number;
  /** Refresh requests the authorization server refused (any error). */
  refused: number;
  invalidGrant: number;
  /** The server keeps its last MAX_ERROR_STATS errors: past that, invalidGrant counts only those. */
  invalidGrantCapped: boolean;
  /** Warnings the SDK printed during the burst (silenced so the table stays readable). */
  sdkWarnings: number;
  signInsAsked: number | null;
  refreshTokenValidAfter: boolean | null;
  ms: number;
  note?: string;
  /** Row (c): proofs the MCP server received during the burst, distinct among them, and nonce challenges. */
  dpop?: { proofs: number; distinctJtis: number; nonceChallenges: number };
}

const idp = await startIdp({
  autoApproveAs: "alice",
  accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
  // RFC 9449 §8: applies to requests that carry a DPoP proof only (row c); the others send none.
  dpopNonce: true,
});
const server = await startProtectedMcpServer({ issuer: idp.issuer, requiredScopes: ["read"] });
const dpopServer = await startProtectedMcpServer({
  issuer: idp.issuer,
  requiredScopes: ["read"],
  dpop: { required: true, nonce: true },
});
const clients: Client[] = [];
try {
  // (a) The SDK's own provider: in-memory tokens from a real sign-in, the pre-registered CLI client.
  const signIn = await authorizeAndRedeem(
    idp.issuer,
    { resource: server.url, scope: SCOPE },
    { resource: server.url },
  );
  if (signIn.status !== 200) throw new Error(`sign-in failed: HTTP ${signIn.status}`);
  const sdkProvider = new InMemorySdkOAuthProvider({
    clientId: CLI_CLIENT_ID,
    redirectUrl: LOOPBACK_REDIRECT,
    tokens: signIn.body as never,
  });
  const expiresAt = Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000;
  const sdkClient = await connect(
    new StreamableHTTPClientTransport(new URL(server.url), { authProvider: sdkProvider }),
  );

  // (b) agentauth's provider, when src/mcp/client has landed: its own sign-in into a vault.
  const agentauth = await loadAgentAuthProvider();
  let agentauthClient: Client | undefined;
  let agentauthCheck: (() => Promise<string | undefined>) | undefined;
  let agentauthSignIns = 0;
  if (agentauth) {
    const store = new MemoryCredentialStore();
    const record = await loginForTest(idp, store, { resource: server.url, scope: SCOPE });
    const provider = agentauth({
      serverUrl: server.url,
      store,
      subject: record.subject,
      issuer: idp.issuer,
      clientFor: () => ({ clientId: CLI_CLIENT_ID }),
      // Counted, never completed: a sign-in asked for here would mean the refresh token was lost.
      onAuthorizationUrl: async () => {
        agentauthSignIns++;
      },
      signInTimeoutMs: 1000,
    });
    agentauthClient = await connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        authProvider: provider,
        fetch: provider.fetch,
      }),
    );
    agentauthCheck = async () => {
      const latest = await store.get({
        subject: record.subject,
        issuer: record.issuer,
        resource: record.resource,
      });
      return latest?.tokens.refreshToken?.reveal();
    };
  }

  // (c) agentauth with DPoP-bound tokens: the twin server offers (and requires) the DPoP scheme.
  let dpopClient: Client | undefined;
  let dpopValid: (() => Promise<boolean>) | undefined;
  let dpopSignIns = 0;
  if (agentauth) {
    const store = new MemoryCredentialStore();
    const person = async (url: URL) => {
      await (await fetch(url)).arrayBuffer();
    };
    const provider = agentauth({
      serverUrl: dpopServer.url,
      store,
      subject: "alice",
      clientFor: () => ({ clientId: CLI_CLIENT_ID }),
      onAuthorizationUrl: async (url) => {
        // The first sign-in is the setup's; any later one would mean the refresh token was lost.
        if (dpopClient) dpopSignIns++;
        else await person(url);
      },
      signInTimeoutMs: 5000,
    });
    dpopClient = await connect(
      new StreamableHTTPClientTransport(new URL(dpopServer.url), {
        authProvider: provider,
        fetch: provider.fetch,
      }),
    );
    const key = { subject: "alice", issuer: idp.issuer, resource: dpopServer.url };
    const bound = await store.get(key);
    if (!bound?.tokens.dpopKey)
      throw new Error("row (c): the sign-in did not bind the token to a key");
    // The refresh check at the end must prove the key too: the engine's refresher does, from the row's vault.
    dpopValid = async () =>
      new TokenRefresher({ store }).forceRefresh(key).then(
        () => true,
        () => false,
      );
  }

  // Both access tokens were issued within a second or two of `expiresAt`: wait until the server refuses them.
  await sleep(expiresAt + VERIFIER_TOLERANCE_SECONDS * 1000 + 1500 - Date.now());

  const rows: Row[] = [];
  rows.push(
    await burst(
      "SDK OAuthClientProvider (auth())",
      sdkClient,
      () => refreshes(sdkProvider.tokens()?.refresh_token),
      () => sdkProvider.redirects,
    ),
  );
  if (agentauthClient && agentauthCheck) {
    rows.push(
      await burst(
        "agentauth agentAuthProvider",
        agentauthClient,
        async () => refreshes(await agentauthCheck()),
        () => agentauthSignIns,
      ),
    );
    if (dpopClient && dpopValid) {
      dpopServer.resetDpopStats();
      const row = await burst(
        "agentauth, DPoP-bound tokens",
        dpopClient,
        dpopValid,
        () => dpopSignIns,
      );
      rows.push({ ...row, dpop: dpopServer.dpopStats() });
    }
  } else {
    rows.push({
      provider: "agentauth agentAuthProvider",
      available: false,
      calls: CALLS,
      succeeded: 0,
      refreshRequests: 0,
      refused: 0,
      invalidGrant: 0,
      invalidGrantCapped: false,
      sdkWarnings: 0,
      signInsAsked: null,
      refreshTokenValidAfter: null,
      ms: 0,
      note: "not available (src/mcp/client has not landed)",
    });
  }

  console.log(
    `${CALLS} concurrent tools/call at access-token expiry, official client 2.x, rotation on, same server and IdP`,
  );
  console.log(
    "provider                            calls ok  refresh requests  refused  invalid_grant  sign-ins asked  refresh token valid after      ms",
  );
  for (const r of rows) {
    if (!r.available) {
      console.log(`${r.provider.padEnd(34)}  ${r.note}`);
      continue;
    }
    console.log(
      `${r.provider.padEnd(34)}  ${`${r.succeeded}/${r.calls}`.padStart(8)}  ${String(r.refreshRequests).padStart(16)}  ${String(r.refused).padStart(7)}  ${`${r.invalidGrantCapped ? ">=" : ""}${r.invalidGrant}`.padStart(13)}  ${String(r.signInsAsked ?? "-").padStart(14)}  ${String(r.refreshTokenValidAfter ? "yes" : "no").padStart(25)}  ${String(r.ms).padStart(6)}`,
    );
  }
  for (const r of rows) {
    if (r.dpop) {
      console.log(
        `${r.provider}: ${r.dpop.proofs} DPoP proofs at the MCP server for ${r.calls} calls, ${r.dpop.distinctJtis} distinct, ${r.dpop.nonceChallenges} nonce challenges (use_dpop_nonce) during the burst`,
      );
    }
  }
  console.log(
    JSON.stringify({
      bench: "mcp",
      calls: CALLS,
      accessTokenTtlSeconds: ACCESS_TOKEN_TTL_SECONDS,
      sdk: "@modelcontextprotocol/client 2.4.0",
      rows,
    }),
  );
} finally {
  for (const client of clients) await client.close().catch(() => {});
  await server.close();
  await dpopServer.close();
  await idp.close();
}

async function connect(transport: StreamableHTTPClientTransport): Promise<Client> {
  const client = new Client({ name: "agentauth-mcp-bench", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Whether a refresh token still works at the authorization server (a bearer one: no proof needed). */
async function refreshes(refreshToken: string | undefined): Promise<boolean> {
  if (!refreshToken) return false;
  const answer = await tokenRequest(idp.issuer, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    resource: server.url,
  });
  return answer.status === 200;
}

async function burst(
  provider: string,
  client: Client,
  refreshTokenValid: () => Promise<boolean>,
  signIns: () => number | null,
): Promise<Row> {
  idp.resetStats();
  let sdkWarnings = 0;
  const { warn, error } = console;
  console.warn = console.error = () => {
    sdkWarnings++;
  };
  const start = performance.now();
  const calls = Array.from({ length: CALLS }, () =>
    client.callTool({ name: "whoami", arguments: {} }).then(
      (result) => result.isError !== true,
      () => false,
    ),
  );
  const settled = await Promise.race([
    Promise.all(calls),
    sleep(ROW_DEADLINE_MS).then(() => undefined),
  ]);
  const ms = Math.round(performance.now() - start);
  console.warn = warn;
  console.error = error;
  const succeeded = settled ? settled.filter(Boolean).length : await countSettled(calls);
  const stats = snapshot(idp);
  const valid = await refreshTokenValid();
  return {
    provider,
    available: true,
    calls: CALLS,
    succeeded,
    ...stats,
    signInsAsked: signIns(),
    sdkWarnings,
    refreshTokenValidAfter: valid,
    ms,
    ...(settled ? {} : { note: `unsettled calls after ${ROW_DEADLINE_MS} ms counted as failed` }),
  };
}

function snapshot(running: RunningIdp) {
  const grant = running.stats.byGrant.refresh_token ?? { success: 0, error: 0 };
  return {
    refreshRequests: grant.success + grant.error,
    refused: grant.error,
    invalidGrant: running.stats.errors.filter(
      (e) => e.grantType === "refresh_token" && e.error === "invalid_grant",
    ).length,
    invalidGrantCapped: running.stats.errors.length >= MAX_ERROR_STATS,
  };
}

/** Calls that have resolved true by now (a row past its deadline). */
async function countSettled(calls: Promise<boolean>[]): Promise<number> {
  let ok = 0;
  for (const call of calls) {
    const value = await Promise.race([call, Promise.resolve(false)]);
    if (value) ok++;
  }
  return ok;
}

type ProviderFactory = typeof import("../src/mcp/client/index.ts").agentAuthProvider;

/** M1's provider, if src/mcp/client exists in this checkout; the bench still runs row (a) without it. */
async function loadAgentAuthProvider(): Promise<ProviderFactory | undefined> {
  try {
    const module = await import("../src/mcp/client/index.ts");
    return module.agentAuthProvider;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export type { RunningMcpServer };
