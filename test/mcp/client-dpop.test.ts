/**
 * DPoP end to end (issue 18 item 5; RFC 9449, MCP SEP-1932): the real SDK client with agentAuthProvider, the strict
 * embedded server requiring nonces at its token endpoint (§8), and a real MCP server behind protectMcpServer
 * requiring DPoP-bound tokens and its own nonces (§9). The token is bound to a key kept sealed in the vault, every
 * request carries a fresh proof, a replayed proof is refused, and the bound token never travels as a bearer token.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { startDpopMcpServer } from "./fixtures/dpop-mcp-server.ts";
import { findCode } from "./fixtures/find-code.ts";
import { browser, connect, connectRefused, providerFor, whoami } from "./fixtures/mcp-client.ts";
import { metadataOnlyServer } from "./fixtures/metadata-only-as.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp({ dpopNonce: true });
const key = (url: string) => ({ subject: "alice", issuer: idp.issuer, resource: url });

/** The official client signed in to `mcp` (a person approving) over a fresh vault, closed after the test. */
async function signedIn(mcp: { url: string }, t: { after: (fn: () => unknown) => void }) {
  const store = new MemoryCredentialStore();
  const client = await connect(
    mcp.url,
    providerFor(mcp.url, { store, onAuthorizationUrl: browser().open }),
    {
      t,
    },
  );
  await client.callTool(whoami);
  return { client, store };
}

function payload(jwt: string | undefined): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(jwt).split(".")[1] ?? "", "base64url").toString("utf8"));
}

test("[MCP-client-dpop] a server offering DPoP gets a bound token: nonces at both servers, a fresh proof per request, the key sealed with the tokens", async (t) => {
  const mcp = await startDpopMcpServer({
    issuer: idp.issuer,
    dpop: { required: true, nonce: true },
  });
  const store = new MemoryCredentialStore();
  const person = browser();
  const provider = providerFor(mcp.url, { store, onAuthorizationUrl: person.open });
  idp.resetStats();
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, [
    { type: "text", text: "hello alice" },
  ]);
  await client.callTool(whoami);

  // §8: the token endpoint asked for its nonce once, and the retry with it succeeded.
  assert.deepEqual(idp.stats.byGrant.authorization_code, { success: 1, error: 1 });
  assert.deepEqual(
    idp.stats.errors.map((e) => e.error),
    ["use_dpop_nonce"],
  );
  const stored = await store.get(key(mcp.url));
  assert.equal(stored?.tokens.tokenType?.toLowerCase(), "dpop");
  assert.ok(stored?.tokens.dpopKey, "the key is kept, sealed with the tokens");
  const access = stored?.tokens.accessToken?.reveal();
  const jkt = (payload(access).cnf as { jkt?: string }).jkt;
  assert.ok(jkt, "the access token is bound (cnf.jkt)");

  const authenticated = mcp.seen.filter((r) => r.authorization);
  assert.ok(authenticated.length >= 3);
  for (const request of authenticated) {
    assert.equal(request.authorization, `DPoP ${access}`, "never as a bearer token");
  }
  const proofs = authenticated.map((r) => payload(r.dpop));
  assert.equal(new Set(proofs.map((p) => p.jti)).size, proofs.length, "a fresh proof each time");
  // §9: the first proof had no nonce and was answered use_dpop_nonce; every later one carries the server's.
  assert.equal(proofs[0]?.nonce, undefined);
  assert.ok(proofs.slice(1).every((p) => typeof p.nonce === "string"));
});

test("[MCP-client-dpop-refresh] a bound token is refreshed with a proof of the same key, in another process too: still bound, to the same key", async (t) => {
  const mcp = await startDpopMcpServer({ issuer: idp.issuer, dpop: { required: true } });
  const { store } = await signedIn(mcp, t);
  const first = await store.get(key(mcp.url));
  assert.ok(first);
  await expireAccessToken(store, first);

  // A second provider over the same vault: a new process, holding only what the vault keeps.
  idp.resetStats();
  const other = await connect(
    mcp.url,
    providerFor(mcp.url, { store, issuer: idp.issuer, onAuthorizationUrl: browser().open }),
    { t },
  );
  await other.callTool(whoami);
  assert.equal(idp.stats.byGrant.refresh_token?.success, 1);
  const second = await store.get(key(mcp.url));
  assert.notEqual(second?.tokens.accessToken?.reveal(), first.tokens.accessToken?.reveal());
  assert.equal(
    (payload(second?.tokens.accessToken?.reveal()).cnf as { jkt?: string }).jkt,
    (payload(first.tokens.accessToken?.reveal()).cnf as { jkt?: string }).jkt,
  );
});

test("[MCP-client-dpop-replay] a request replayed with its proof is refused (invalid_dpop_proof); a bound token without a proof is refused", async (t) => {
  const mcp = await startDpopMcpServer({ issuer: idp.issuer, dpop: { required: true } });
  await signedIn(mcp, t);
  const captured = mcp.seen.findLast((r) => r.authorization && r.dpop);
  assert.ok(captured?.authorization && captured.dpop);
  const replay = await fetch(mcp.url, {
    method: "POST",
    headers: {
      authorization: captured.authorization,
      dpop: captured.dpop,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  assert.equal(replay.status, 401);
  assert.match(
    String(replay.headers.get("www-authenticate")),
    /^DPoP .*error="invalid_dpop_proof"/,
  );
  const token = captured.authorization.replace(/^DPoP /, "");
  const asBearer = await fetch(mcp.url, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(asBearer.status, 401, "a bound token is not a bearer token");
});

test("[MCP-client-dpop-needs-fetch] a host that does not pass the provider's fetch gets dpop_needs_fetch; the server never sees the token", async (t) => {
  const mcp = await startDpopMcpServer({ issuer: idp.issuer, dpop: { required: true } });
  // Signed in (bound) first through a host that wires fetch, then used by one that does not.
  const { store } = await signedIn(mcp, t);
  const access = (await store.get(key(mcp.url)))?.tokens.accessToken?.reveal();
  mcp.seen.length = 0;
  const unwired = providerFor(mcp.url, {
    store,
    issuer: idp.issuer,
    onAuthorizationUrl: browser().open,
  });
  const error = await connectRefused(t, mcp.url, unwired);
  assert.equal(findCode(error)?.code, "dpop_needs_fetch");
  assert.ok(mcp.seen.length > 0);
  assert.ok(
    mcp.seen.every((r) => !r.authorization?.includes(String(access))),
    "the bound token never went out",
  );
});

test("[MCP-client-dpop-bearer-server] auto: a server that offers only Bearer keeps getting bearer tokens, although its authorization server takes DPoP", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { store } = await signedIn(mcp, t);
  const stored = await store.get(key(mcp.url));
  assert.equal(stored?.tokens.tokenType?.toLowerCase(), "bearer");
  assert.equal(stored?.tokens.dpopKey, undefined);
});

test("[MCP-client-dpop-require] require: an authorization server without DPoP is refused before anyone is asked", async (t) => {
  const issuer = await metadataOnlyServer(t, { pkce: true });
  const mcp = await startProtectedMcpServer({ issuer });
  const person = browser();
  const provider = providerFor(mcp.url, {
    clientFor: () => ({ clientId: "preregistered" }),
    onAuthorizationUrl: person.open,
    dpop: "require",
  });
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(findCode(error)?.code, "dpop_unsupported");
  assert.equal(person.asked.length, 0);
});
