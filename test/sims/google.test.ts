/** Checks the Google simulator itself with raw fetch (discovery, offline refresh tokens, PKCE, device flow, revocation, userinfo, faults), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type GoogleSimulator,
  type GoogleSimulatorOptions,
  startGoogleSimulator,
} from "./google.ts";
import { authorizeAt, getJson, pkce, postForm, REDIRECT, verifyJwt } from "./sim-test-b.ts";

const sims: GoogleSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: GoogleSimulatorOptions = {}) {
  const s = await startGoogleSimulator(options);
  sims.push(s);
  return s;
}

async function login(s: GoogleSimulator, extra: Record<string, string> = {}) {
  const p = pkce();
  const loc = await authorizeAt(s.url, "/o/oauth2/v2/auth", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid email profile",
    state: "st",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    ...extra,
  });
  assert.equal(loc.searchParams.get("state"), "st");
  const code = loc.searchParams.get("code")!;
  const res = await postForm(`${s.url}/token`, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code_verifier: p.verifier,
  });
  return { res, code, verifier: p.verifier };
}

test("[SIM-google-discovery] discovery names Google's real issuer and endpoints", async () => {
  const s = await sim();
  const { status, body } = await getJson(`${s.url}/.well-known/openid-configuration`);
  assert.equal(status, 200);
  assert.equal(body.issuer, "https://accounts.google.com");
  assert.equal(body.token_endpoint, "https://oauth2.googleapis.com/token");
  assert.equal(body.device_authorization_endpoint, "https://oauth2.googleapis.com/device/code");
  assert.deepEqual(body.code_challenge_methods_supported, ["plain", "S256"]);
  const certs = await getJson(`${s.url}/oauth2/v3/certs`);
  assert.equal((certs.body.keys as unknown[]).length, 1);
});

test("[SIM-google-offline] refresh token only with access_type=offline; again only with prompt=consent; no rotation", async () => {
  const s = await sim();
  const online = await login(s, { nonce: "n-1" });
  assert.equal(online.res.status, 200);
  assert.equal(online.res.body.expires_in, 3599);
  assert.equal(online.res.body.refresh_token, undefined);
  const claims = verifyJwt(online.res.body.id_token as string, s.jwks());
  assert.equal(claims.iss, "https://accounts.google.com");
  assert.equal(claims.aud, s.clientId);
  assert.equal(claims.nonce, "n-1");
  assert.equal(claims.email, "alice@example.com");
  const first = await login(s, { access_type: "offline" });
  const rt = first.res.body.refresh_token as string;
  assert.match(rt, /^1\/\/0/);
  const again = await login(s, { access_type: "offline" });
  assert.equal(
    again.res.body.refresh_token,
    undefined,
    "a repeat consent without prompt=consent has none",
  );
  const forced = await login(s, { access_type: "offline", prompt: "consent" });
  assert.equal(typeof forced.res.body.refresh_token, "string");
  const refresh = () =>
    postForm(`${s.url}/token`, {
      grant_type: "refresh_token",
      refresh_token: rt,
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
  const r1 = await refresh();
  assert.equal(r1.status, 200);
  assert.equal(r1.body.refresh_token, undefined, "Google refresh tokens do not rotate");
  assert.equal((await refresh()).status, 200, "the same refresh token works again");
  assert.equal(s.stats().refreshGrants, 2);
});

test("[SIM-google-code] code single use, PKCE verifier checked, client secret required", async () => {
  const s = await sim();
  const { res, code, verifier } = await login(s);
  assert.equal(res.status, 200);
  const replay = await postForm(`${s.url}/token`, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code_verifier: verifier,
  });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, "invalid_grant");
  const p = pkce();
  const loc = await authorizeAt(s.url, "/o/oauth2/v2/auth", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "email",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  const base = {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
  };
  const noSecret = await postForm(`${s.url}/token`, { ...base, code_verifier: p.verifier });
  assert.equal(noSecret.status, 401);
  assert.equal(noSecret.body.error, "invalid_client");
  const badVerifier = await postForm(`${s.url}/token`, {
    ...base,
    client_secret: s.clientSecret,
    code_verifier: pkce().verifier,
  });
  assert.equal(
    badVerifier.body.error,
    "invalid_grant",
    "the code was consumed by the failed attempt or the verifier is wrong",
  );
  assert.equal(s.lastTokenRequest()?.params.client_secret, "[redacted]");
  assert.equal(s.lastTokenRequest()?.auth, "post");
});

test("[SIM-google-authorize-errors] wrong client or redirect URI get an error page; deny redirects access_denied", async () => {
  const s = await sim({ redirectUris: ["https://app.example.com/cb"] });
  const bad = await fetch(
    `${s.url}/o/oauth2/v2/auth?client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=email`,
    { redirect: "manual" },
  );
  assert.equal(bad.status, 401);
  const mismatch = await fetch(
    `${s.url}/o/oauth2/v2/auth?client_id=${s.clientId}&redirect_uri=${encodeURIComponent("https://evil.example/cb")}&response_type=code&scope=email`,
    { redirect: "manual" },
  );
  assert.equal(mismatch.status, 400);
  assert.match(await mismatch.text(), /redirect_uri_mismatch/);
  s.deny = true;
  const loc = await authorizeAt(s.url, "/o/oauth2/v2/auth", {
    client_id: s.clientId,
    redirect_uri: "https://app.example.com/cb",
    response_type: "code",
    scope: "email",
    state: "x",
  });
  assert.equal(loc.searchParams.get("error"), "access_denied");
  assert.equal(loc.searchParams.get("state"), "x");
});

test("[SIM-google-device] device flow: verification_url, pending 428, slow_down, approval, scope allowlist", async () => {
  const s = await sim({ deviceIntervalSeconds: 1, enforceDeviceInterval: false });
  const bad = await postForm(`${s.url}/device/code`, {
    client_id: s.clientId,
    scope: "https://www.googleapis.com/auth/gmail.readonly",
  });
  assert.equal(bad.body.error, "invalid_scope");
  const d = await postForm(`${s.url}/device/code`, {
    client_id: s.clientId,
    scope: "openid email",
  });
  assert.equal(d.status, 200);
  assert.equal(d.body.verification_url, "https://www.google.com/device");
  assert.equal(d.body.interval, 1);
  const poll = () =>
    postForm(`${s.url}/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: d.body.device_code as string,
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
  const pending = await poll();
  assert.equal(pending.status, 428);
  assert.equal(pending.body.error, "authorization_pending");
  s.slowDownNext(1);
  assert.equal((await poll()).body.error, "slow_down");
  s.approveDevice(d.body.user_code as string);
  const ok = await poll();
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.body.refresh_token, "string");
  assert.equal((await poll()).body.error, "invalid_grant", "a device code is used once");
});

test("[SIM-google-revoke] revoking the refresh token deletes the grant; userinfo then 401; refresh invalid_grant", async () => {
  const s = await sim();
  const { res } = await login(s, { access_type: "offline" });
  const at = res.body.access_token as string;
  const info = await getJson(`${s.url}/v1/userinfo`, { authorization: `Bearer ${at}` });
  assert.equal(info.status, 200);
  assert.equal(info.body.email, "alice@example.com");
  const before = s.grantCount();
  const rv = await fetch(
    `${s.url}/revoke?token=${encodeURIComponent(res.body.refresh_token as string)}`,
    { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" } },
  );
  assert.equal(rv.status, 200);
  assert.equal(s.grantCount(), before - 1);
  assert.equal(s.isActive(at), false);
  assert.equal(
    (await getJson(`${s.url}/v1/userinfo`, { authorization: `Bearer ${at}` })).status,
    401,
  );
  const r = await postForm(`${s.url}/token`, {
    grant_type: "refresh_token",
    refresh_token: res.body.refresh_token as string,
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(r.body.error, "invalid_grant");
  assert.equal((await postForm(`${s.url}/revoke`, { token: "nope" })).status, 400);
});

test("[SIM-google-faults] injected faults, expiry by the simulated clock, 413 for huge bodies", async () => {
  const s = await sim();
  const { res } = await login(s);
  s.advanceTime(3600);
  assert.equal(s.isActive(res.body.access_token as string), false);
  for (const [kind, status] of [
    ["html", 502],
    ["no_token", 200],
    ["rate_limit", 429],
    ["server_error", 500],
  ] as const) {
    s.failNext(kind);
    const r = await postForm(`${s.url}/token`, {
      grant_type: "refresh_token",
      refresh_token: "x",
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
    assert.equal(r.status, status, kind);
    assert.equal(r.body.access_token, undefined);
    if (kind === "rate_limit") assert.ok(r.headers.get("retry-after"));
  }
  const big = await postForm(`${s.url}/token`, { x: "a".repeat(70_000) });
  assert.equal(big.status, 413);
  const malformed = await fetch(`${s.url}/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{",
  });
  assert.equal(malformed.status, 400);
});

test("[SIM-google-device-interval] polling sooner than the interval answers slow_down; an expired code answers expired_token", async () => {
  const s = await sim({ deviceIntervalSeconds: 5 });
  const d = await postForm(`${s.url}/device/code`, { client_id: s.clientId, scope: "email" });
  const poll = () =>
    postForm(`${s.url}/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: d.body.device_code as string,
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
  assert.equal((await poll()).body.error, "authorization_pending");
  assert.equal((await poll()).body.error, "slow_down", "a second poll at once is too fast");
  s.advanceTime(1800);
  assert.equal((await poll()).body.error, "expired_token");
});

test("[SIM-google-code-expiry] an authorization code older than 10 minutes is invalid_grant", async () => {
  const s = await sim();
  const p = pkce();
  const loc = await authorizeAt(s.url, "/o/oauth2/v2/auth", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "email",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  s.advanceTime(601);
  const r = await postForm(`${s.url}/token`, {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code_verifier: p.verifier,
  });
  assert.equal(r.status, 400);
  assert.equal(r.body.error, "invalid_grant");
});
