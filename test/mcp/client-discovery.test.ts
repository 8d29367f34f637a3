import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import {
  browser,
  connectRefused,
  connectWithPerson,
  providerFor,
  whoami,
} from "./fixtures/mcp-client.ts";
import { metadataOnlyServer } from "./fixtures/metadata-only-as.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();

test("[MCP-client-discovery-dcr] with an empty vault, the first 401 leads to RFC 9728 discovery, dynamic registration and one sign-in", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const { client, person } = await connectWithPerson(mcp.url, { store }, { t });

  const result = await client.callTool(whoami);

  assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
  assert.equal(person.asked.length, 1);
  assert.ok(mcp.stats.metadataReads >= 1, "the challenge's resource_metadata was read");
  const url = person.asked[0];
  assert.ok(url);
  assert.equal(url.origin, new URL(idp.issuer).origin);
  assert.equal(url.searchParams.get("resource"), mcp.url);
  assert.equal(url.searchParams.get("code_challenge_method"), "S256");
  assert.ok(url.searchParams.get("state"));
  const clientId = url.searchParams.get("client_id");
  assert.ok(clientId && clientId !== "agentauth-cli", "a dynamically registered client");
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(stored?.status, "active");
  assert.ok(stored?.tokens.refreshToken, "offline_access was asked for, since the server lists it");

  // The registered client is kept with the credential: a later refresh at expiry uses it, without a new sign-in.
  await expireAccessToken(store, stored);
  idp.resetStats();
  await client.callTool(whoami);
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(person.asked.length, 1);
});

test("[MCP-client-discovery-preregistered] a pre-registered client id is used instead of registering", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { client, person } = await connectWithPerson(
    mcp.url,
    {
      clientFor: (issuer) => (issuer === idp.issuer ? { clientId: "agentauth-cli" } : undefined),
    },
    { t },
  );
  await client.callTool(whoami);
  assert.equal(person.asked[0]?.searchParams.get("client_id"), "agentauth-cli");
});

test("[MCP-client-discovery-root-fallback] without resource_metadata in the challenge, the root well-known URL is tried after the path-aware one", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer, metadataAt: "root" });
  mcp.hostileChallenge = 'Bearer realm="mcp"';
  const { client, person } = await connectWithPerson(mcp.url, {}, { t });
  await client.callTool(whoami);
  assert.equal(person.asked.length, 1);
  assert.ok(mcp.stats.metadataReads >= 1, "the root document was read");
});

for (const [name, header, code] of [
  [
    "a resource_metadata URL on another origin",
    'Bearer resource_metadata="http://127.0.0.2:1/.well-known/oauth-protected-resource"',
    "resource_metadata_cross_origin",
  ],
  ["a malformed header", 'Bearer realm="unterminated', "challenge_malformed"],
  ["an oversized header", `Bearer realm="${"a".repeat(9000)}"`, "challenge_malformed"],
  [
    "a resource_metadata that is not an http(s) URL",
    'Bearer resource_metadata="javascript:alert(1)"',
    "challenge_malformed",
  ],
] as const) {
  test(`[MCP-client-hostile-401] ${name} in WWW-Authenticate fails the call with a typed ${code}, and nobody is asked to sign in`, async (t) => {
    const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
    mcp.hostileChallenge = header;
    const person = browser();
    const provider = providerFor(mcp.url, {
      onAuthorizationUrl: person.open,
    });
    const error = await connectRefused(t, mcp.url, provider);
    assert.equal(findCode(error)?.code, code);
    assert.equal(person.asked.length, 0);
    assert.equal(mcp.stats.metadataReads, 0, "nothing was fetched on the hostile header's say-so");
  });
}

test("[MCP-client-resource-mismatch] metadata naming another resource than the server's URI is refused (RFC 9728 §3.3), nobody is asked to sign in", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  mcp.metadataResource = "https://victim.example/mcp";
  const person = browser();
  const provider = providerFor(mcp.url, {
    onAuthorizationUrl: person.open,
  });
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(findCode(error)?.code, "resource_mismatch");
  assert.equal(person.asked.length, 0);
});

async function refusedBeforeSignIn(issuer: string, t: { after: (fn: () => unknown) => void }) {
  const mcp = await startProtectedMcpServer({ issuer });
  const person = browser();
  const provider = providerFor(mcp.url, {
    clientFor: () => ({ clientId: "preregistered" }),
    onAuthorizationUrl: person.open,
  });
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(person.asked.length, 0);
  return findCode(error)?.code;
}

test("[MCP-client-pkce-required] an authorization server that does not advertise S256 is refused before any sign-in", async (t) => {
  const issuer = await metadataOnlyServer(t, { pkce: false });
  assert.equal(await refusedBeforeSignIn(issuer, t), "pkce_unsupported");
});

test("[MCP-client-issuer-exact] authorization server metadata naming another issuer is refused (RFC 8414 §3.3)", async (t) => {
  const issuer = await metadataOnlyServer(t, { pkce: true, issuerSuffix: "/other" });
  assert.equal(await refusedBeforeSignIn(issuer, t), "issuer_mismatch");
});

test("[MCP-client-issuer-change] a server that moves to another authorization server leads to registration and sign-in there; the old credential is left alone", async (t) => {
  const other = await useIdp();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const { client, person } = await connectWithPerson(mcp.url, { store }, { t });
  await client.callTool(whoami);
  assert.equal(person.asked[0]?.origin, new URL(idp.issuer).origin);

  mcp.switchIssuer(other.issuer);
  const result = await client.callTool(whoami);

  assert.deepEqual(result.content, [{ type: "text", text: "hello" }]);
  assert.equal(person.asked.length, 2);
  const second = person.asked[1];
  assert.equal(second?.origin, new URL(other.issuer).origin);
  assert.notEqual(
    second?.searchParams.get("client_id"),
    person.asked[0]?.searchParams.get("client_id"),
    "registered again at the new authorization server",
  );
  const key = { subject: "alice", resource: mcp.url };
  assert.equal((await store.get({ ...key, issuer: other.issuer }))?.status, "active");
  assert.equal((await store.get({ ...key, issuer: idp.issuer }))?.status, "active");
});
