/** The MCP server URL given to agentAuthProvider: what the client keys credentials by (its canonical URI). */

import assert from "node:assert/strict";
import { test } from "node:test";
import { agentAuthProvider, McpAuthError } from "../../src/mcp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

test("[MCP-client-server-url-invalid] a server URL that is not an absolute http(s) URL, or carries a user name or password, is a typed invalid_server_url, without echoing it", () => {
  const store = new MemoryCredentialStore();
  for (const serverUrl of [
    "not a url s3cret",
    "",
    "ftp://mcp.example/x",
    "file:///etc/passwd",
    "//mcp.example",
    // A user name or password would become the credential's vault key and the RFC 8707 resource sent to the
    // authorization server: a secret in a stored URL.
    "https://user:s3cret@mcp.example/mcp",
    "https://s3cret@mcp.example/mcp",
  ]) {
    assert.throws(
      () => agentAuthProvider({ serverUrl, store, subject: "alice" }),
      (error: unknown) =>
        error instanceof McpAuthError &&
        error.code === "invalid_server_url" &&
        !error.message.includes("s3cret"),
      JSON.stringify(serverUrl),
    );
  }
});

test("[MCP-client-server-url-canonical] the fragment is dropped and scheme and host lower-cased; the path is kept", () => {
  const store = new MemoryCredentialStore();
  const provider = agentAuthProvider({
    serverUrl: "HTTPS://MCP.Example.com/Tools/mcp#frag",
    store,
    subject: "alice",
  });
  assert.equal(provider.canonicalUri, "https://mcp.example.com/Tools/mcp");
});
