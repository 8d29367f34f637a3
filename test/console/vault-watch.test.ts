/** The pure diff of two vault listings, and the activity log it feeds. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ActivityLog, diffCredentials } from "../../src/console/index.ts";
import type { CredentialSummary } from "../../src/vault/index.ts";

function summary(overrides: Partial<CredentialSummary> = {}): CredentialSummary {
  return {
    id: "c1",
    subject: "alice",
    issuer: "http://127.0.0.1:4444",
    resource: "",
    clientId: "agentauth-cli",
    scopes: ["openid"],
    account: { label: "alice@example.test" },
    status: "active",
    expiresAt: 10_000,
    version: 1,
    createdAt: 1_000,
    updatedAt: 1_000,
    has: { accessToken: true, refreshToken: true, idToken: false },
    ...overrides,
  };
}

test("[CONSOLE-vault-diff] a new row is a sign-in, a gone row a logout", () => {
  const a = summary();
  const changes = diffCredentials([], [a]);
  assert.deepEqual(
    changes.map((c) => [c.kind, c.id, c.subject]),
    [["sign_in", "c1", "alice"]],
  );
  assert.match(
    changes[0]?.summary ?? "",
    // An issuer nobody named is shown by its host (names.ts), not as a URL.
    /alice \(alice@example.test\) signed in at 127.0.0.1:4444/,
  );
  const gone = diffCredentials([a], []);
  assert.deepEqual(
    gone.map((c) => c.kind),
    ["logout"],
  );
  assert.deepEqual(diffCredentials([a], [a]), [], "nothing changed, nothing reported");
});

test("[CONSOLE-vault-diff] a write with a new expiry is a refresh; login_required is a refused refresh; a new row under the key a sign-in", () => {
  const a = summary();
  const refreshed = summary({ version: 2, updatedAt: 2_000, expiresAt: 20_000 });
  assert.deepEqual(
    diffCredentials([a], [refreshed]).map((c) => c.kind),
    ["refresh"],
  );
  const refused = summary({ version: 2, updatedAt: 2_000, status: "login_required" });
  const [change] = diffCredentials([a], [refused]);
  assert.equal(change?.kind, "refresh_refused");
  assert.match(change?.summary ?? "", /sign in again/);
  const again = summary({ version: 3, updatedAt: 3_000, status: "active", expiresAt: 30_000 });
  assert.deepEqual(
    diffCredentials([refused], [again]).map((c) => c.kind),
    ["sign_in"],
  );
  const replaced = summary({ version: 1, createdAt: 5_000, updatedAt: 5_000 });
  assert.deepEqual(
    diffCredentials([a], [replaced]).map((c) => c.kind),
    ["sign_in"],
  );
});

test("[CONSOLE-vault-diff] an access token expiring between two listings without a write is an expiry notice", () => {
  const a = summary({ expiresAt: 10_000 });
  assert.deepEqual(diffCredentials([a], [a], { from: 5_000, to: 9_999 }), []);
  const [notice] = diffCredentials([a], [a], { from: 9_000, to: 10_000 });
  assert.equal(notice?.kind, "expiry_notice");
  assert.match(notice?.summary ?? "", /expired \(a refresh renews it\)/);
  assert.deepEqual(diffCredentials([a], [a], { from: 10_000, to: 20_000 }), [], "reported once");
  const none = summary({ expiresAt: undefined });
  assert.deepEqual(diffCredentials([none], [none], { from: 0, to: 1e15 }), []);
});

test("[CONSOLE-vault-diff] hostile text in a summary is cleaned by the activity log; summaries never hold a token", () => {
  const log = new ActivityLog({ capacity: 3 });
  const hostile = summary({ subject: "mallory\u001b[31m\u202e", account: { label: "x\u0007y" } });
  for (const change of diffCredentials([], [hostile])) {
    log.record({
      component: "vault",
      kind: change.kind,
      subject: change.subject,
      summary: change.summary,
    });
  }
  const [event] = log.list();
  assert.ok(event);
  const shown = `${event.subject} ${event.summary}`;
  assert.ok(![...shown].some((c) => c.charCodeAt(0) < 0x20 || c === "\u202e"), shown);
});

test("[CONSOLE-activity-ring] the activity log is a bounded ring with sequence numbers and subscribers", () => {
  const log = new ActivityLog({ capacity: 2, now: () => 42 });
  const seen: number[] = [];
  const off = log.subscribe((event) => seen.push(event.seq));
  log.record({ component: "console", kind: "revoke", summary: "one" });
  log.record({ component: "console", kind: "revoke", summary: "two" });
  off();
  log.record({ component: "console", kind: "revoke", summary: "three" });
  assert.deepEqual(seen, [1, 2]);
  assert.deepEqual(
    log.list().map((e) => [e.seq, e.summary, e.at]),
    [
      [2, "two", 42],
      [3, "three", 42],
    ],
  );
  assert.deepEqual(
    log.list(2).map((e) => e.seq),
    [3],
  );
  log.subscribe(() => {
    throw new Error("a bad subscriber");
  });
  assert.equal(log.record({ component: "rap", kind: "result", summary: "still recorded" }).seq, 4);
});
