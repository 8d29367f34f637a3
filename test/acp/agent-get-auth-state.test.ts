/**
 * Where the draft's `getAuthState` capability is advertised. ACP's extensibility rule keeps custom fields out of
 * spec types, so the default is `agentCapabilities._meta.getAuthState`; clients built on the seed draft read the
 * root field, which an agent author can keep with `getAuthState: { advertise: "root" | "both" }`. The method is
 * served whatever is advertised.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { createAgentAuth } from "../../src/acp/agent/index.ts";
import { GetAuthStateResponseSchema } from "../../src/acp/wire.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { initializeV1, startAgent } from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };

const CASES = [
  { advertise: undefined, root: undefined, meta: true },
  { advertise: "meta", root: undefined, meta: true },
  { advertise: "root", root: true, meta: undefined },
  { advertise: "both", root: true, meta: true },
] as const;

for (const { advertise, root, meta } of CASES) {
  test(
    `[ACP-getAuthState-advertise] advertise ${advertise ?? "(default)"}: root ${root ?? "absent"}, _meta ${meta ?? "absent"}; the method is served`,
    TIMEOUT,
    async (t) => {
      const agent = startAgent(t, {
        issuer: idp.issuer,
        home: tempDir(),
        env: advertise ? { GET_AUTH_STATE_ADVERTISE: advertise } : {},
      });
      const init = await initializeV1(agent);
      const caps = init.agentCapabilities as Record<string, unknown> & {
        _meta: Record<string, unknown>;
      };
      assert.equal(caps.getAuthState, root);
      assert.equal("getAuthState" in caps, root !== undefined, "no root key unless asked for");
      assert.equal(caps._meta.getAuthState, meta);
      assert.deepEqual(caps._meta.agentauth, { version: 1 });
      assert.deepEqual(caps.auth, { logout: {}, status: {} });
      const state = await agent.call("getAuthState", {});
      assert.equal(GetAuthStateResponseSchema.parse(state).authenticated, false);
    },
  );
}

test("[ACP-getAuthState-advertise-invalid] an unknown advertise value is a configuration error at construction, not a silent default", () => {
  for (const advertise of ["everywhere", "", "ROOT", 1, {}]) {
    assert.throws(
      () =>
        createAgentAuth({
          name: "advertise-test",
          methods: [],
          store: new MemoryCredentialStore(),
          getAuthState: { advertise: advertise as never },
        }),
      (error: Error) =>
        error instanceof TypeError &&
        /getAuthState\.advertise must be "meta", "root" or "both"/.test(error.message),
    );
  }
});
