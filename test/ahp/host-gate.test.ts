/**
 * The gate, pure-ish (no socket): `AuthSession.check` against a fake clock and a stub verifier standing in for the
 * token check (the verifier is not the peer under test; the wire suites use real IdP tokens). Issue 8 §5: the
 * common case is answered synchronously without a promise; every other case still gets the full answer.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { HostContext } from "../../src/ahp/host/context.ts";
import { AuthSession, ResourceRegistry } from "../../src/ahp/host/index.ts";
import { parseBaselines } from "../../src/ahp/version.ts";
import { silentLogger } from "../../src/core/log.ts";

const R = "https://gate.example.test/";

function session(options: { reverifyOnUse?: boolean } = {}) {
  let now = 1_000_000;
  const registry = new ResourceRegistry();
  registry.addAgent({
    provider: "gate",
    displayName: "Gate",
    resources: [{ resource: R, authorizationServers: ["https://as.example.test"] }],
  });
  const host: HostContext = {
    registry,
    commands: new Map(),
    verify: async () => ({
      subject: "alice",
      scopes: ["read"],
      expiresAt: now + 60_000,
      claims: {},
    }),
    logger: silentLogger,
    rateLimit: {},
    protocolVersions: { text: ["1.0.0"], parsed: parseBaselines(["1.0.0"]) },
    maxMessageBytes: 65536,
    serverInfo: { name: "t" },
    hostResource: () => "ws://t",
    reverifyOnUse: options.reverifyOnUse ?? false,
    now: () => now,
  };
  const notes: unknown[] = [];
  const auth = new AuthSession(host, "official", (n) => notes.push(n), silentLogger);
  return { auth, notes, advance: (ms: number) => (now += ms) };
}

describe("AHP gate", () => {
  it("[AHP-gate-fast-path] an authenticated, in-date credential with the scopes is checked synchronously", async () => {
    const { auth } = session();
    const before = auth.check([R], ["read"]);
    assert.ok(before instanceof Promise, "unauthenticated: the full path answers");
    assert.equal((await before)?.code, -32007);
    assert.deepEqual(await auth.authenticate(registryResource(auth), "t", undefined), {
      ok: true,
      announce: undefined,
    });
    assert.equal(auth.check([R], ["read"]), undefined);
    assert.equal(auth.check([R], undefined), undefined);
    assert.equal(auth.check(undefined, undefined), undefined);
  });

  it("[AHP-gate-fast-path] missing scope, expiry and re-verification still take the full path", async () => {
    const { auth, notes, advance } = session();
    await auth.authenticate(registryResource(auth), "t", undefined);
    const scope = auth.check([R], ["write"]);
    assert.ok(scope instanceof Promise);
    assert.match((await scope)?.message ?? "", /insufficient_scope/);
    advance(61_000);
    const expired = auth.check([R], ["read"]);
    assert.ok(expired instanceof Promise);
    assert.equal((await expired)?.code, -32007);
    assert.equal((notes.at(-1) as { method?: string })?.method, "auth/required");

    const reverify = session({ reverifyOnUse: true });
    await reverify.auth.authenticate(registryResource(reverify.auth), "t", undefined);
    assert.ok(reverify.auth.check([R], ["read"]) instanceof Promise);
  });
});

/** The registered resource, as the connection would pass it. */
function registryResource(auth: AuthSession) {
  void auth;
  return { resource: R, authorizationServers: ["https://as.example.test"], schemeId: "gate" };
}
