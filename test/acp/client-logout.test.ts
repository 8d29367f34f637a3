/** Logout only where the spec allows it; the scripted agents record every call, so a forbidden one would show. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { runInheritedTerminal } from "../../src/acp/client/index.ts";
import { connectScripted, methods, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 30_000 };

test(
  "[ACP-logout-capability-gate] v1 without agentCapabilities.auth.logout: typed error, logout never sent",
  GUARD,
  async (t) => {
    for (const variant of ["terminal", "bare"] as const) {
      const dir = stateFolder();
      const client = await connectScripted(t, variant, dir, [], {
        runTerminal: runInheritedTerminal,
      });
      assert.equal(client.profile.capabilities.logout, false);
      await assert.rejects(client.logout(), (error: Error & { code?: string }) => {
        assert.equal(error.code, "acp_logout_unsupported");
        assert.match(error.message, /does not support logout/);
        return true;
      });
      assert.ok(!methods(dir).includes("logout"), `${variant}: the agent never received logout`);
    }
  },
);

test(
  "[ACP-logout-capability-gate] v1 with the capability: logout is sent and the state read again",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "get-auth-state", dir);
    await client.login();
    const after = await client.logout();
    assert.equal(after.state, "unauthenticated");
    assert.deepEqual(methods(dir), ["authenticate", "getAuthState", "logout", "getAuthState"]);
  },
);

test(
  "[ACP-logout-capability-gate] v2 with no authMethods: auth/logout is never sent",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "v2", dir, ["--no-methods"], { protocolVersion: 2 });
    await assert.rejects(client.logout(), { code: "acp_logout_unsupported" });
    await assert.rejects(client.login(), { code: "acp_method_not_advertised" });
    assert.deepEqual(methods(dir), ["initialize"]);
  },
);
