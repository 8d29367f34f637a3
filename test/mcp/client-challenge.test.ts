import assert from "node:assert/strict";
import { test } from "node:test";
import { McpAuthError, readUnauthorized } from "../../src/mcp/index.ts";

const server = new URL("https://mcp.example.test/mcp");

test("[MCP-client-challenge-hints] resource_metadata, scope and error are read from a Bearer challenge among others", () => {
  const hints = readUnauthorized(
    'Basic realm="x", Bearer error="invalid_token", scope="read write", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp"',
    server,
  );
  assert.equal(
    hints.resourceMetadataUrl?.href,
    "https://mcp.example.test/.well-known/oauth-protected-resource/mcp",
  );
  assert.deepEqual(hints.scope, ["read", "write"]);
  assert.equal(hints.error, "invalid_token");
});

test("[MCP-client-challenge-hints] no header, an empty one, or no Bearer challenge means: use the well-known fallbacks", () => {
  assert.deepEqual(readUnauthorized(null, server), {});
  assert.deepEqual(readUnauthorized("  ", server), {});
  assert.deepEqual(readUnauthorized('Basic realm="x"', server), {});
});

for (const [name, header, code] of [
  ["control characters", 'Bearer realm="a\u0001b"', "challenge_malformed"],
  ["CR LF injection", 'Bearer realm="a"\r\nSet-Cookie: x=1', "challenge_malformed"],
  ["an oversized header", `Bearer scope="${"s ".repeat(5000)}"`, "challenge_malformed"],
  [
    "a relative resource_metadata",
    'Bearer resource_metadata="/.well-known/x"',
    "challenge_malformed",
  ],
  [
    "a file: resource_metadata",
    'Bearer resource_metadata="file:///etc/passwd"',
    "challenge_malformed",
  ],
  [
    "a resource_metadata on another origin",
    'Bearer resource_metadata="https://evil.example/.well-known/oauth-protected-resource"',
    "resource_metadata_cross_origin",
  ],
  [
    "a resource_metadata on another port of the same host",
    'Bearer resource_metadata="https://mcp.example.test:8443/.well-known/oauth-protected-resource"',
    "resource_metadata_cross_origin",
  ],
] as const) {
  test(`[MCP-client-challenge-hostile] ${name} is refused with a typed ${code} that does not echo the header`, () => {
    assert.throws(
      () => readUnauthorized(header, server),
      (error: unknown) => {
        assert.ok(error instanceof McpAuthError);
        assert.equal(error.code, code);
        assert.ok(!error.message.includes("passwd") && !error.message.includes("Set-Cookie"));
        return true;
      },
    );
  });
}
