/** The MCP bridge's pure wire shapes: what a hostile MCP server's metadata and challenge become in session state. */

import assert from "node:assert/strict";
import { it } from "node:test";
import {
  advertisedMetadata,
  authRequiredState,
  cleanScopes,
} from "../../src/ahp/host/mcp/index.ts";
import { McpServerStateSchema } from "../../src/ahp/wire.ts";

const URI = "https://mcp.example.test/mcp";

it("[AHP-MCP-state-metadata] only known RFC 9728 fields are kept; issuers verbatim (exact match), unclean URLs, scopes and names dropped or cleaned; resource is the checked canonical URI", () => {
  const metadata = advertisedMetadata(URI, {
    resource: "https://MCP.example.test/mcp",
    resource_name: "Files\u001b[2J\u202e API",
    authorization_servers: [
      "https://login.example.test",
      "https://evil.example.test/\u0085x",
      "javascript:alert(1)",
      42,
    ],
    scopes_supported: ["read", "write me", 'q"uote', "x".repeat(300), "files:read"],
    bearer_methods_supported: ["header", "cookie"],
    jwks_uri: "https://mcp.example.test/jwks",
    secret_thing: "should not pass",
  } as never);
  assert.deepEqual(metadata, {
    resource: URI,
    resource_name: "Files [2J API",
    authorization_servers: ["https://login.example.test"],
    scopes_supported: ["read", "files:read"],
    bearer_methods_supported: ["header"],
  });
});

it("[AHP-MCP-state-scopes] scope lists are bounded and deduplicated", () => {
  const many = Array.from({ length: 100 }, (_, i) => `s${i}`);
  assert.equal(cleanScopes(many).length, 64);
  assert.deepEqual(cleanScopes(["a", "a", "", "b\u0000"]), ["a"]);
  assert.deepEqual(cleanScopes(undefined), []);
});

it("[AHP-MCP-state-shape] authRequiredState is the official McpServerAuthRequiredState: reason, resource, requiredScopes, description cleaned, oauthClient with clientId only", () => {
  const state = authRequiredState({
    reason: "insufficientScope",
    metadata: { resource: URI, authorization_servers: ["https://login.example.test"] },
    requiredScopes: ["repo", "repo"],
    description: "Additional access\nrequired\u009b",
    oauthClientId: "abc123",
  });
  assert.deepEqual(state, {
    kind: "authRequired",
    reason: "insufficientScope",
    oauthClient: { clientId: "abc123" },
    resource: { resource: URI, authorization_servers: ["https://login.example.test"] },
    requiredScopes: ["repo"],
    description: "Additional access required",
  });
  assert.ok(McpServerStateSchema.safeParse(state).success);
  assert.deepEqual(
    authRequiredState({ reason: "required", metadata: { resource: URI }, requiredScopes: [] }),
    { kind: "authRequired", reason: "required", resource: { resource: URI } },
  );
});
