/** The refresh intent written on a lease row: round trip, and hostile or foreign notes read as "no intent". */

import assert from "node:assert/strict";
import { test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import {
  decodeRefreshIntent,
  encodeRefreshIntent,
  refreshTokenFingerprint,
} from "../../src/oauth/refresh-intent.ts";

test("[REFRESH-intent-roundtrip] an intent names the time and a fingerprint, never the refresh token", () => {
  const token = "rt-SECRET-0123456789abcdef";
  const fingerprint = refreshTokenFingerprint(secret(token));
  assert.match(fingerprint, /^[0-9a-f]{16}$/);
  const note = encodeRefreshIntent({ at: 1_800_000_000_000, refreshToken: fingerprint });
  assert.ok(!note.includes(token));
  assert.deepEqual(decodeRefreshIntent(note), { at: 1_800_000_000_000, refreshToken: fingerprint });
});

test("[REFRESH-intent-hostile] malformed, oversized, prototype-polluting or foreign notes are ignored", () => {
  for (const note of [
    undefined,
    "",
    "not json",
    "null",
    "[]",
    '{"v":2,"at":1,"refreshToken":"0123456789abcdef"}',
    '{"v":1,"at":"1","refreshToken":"0123456789abcdef"}',
    '{"v":1,"at":1e400,"refreshToken":"0123456789abcdef"}',
    '{"v":1,"at":1,"refreshToken":"rt-SECRET"}',
    '{"__proto__":{"v":1,"at":1,"refreshToken":"0123456789abcdef"}}',
    `{"v":1,"at":1,"refreshToken":"0123456789abcdef","pad":"${"x".repeat(1_000_000)}"}`,
    "[".repeat(100_000),
  ]) {
    assert.equal(decodeRefreshIntent(note), undefined, String(note).slice(0, 60));
  }
});
