import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  createReplayCache,
  type InvocationAuth,
  invocationAuthHeaders,
  loadInvocationSecret,
  verifyInvocationAuth,
} from "../../src/rap/invocation-auth.ts";
import { tempDir } from "../support/tmp.ts";

const secret = new Secret("s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t-s3cr3t-abc");
const hmac: InvocationAuth = { scheme: "hmac-sha256", secret, replayWindowSeconds: 300 };
const bearer: InvocationAuth = { scheme: "bearer", secret };
const body = '{"id":"c1"}';
const now = 1_800_000_000_000;
const HOST = "tool-a.example:8443";

function check(
  auth: InvocationAuth,
  headers: Record<string, string | string[] | undefined>,
  options: {
    path?: string;
    host?: string;
    body?: string;
    now?: number;
    cache?: ReturnType<typeof createReplayCache>;
  } = {},
) {
  return verifyInvocationAuth(
    auth,
    {
      method: "POST",
      path: options.path ?? "/invoke",
      host: options.host ?? HOST,
      headers,
      body: Buffer.from(options.body ?? body),
      now: options.now ?? now,
    },
    options.cache ?? createReplayCache(),
  );
}

test("[RAP-invocation-hmac-wire] the signature is HMAC-SHA256 over v2, timestamp, method, host, path and the body's SHA-256, as documented", () => {
  const headers = invocationAuthHeaders(hmac, {
    method: "POST",
    host: HOST,
    path: "/invoke",
    body,
    now,
  });
  const ts = String(now / 1000);
  const mac = createHmac("sha256", secret.reveal())
    .update(`v2\n${ts}\nPOST\n${HOST}\n/invoke\n${createHash("sha256").update(body).digest("hex")}`)
    .digest("hex");
  assert.deepEqual(headers, { "x-rap-timestamp": ts, "x-rap-signature": `v2=${mac}` });
  assert.deepEqual(check(hmac, headers), { ok: true });
});

test("[RAP-invocation-hmac-host-bound] a request signed for one tool's host is refused by another; host case does not matter", () => {
  const forB = invocationAuthHeaders(hmac, {
    method: "POST",
    host: "tool-b.example",
    path: "/close_thread",
    body,
    now,
  });
  assert.deepEqual(check(hmac, forB, { path: "/close_thread" }), {
    ok: false,
    reason: "bad_signature",
  });
  assert.deepEqual(check(hmac, forB, { path: "/close_thread", host: "TOOL-B.example" }), {
    ok: true,
  });
  const otherPort = invocationAuthHeaders(hmac, {
    method: "POST",
    host: "tool-a.example:9443",
    path: "/invoke",
    body,
    now,
  });
  assert.deepEqual(check(hmac, otherPort), { ok: false, reason: "bad_signature" });
  // The previous scheme (v1, no host) is refused as malformed, so an old signer learns it must upgrade.
  assert.deepEqual(
    check(hmac, {
      ...forB,
      "x-rap-signature": forB["x-rap-signature"]?.replace("v2=", "v1=") as string,
    }),
    {
      ok: false,
      reason: "malformed",
    },
  );
});

