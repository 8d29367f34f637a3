/** `status()` against real scripted agents over stdio: the fallback chain, normalisation, the epoch guard, hints. */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { AuthStatus } from "../../src/acp/client/index.ts";
import { connectScripted, methods, stateFolder } from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 30_000 };

test(
  "[ACP-client-status-fallback] auth/status is used when advertised, and getAuthState is never tried",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "terminal", dir);
    const status = await client.status();
    assert.deepEqual(status, { state: "unauthenticated", accounts: [], source: "auth/status" });
    assert.deepEqual(methods(dir), ["initialize", "auth/status"]);
  },
);

test(
  "[ACP-client-status-fallback] without auth/status, the advertised getAuthState gives the state",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "get-auth-state", dir);
    assert.equal(client.profile.capabilities.status, false);
    assert.equal(client.profile.capabilities.getAuthState, true);
    const status = await client.status();
    assert.equal(status.state, "unauthenticated");
    assert.equal(status.source, "getAuthState");
    assert.equal(status.reason, "No credentials configured");
    assert.deepEqual(methods(dir), ["getAuthState"]);
  },
);

test(
  "[ACP-client-status-fallback] neither: getAuthState is probed, −32601 reads as absent, state unknown with a reason",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "bare", dir);
    const status = await client.status();
    assert.equal(status.state, "unknown");
    assert.equal(status.source, "none");
    assert.match(status.reason ?? "", /neither auth\/status nor getAuthState/);
    assert.deepEqual(methods(dir), ["getAuthState"], "one probe, answered method-not-found");
  },
);

test(
  "[ACP-client-status-fallback] probing can be turned off: an agent with neither is not sent getAuthState",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "bare", dir, [], { probeGetAuthState: false });
    assert.equal((await client.status()).source, "none");
    assert.deepEqual(methods(dir), []);
  },
);

test(
  "[ACP-client-status-normalise] a custom state from a real agent reads as unknown; _meta never surfaces",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "url", dir, ["--state-value", "_vendor_degraded"]);
    const status = await client.status();
    assert.equal(status.state, "unknown");
    assert.equal(status.unrecognizedState, "_vendor_degraded");
    assert.deepEqual(status.accounts, [
      { label: "Scripted Max", email: "person@example.com", active: true },
    ]);
    assert.doesNotMatch(JSON.stringify(status), /SHOULD-NOT-PRINT/);
  },
);

test(
  "[ACP-client-status-draft] an agent answering auth/status in the RFD draft shape {authenticated, message}",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "url", dir, ["--draft-status"]);
    assert.equal(
      client.profile.capabilities.status,
      true,
      "`auth.status: true` counts as advertised",
    );
    const status = await client.status();
    assert.deepEqual(
      [status.state, status.source, status.reason],
      ["unauthenticated", "auth/status", "No credentials"],
    );
  },
);

test(
  "[ACP-client-status-epoch] auth/status_update sent before a stale auth/status answer wins over it",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const changes: AuthStatus[] = [];
    const client = await connectScripted(t, "url", dir, ["--race"], {
      onStatusChange: (s) => changes.push(s),
    });
    const status = await client.status();
    assert.equal(
      status.state,
      "authenticated",
      "the agent's newer notification, not its stale answer",
    );
    assert.equal(status.source, "auth/status_update");
    assert.equal(client.lastStatus?.state, "authenticated");
    assert.deepEqual(
      changes.map((c) => c.state),
      ["authenticated"],
    );
  },
);

test(
  "[ACP-client-status-update] auth/status_update notifications keep lastStatus current without asking",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const changes: AuthStatus[] = [];
    const client = await connectScripted(t, "url", dir, [], {
      onUrl: () => {},
      onStatusChange: (s) => changes.push(s),
    });
    assert.equal(client.lastStatus, undefined);
    await client.login();
    await client.logout();
    // The agent notifies before answering authenticate and logout; login() and logout() then ask again.
    assert.deepEqual(
      changes.map((c) => `${c.state} from ${c.source}`),
      [
        "authenticated from auth/status_update",
        "authenticated from auth/status",
        "unauthenticated from auth/status_update",
        "unauthenticated from auth/status",
      ],
    );
  },
);

test(
  "[ACP-client-status-hint] the vendor _auth/status_update is kept as a hint, never as the state",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "url", dir, ["--vendor-hint"]);
    // The hint arrives shortly after initialize; ask until it is attached (bounded by the test's timeout).
    let status = await client.status();
    while (!status.hint) status = await client.status();
    assert.equal(status.state, "unauthenticated");
    assert.deepEqual(status.hint, {
      state: "authenticated",
      label: "Scripted Pro",
      from: "_auth/status_update",
    });
  },
);
