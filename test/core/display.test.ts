import assert from "node:assert/strict";
import { test } from "node:test";
import { peerText, peerUrl } from "../../src/core/index.ts";

const ESC = "\u001b";

test("[SEC-peer-text-no-escapes] control characters and escape sequences never survive", () => {
  const hostile = `ok${ESC}]52;c;ZXZpbA==\u0007 ${ESC}[2J\u009b31m done\r\nnext`;
  const out = peerText(hostile);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
  assert.doesNotMatch(out, /[\u0000-\u001f\u007f-\u009f]/);
  assert.match(out, /^ok/);
  assert.match(out, /done next$/);
});

test("[SEC-peer-text-no-escapes] multiline keeps newlines and nothing else", () => {
  const out = peerText(`line one${ESC}[1m\nline\ttwo\r`, { multiline: true });
  assert.equal(out, "line one [1m\nline two");
});

test("[SEC-peer-text-bidi] bidirectional overrides are removed", () => {
  assert.equal(peerText("abc\u202edcba\u2066x\u2069"), "abcdcbax");
});

test("[SEC-peer-text-bounded] long text is clipped with an ellipsis", () => {
  const out = peerText("a".repeat(10_000), { max: 50 });
  assert.equal(out.length, 51);
  assert.ok(out.endsWith("…"));
  assert.equal(peerText(undefined), "");
  assert.equal(peerText(42), "42");
});

test("[SEC-peer-url-no-escapes] URLs come back parsed, percent-encoded, or undefined", () => {
  const out = peerUrl(`https://as.example/device?x=${ESC}[2J\u009b&y=\u202e`);
  assert.ok(out);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
  assert.doesNotMatch(out, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  assert.equal(peerUrl("not a url"), undefined);
  assert.equal(peerUrl(undefined), undefined);
  assert.equal(peerUrl(`https://a.example/${"p".repeat(5000)}`, 100)?.length, 101);
});