test("[RAP-invocation-hmac-refusals] missing, malformed, forged, altered, stale and replayed requests are refused with their reason", () => {
  const good = invocationAuthHeaders(hmac, {
    method: "POST",
    host: HOST,
    path: "/invoke",
    body,
    now,
  });
  assert.deepEqual(check(hmac, {}), { ok: false, reason: "missing" });
  assert.deepEqual(check(hmac, { "x-rap-timestamp": good["x-rap-timestamp"] }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(hmac, { ...good, "x-rap-timestamp": "yesterday" }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(hmac, { ...good, "x-rap-signature": "v2=abc" }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(hmac, { ...good, "x-rap-signature": `v2=${"a".repeat(5000)}` }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(hmac, { ...good, "x-rap-signature": ["a", "b"] }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(hmac, { ...good, "x-rap-signature": `v2=${"0".repeat(64)}` }), {
    ok: false,
    reason: "bad_signature",
  });
  assert.deepEqual(check(hmac, good, { body: '{"id":"c2"}' }), {
    ok: false,
    reason: "bad_signature",
  });
  assert.deepEqual(check(hmac, good, { path: "/close_thread" }), {
    ok: false,
    reason: "bad_signature",
  });
  const other: InvocationAuth = {
    scheme: "hmac-sha256",
    secret: new Secret("another-secret-another-secret-another-secret"),
  };
  assert.deepEqual(check(other, good), { ok: false, reason: "bad_signature" });
  assert.deepEqual(check(hmac, good, { now: now + 301_000 }), { ok: false, reason: "stale" });
  assert.deepEqual(check(hmac, good, { now: now - 301_000 }), { ok: false, reason: "stale" });
  const cache = createReplayCache();
  assert.deepEqual(check(hmac, good, { cache }), { ok: true });
  assert.deepEqual(check(hmac, good, { cache, now: now + 10_000 }), {
    ok: false,
    reason: "replayed",
  });
});

test("[RAP-invocation-replay-bounded] a full replay cache never lets an evicted signature through again", () => {
  const cache = createReplayCache({ maxEntries: 2 });
  const signed = [0, 1, 2].map((i) =>
    invocationAuthHeaders(hmac, {
      method: "POST",
      host: HOST,
      path: "/invoke",
      body,
      now: now + i * 1000,
    }),
  );
  for (const [i, headers] of signed.entries()) {
    assert.deepEqual(check(hmac, headers, { cache, now: now + i * 1000 }), { ok: true });
  }
  assert.ok(cache.size <= 2);
  // The first was evicted to make room: it is refused (the floor), not accepted a second time.
  assert.equal(
    check(hmac, signed[0] as Record<string, string>, { cache, now: now + 3000 }).ok,
    false,
  );
});

test("[RAP-invocation-bearer] bearer accepts the exact secret only, constant-time over hashes", () => {
  assert.deepEqual(check(bearer, { authorization: `Bearer ${secret.reveal()}` }), { ok: true });
  assert.deepEqual(check(bearer, { authorization: `bearer ${secret.reveal()}` }), { ok: true });
  assert.deepEqual(check(bearer, {}), { ok: false, reason: "missing" });
  assert.deepEqual(check(bearer, { authorization: `Basic ${secret.reveal()}` }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(bearer, { authorization: `Bearer ${"x".repeat(10_000)}` }), {
    ok: false,
    reason: "malformed",
  });
  assert.deepEqual(check(bearer, { authorization: "Bearer wrong" }), {
    ok: false,
    reason: "bad_signature",
  });
  assert.deepEqual(check(bearer, { authorization: `Bearer ${secret.reveal()}x` }), {
    ok: false,
    reason: "bad_signature",
  });
});

test("[RAP-invocation-secret-file] created 0600 with 32 random bytes, read back the same, refused when exposed or not a secret", async () => {
  const dir = tempDir();
  const path = join(dir, "nested", "rap-invocation.secret");
  const created = await loadInvocationSecret(path, { create: true });
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(Buffer.from(readFileSync(path, "utf8").trim(), "base64url").length, 32);
  assert.equal((await loadInvocationSecret(path, { create: true })).reveal(), created.reveal());
  assert.equal(String(created), "[redacted]");
  chmodSync(path, 0o644);
  await assert.rejects(
    loadInvocationSecret(path),
    (e: Error & { code?: string }) =>
      e.code === "invocation_secret_exposed" && !e.message.includes(created.reveal()),
  );
  const bad = join(dir, "bad.secret");
  writeFileSync(bad, "short\n", { mode: 0o600 });
  await assert.rejects(loadInvocationSecret(bad), { code: "invocation_secret_invalid" });
  await assert.rejects(loadInvocationSecret(join(dir, "absent")), {
    code: "invocation_secret_missing",
  });
});

test("[RAP-invocation-timing-safe] both schemes compare through crypto.timingSafeEqual", async () => {
  const crypto = await import("node:crypto");
  const { syncBuiltinESMExports } = await import("node:module");
  const original = crypto.default.timingSafeEqual;
  let calls = 0;
  crypto.default.timingSafeEqual = (a, b) => {
    calls++;
    return original(a, b);
  };
  syncBuiltinESMExports();
  try {
    // A fresh copy of the module, so it binds the spy.
    const fresh = (await import(
      `../../src/rap/invocation-auth.ts?spy=${Date.now()}`
    )) as typeof import("../../src/rap/invocation-auth.ts");
    const headers = fresh.invocationAuthHeaders(hmac, {
      method: "POST",
      host: HOST,
      path: "/invoke",
      body,
      now,
    });
    fresh.verifyInvocationAuth(
      hmac,
      { method: "POST", host: HOST, path: "/invoke", headers, body: Buffer.from(body), now },
      fresh.createReplayCache(),
    );
    assert.equal(calls, 1);
    fresh.verifyInvocationAuth(
      bearer,
      {
        method: "POST",
        host: HOST,
        path: "/invoke",
        headers: { authorization: "Bearer nope" },
        body: Buffer.from(body),
        now,
      },
      fresh.createReplayCache(),
    );
    assert.equal(calls, 2);
  } finally {
    crypto.default.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
});

test("[RAP-invocation-secret-race] a starter that finds the file created but not yet written waits for the secret instead of calling it invalid", async () => {
  const path = join(tempDir(), "rap-invocation.secret");
  // Another process has just created the file (O_EXCL, 0600) and not written it yet.
  writeFileSync(path, "", { mode: 0o600 });
  const value = "w".repeat(43);
  const writer = new Promise<void>((resolve) =>
    setTimeout(() => {
      writeFileSync(path, `${value}\n`);
      resolve();
    }, 50),
  );
  const loaded = await loadInvocationSecret(path, { create: true });
  await writer;
  assert.equal(loaded.reveal(), value);
});

test("[RAP-invocation-secret-race] starters racing to create the secret file all read the one secret that was written", async () => {
  for (let round = 0; round < 5; round++) {
    const path = join(tempDir(), "home", "rap-invocation.secret");
    const loaded = await Promise.all(
      Array.from({ length: 16 }, () => loadInvocationSecret(path, { create: true })),
    );
    const values = new Set(loaded.map((s) => s.reveal()));
    assert.equal(values.size, 1, "every starter got the same secret");
    assert.equal(readFileSync(path, "utf8").trim(), [...values][0]);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  }
});
