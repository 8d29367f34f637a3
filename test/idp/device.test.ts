import assert from "node:assert/strict";
import { test } from "node:test";
import { CLI_CLIENT_ID } from "../../src/idp/index.ts";
import { tokenRequest } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const idp = await useIdp({ deviceIntervalSeconds: 1, deviceEnforcedIntervalSeconds: 3 });

async function deviceAuthorization(): Promise<Record<string, unknown>> {
  const response = await fetch(`${idp.issuer}/device/auth`, {
    method: "POST",
    body: new URLSearchParams({ client_id: CLI_CLIENT_ID, scope: "openid offline_access" }),
  });
  assert.equal(response.status, 200);
  return (await response.json()) as Record<string, unknown>;
}

test("[IDP-device-slow-down] the device authorization response advertises the configured interval", async () => {
  const body = await deviceAuthorization();
  assert.equal(body.interval, 1);
  assert.equal(typeof body.device_code, "string");
  assert.match(String(body.user_code), /^[A-Z]{4}-[A-Z]{4}$/);
  assert.equal(body.verification_uri, `${idp.issuer}/device`);
  assert.equal(body.verification_uri_complete, `${idp.issuer}/device?user_code=${body.user_code}`);
});

test("[IDP-device-slow-down] polling again inside the enforced interval answers slow_down (RFC 8628 §3.5)", async () => {
  const { device_code } = await deviceAuthorization();
  idp.resetStats();
  const poll = () =>
    tokenRequest(idp.issuer, { grant_type: DEVICE_GRANT, device_code: String(device_code) });
  const first = await poll();
  assert.equal(first.status, 400);
  assert.equal(first.body.error, "authorization_pending");
  // Back to back, far inside the enforced 3 s.
  const second = await poll();
  assert.equal(second.status, 400);
  assert.equal(second.body.error, "slow_down");
  assert.equal(idp.stats.slowDowns, 1);
});

test("[IDP-device-slow-down] each device code has its own poll clock", async () => {
  const a = await deviceAuthorization();
  const b = await deviceAuthorization();
  const first = await tokenRequest(idp.issuer, {
    grant_type: DEVICE_GRANT,
    device_code: String(a.device_code),
  });
  const other = await tokenRequest(idp.issuer, {
    grant_type: DEVICE_GRANT,
    device_code: String(b.device_code),
  });
  assert.equal(first.body.error, "authorization_pending");
  assert.equal(
    other.body.error,
    "authorization_pending",
    "another device's first poll is not slowed down",
  );
});

test("[IDP-device-slow-down] once approved, the next poll gets tokens, not slow_down", async () => {
  const { device_code, verification_uri_complete } = await deviceAuthorization();
  const pending = await tokenRequest(idp.issuer, {
    grant_type: DEVICE_GRANT,
    device_code: String(device_code),
  });
  assert.equal(pending.body.error, "authorization_pending");
  const page = await fetch(String(verification_uri_complete));
  assert.equal(page.status, 200);
  await page.arrayBuffer();
  const done = await tokenRequest(idp.issuer, {
    grant_type: DEVICE_GRANT,
    device_code: String(device_code),
  });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(typeof done.body.access_token, "string");
  assert.equal(typeof done.body.refresh_token, "string");
});
