/**
 * Bounded memory in the embedded authorization server (issue 8 §1.7): dynamic registrations expire and are capped,
 * device-poll clocks and index maps are pruned, error statistics are capped. Observed through `idp.memory()`.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { startIdp } from "../../src/idp/index.ts";

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
/**
 * The short lifetimes below (TTLs, poll interval) must outlast the setup requests made within them: at 1 s, a loaded
 * CI machine could take longer than that for a handful of requests, and the "before" counts came up short. 3 s is
 * far beyond what the setup needs (its time is printed as a diagnostic); the waits after are that plus a margin.
 */
const SHORT_SECONDS = 3;
const PAST_SHORT_MS = SHORT_SECONDS * 1000 + 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function register(issuer: string, name: string): Promise<string> {
  const response = await fetch(`${issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: name,
      application_type: "native",
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none",
      grant_types: [DEVICE_GRANT],
      response_types: [],
    }),
  });
  assert.equal(response.status, 201, await response.clone().text());
  return ((await response.json()) as { client_id: string }).client_id;
}

async function deviceAuth(issuer: string, clientId: string): Promise<Response> {
  return fetch(`${issuer}/device/auth`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: clientId, scope: "openid" }),
  });
}

async function poll(
  issuer: string,
  clientId: string,
  deviceCode: string,
): Promise<{ error?: string }> {
  const response = await fetch(`${issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      client_id: clientId,
      grant_type: DEVICE_GRANT,
      device_code: deviceCode,
    }),
  });
  return (await response.json()) as { error?: string };
}

test("[IDP-memory-registrations-capped] past the cap, the least recently used registration is evicted; the others keep working", async (t) => {
  const idp = await startIdp({ maxRegistrations: 20 });
  t.after(() => idp.close());
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await register(idp.issuer, `client ${i}`));
  assert.equal(idp.memory().registrations, 20);
  // Use the oldest: it becomes the most recently used, so the next registration evicts client 1 instead.
  assert.equal((await deviceAuth(idp.issuer, ids[0]!)).status, 200);
  for (let i = 20; i < 60; i++) ids.push(await register(idp.issuer, `client ${i}`));
  assert.equal(idp.memory().registrations, 20, "the cap holds");
  // Each registration also stored an RFC 7592 registration access token: evicted clients take theirs along.
  assert.ok(idp.memory().entries <= 2 * 20 + 5, `entries ${idp.memory().entries}`);
  assert.equal((await deviceAuth(idp.issuer, ids[1]!)).status, 401, "an unused old one is gone");
  assert.equal((await deviceAuth(idp.issuer, ids[59]!)).status, 200, "the newest works");
});

test("[IDP-memory-registrations-expire] a registration unused for its TTL is gone", async (t) => {
  const idp = await startIdp({ registrationTtlSeconds: SHORT_SECONDS });
  t.after(() => idp.close());
  const started = Date.now();
  const id = await register(idp.issuer, "short-lived");
  assert.equal((await deviceAuth(idp.issuer, id)).status, 200, "used within its TTL");
  t.diagnostic(`registered and used in ${Date.now() - started} ms (TTL ${SHORT_SECONDS} s)`);
  // The use renewed the TTL before its answer came back: this waits past it.
  await sleep(PAST_SHORT_MS);
  assert.equal((await deviceAuth(idp.issuer, id)).status, 401);
  assert.equal(idp.memory().registrations, 0);
});

test("[IDP-memory-device-polls] poll clocks are kept only for codes that are pending, and only for the enforced interval", async (t) => {
  const idp = await startIdp({ deviceIntervalSeconds: SHORT_SECONDS });
  t.after(() => idp.close());
  // Bogus device codes are refused and leave nothing behind.
  for (let i = 0; i < 200; i++) await poll(idp.issuer, "agentauth-cli", `bogus-${i}`);
  assert.equal(idp.memory().devicePolls, 0);
  const codes: string[] = [];
  const started = Date.now();
  for (let i = 0; i < 5; i++) {
    const body = (await (await deviceAuth(idp.issuer, "agentauth-cli")).json()) as {
      device_code: string;
    };
    codes.push(body.device_code);
    assert.equal(
      (await poll(idp.issuer, "agentauth-cli", body.device_code)).error,
      "authorization_pending",
    );
  }
  assert.equal(idp.memory().devicePolls, 5, "the five polls made within one enforced interval");
  t.diagnostic(
    `five codes asked and polled in ${Date.now() - started} ms (interval ${SHORT_SECONDS} s)`,
  );
  await sleep(PAST_SHORT_MS);
  // One more poll after the interval: older clocks are pruned, only this code's is kept.
  assert.equal((await poll(idp.issuer, "agentauth-cli", codes[0]!)).error, "authorization_pending");
  assert.equal(idp.memory().devicePolls, 1);
});

test("[IDP-memory-error-stats] token-endpoint error statistics are capped", async (t) => {
  const idp = await startIdp({});
  t.after(() => idp.close());
  for (let i = 0; i < 1_100; i++) await poll(idp.issuer, "agentauth-cli", `bogus-${i}`);
  assert.ok(idp.stats.errors.length <= 1_000, `kept ${idp.stats.errors.length}`);
  assert.equal(idp.stats.errors.at(-1)?.error, "invalid_grant", "the most recent are kept");
  assert.equal(idp.stats.byGrant[DEVICE_GRANT]?.error, 1_100, "counters still count everything");
  assert.equal(idp.memory().errorStats, idp.stats.errors.length);
});

test("[IDP-memory-indexes] expired device codes leave no entries or index rows behind", async (t) => {
  const idp = await startIdp({ deviceCodeTtlSeconds: SHORT_SECONDS });
  t.after(() => idp.close());
  const started = Date.now();
  for (let i = 0; i < 30; i++)
    assert.equal((await deviceAuth(idp.issuer, "agentauth-cli")).status, 200);
  const before = idp.memory();
  assert.ok(before.entries >= 30 && before.indexes >= 30, JSON.stringify(before));
  t.diagnostic(`30 device codes made in ${Date.now() - started} ms (TTL ${SHORT_SECONDS} s)`);
  await sleep(PAST_SHORT_MS);
  const after = idp.memory();
  assert.equal(after.entries, 0, JSON.stringify(after));
  assert.equal(after.indexes, 0, JSON.stringify(after));
});
