/**
 * `auth.mcp.authProvider(sessionId, server)` hands out one provider per session and server, also when an agent asks
 * for it from concurrent tool calls: each provider has its own single flight and turn, so a second one would
 * redo (or wait behind) work the first already does. Real kit, real vault on disk; nothing is fetched (probe off).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { tempDir } from "../support/tmp.ts";

test("[ACP-mcp-one-provider-per-session] concurrent authProvider calls for one session and server get the same provider", async (t) => {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: join(home, "vault") } });
  t.after(() => store.close());
  const auth = createAgentAuth({
    name: "once",
    methods: [],
    store,
    stderr: () => {},
    mcp: { probe: false },
  });
  auth.mcp.track("s1", [{ type: "http", name: "x", url: "https://mcp.example/mcp", headers: [] }]);
  const [a, b, c] = await Promise.all([
    auth.mcp.authProvider("s1", "x"),
    auth.mcp.authProvider("s1", "x"),
    auth.mcp.authProvider("s1", "https://mcp.example/mcp"),
  ]);
  assert.equal(a, b);
  assert.equal(a, c);
  assert.equal(await auth.mcp.authProvider("s1", "x"), a);
});
