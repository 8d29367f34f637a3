import assert from "node:assert/strict";
import { test } from "node:test";
import { format, inspect } from "node:util";
import { REDACTED, Secret, secret } from "../../src/core/secret.ts";

const VALUE = "tok_5up3r-s3cr3t-VALUE";

/** Every way a value commonly reaches a log or a terminal. */
function renderings(value: unknown): Record<string, string> {
  return {
    String: String(value),
    template: `${value}`,
    join: [value].join(""),
    JSON: JSON.stringify(value),
    inspect: inspect(value),
    inspectDeep: inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    inspectNoCustom: inspect(value, { customInspect: false }),
    format: format("%s %o %O %j", value, value, value, value),
  };
}

test("[CORE-secret-redacted] a Secret prints [redacted] however it is turned into text", () => {
  const s = new Secret(VALUE);
  assert.equal(REDACTED, "[redacted]");
  assert.equal(String(s), "[redacted]");
  assert.equal(`${s}`, "[redacted]");
  assert.equal(JSON.stringify(s), '"[redacted]"');
  assert.equal(inspect(s), "Secret([redacted])");
  for (const [how, text] of Object.entries(renderings(s))) {
    assert.ok(!text.includes(VALUE), `${how} leaked: ${text}`);
    assert.ok(text.includes("redacted") || how === "inspectNoCustom", `${how} printed ${text}`);
  }
});

test("[CORE-secret-redacted] a Secret nested in objects, arrays and errors stays redacted", () => {
  const nested = {
    user: "alice",
    tokens: [{ access: secret(VALUE) }],
    deep: { a: { b: { c: { d: new Secret(VALUE) } } } },
  };
  const error = Object.assign(new Error("refresh failed"), { token: new Secret(VALUE) });
  for (const value of [nested, [secret(VALUE)], new Map([["k", secret(VALUE)]]), error]) {
    for (const [how, text] of Object.entries(renderings(value))) {
      assert.ok(!text.includes(VALUE), `${how} leaked: ${text}`);
    }
  }
  assert.equal(JSON.stringify(nested.tokens), '[{"access":"[redacted]"}]');
});

test("[CORE-secret-redacted] the value is not an enumerable or readable property", () => {
  const s = new Secret(VALUE);
  assert.deepEqual(Object.keys(s), []);
  assert.deepEqual(Object.getOwnPropertyNames(s), []);
  assert.deepEqual({ ...s }, {});
  assert.ok(!JSON.stringify(structuredCloneOrEmpty(s)).includes(VALUE));
});

function structuredCloneOrEmpty(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return {};
  }
}

test("[CORE-secret-redacted] reveal() returns the value; secret() passes undefined through", () => {
  assert.equal(new Secret(VALUE).reveal(), VALUE);
  assert.equal(secret(VALUE).reveal(), VALUE);
  assert.ok(secret(VALUE) instanceof Secret);
  assert.equal(secret(undefined), undefined);
});
