import assert from "node:assert/strict";
import { test } from "node:test";
import { InsufficientScopeError } from "@modelcontextprotocol/client";
import { agentAuthProvider, scopeUnion } from "../../src/mcp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import { browser, connect, hello, providerFor, whoami } from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();

test("[MCP-client-step-up-union] scope lists merge in order without duplicates", () => {
  assert.deepEqual(scopeUnion(["read", "offline_access"], "read write", undefined, ""), [
    "read",
    "offline_access",
    "write",
  ]);
});

test("[MCP-client-step-up] a 403 insufficient_scope leads to one sign-in for the union of granted and required scopes; the retried call succeeds", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  await loginForTest(idp, store, {
    resource: mcp.url,
    scope: "openid offline_access read",
    subject: "alice",
  });
  const person = browser();
  const asked = person.asked;
  const provider = providerFor(mcp.url, {
    store,
    issuer: idp.issuer,
    clientFor: () => ({ clientId: "agentauth-cli" }),
    maxStepUps: 1,
    onAuthorizationUrl: person.open,
  });
  const client = await connect(mcp.url, provider, { t });
  mcp.requiredScopes = ["read", "write"];

  const refused = await client.callTool(whoami).then(
    () => assert.fail("the call must be refused for its scope"),
    (e: unknown) => e,
  );
  assert.ok(refused instanceof InsufficientScopeError, String(refused));
  assert.equal(refused.requiredScope, "read write");

  await provider.stepUp(refused);
  const result = await client.callTool(whoami);

  assert.deepEqual(result.content, hello);
  assert.equal(asked.length, 1);
  const scope = asked[0]?.searchParams.get("scope")?.split(" ") ?? [];
  for (const s of ["read", "write", "offline_access"]) assert.ok(scope.includes(s), s);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.ok(stored?.scopes.includes("write"));

  // Bounded: the server now wants yet another scope, and this provider allows one step-up only.
  mcp.requiredScopes = ["read", "write", "admin"];
  const again = await client.callTool(whoami).then(
    () => assert.fail("refused again"),
    (e: unknown) => e,
  );
  assert.ok(again instanceof InsufficientScopeError);
  const exhausted = await provider.stepUp(again).then(
    () => assert.fail("the bound must hold"),
    (e: unknown) => e,
  );
  assert.equal(findCode(exhausted)?.code, "step_up_exhausted");
  assert.equal(asked.length, 1, "no second sign-in");

  // A challenge for scopes already granted would loop; refused.
  const nothing = await provider.stepUp({ requiredScope: "read" }).then(
    () => assert.fail("nothing to add"),
    (e: unknown) => e,
  );
  assert.equal(findCode(nothing)?.code, "step_up_adds_nothing");
});

test("[MCP-client-step-up-hostile] a step-up challenge pointing metadata at another origin is refused", async () => {
  const provider = agentAuthProvider({
    serverUrl: "http://127.0.0.1:9/mcp",
    store: new MemoryCredentialStore(),
    subject: "alice",
    onAuthorizationUrl: async () => assert.fail("must not sign in"),
  });
  const error = await provider
    .stepUp({ requiredScope: "write", resourceMetadataUrl: new URL("http://127.0.0.2/x") })
    .then(
      () => assert.fail("refused"),
      (e: unknown) => e,
    );
  assert.equal(findCode(error)?.code, "resource_metadata_cross_origin");
});
