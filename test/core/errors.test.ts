import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { AgentAuthError } from "../../src/core/errors.ts";

const VALUE = "rt-s3cr3t-in-the-cause";

class RefreshFailedError extends AgentAuthError {}

test("[CORE-error-json] toJSON is exactly name, code and message", () => {
  const error = new AgentAuthError("login_required", "Sign in again with 'agentauth login'.");
  assert.deepEqual(error.toJSON(), {
    name: "AgentAuthError",
    code: "login_required",
    message: "Sign in again with 'agentauth login'.",
  });
  assert.deepEqual(JSON.parse(JSON.stringify(error)), error.toJSON());
});

test("[CORE-error-json] the cause is kept for debugging but never serialized", () => {
  const cause = Object.assign(new Error(`server said ${VALUE}`), { refresh_token: VALUE });
  const error = new RefreshFailedError(
    "refresh_failed",
    "The refresh failed; run the login again.",
    { cause },
  );
  assert.equal(error.cause, cause);
  const json = JSON.stringify({ error });
  assert.ok(!json.includes(VALUE), json);
  assert.ok(!json.includes("stack"));
  assert.deepEqual(Object.keys(error.toJSON()).sort(), ["code", "message", "name"]);
});

test("[CORE-error-json] subclasses report their own name and stay AgentAuthErrors", () => {
  const error = new RefreshFailedError("refresh_failed", "x");
  assert.ok(error instanceof AgentAuthError);
  assert.ok(error instanceof Error);
  assert.equal(error.name, "RefreshFailedError");
  assert.equal(error.toJSON().name, "RefreshFailedError");
  assert.equal(error.code, "refresh_failed");
  assert.match(inspect(error), /RefreshFailedError/);
});
