/** Checks the Microsoft Entra ID simulator itself with raw fetch (tenant discovery and the issuer template, offline_access, rotating refresh tokens, PKCE, AADSTS errors, device flow, Graph), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type MicrosoftSimulator,
  type MicrosoftSimulatorOptions,
  startMicrosoftSimulator,
} from "./microsoft.ts";
import { authorizeAt, getJson, pkce, postForm, REDIRECT, verifyJwt } from "./sim-test-b.ts";

const TID = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const sims: MicrosoftSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: MicrosoftSimulatorOptions = {}) {
  const s = await startMicrosoftSimulator(options);
  sims.push(s);
  return s;
}

async function login(
  s: MicrosoftSimulator,
  scope: string,
  tenant = "common",
  extra: Record<string, string> = {},
) {
  const p = pkce();
  const loc = await authorizeAt(s.url, `/${tenant}/oauth2/v2.0/authorize`, {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope,
    state: "st",
    nonce: "n-1",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    ...extra,
  });
  assert.equal(loc.searchParams.get("state"), "st");
  return postForm(`${s.url}/${tenant}/oauth2/v2.0/token`, {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    code_verifier: p.verifier,
  });
}

test("[SIM-microsoft-discovery] tenant discovery: issuer template for common/organizations, MSA tenant for consumers, no PKCE field", async () => {
  const s = await sim();
  const common = await getJson(`${s.url}/common/v2.0/.well-known/openid-configuration`);
  assert.equal(common.body.issuer, "https://login.microsoftonline.com/{tenantid}/v2.0");
  assert.equal(
    common.body.token_endpoint,
    "https://login.microsoftonline.com/common/oauth2/v2.0/token",
  );
  assert.equal(common.body.code_challenge_methods_supported, undefined);
  const orgs = await getJson(`${s.url}/organizations/v2.0/.well-known/openid-configuration`);
  assert.equal(orgs.body.issuer, "https://login.microsoftonline.com/{tenantid}/v2.0");
  const consumers = await getJson(`${s.url}/consumers/v2.0/.well-known/openid-configuration`);
  assert.equal(
    consumers.body.issuer,
    "https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0",
  );
  const tenant = await getJson(`${s.url}/${TID}/v2.0/.well-known/openid-configuration`);
  assert.equal(tenant.body.issuer, `https://login.microsoftonline.com/${TID}/v2.0`);
  const unknown = await getJson(`${s.url}/contoso-nope/v2.0/.well-known/openid-configuration`);
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error, "invalid_tenant");
  assert.match(String(unknown.body.error_description), /^AADSTS90002: /);
});

test("[SIM-microsoft-offline] refresh token only with offline_access; ID token iss carries the user's tid", async () => {
  const s = await sim();
  const online = await login(s, "openid profile User.Read");
  assert.equal(online.status, 200);
  assert.equal(online.body.refresh_token, undefined);
  const claims = verifyJwt(online.body.id_token as string, s.jwks());
  assert.equal(claims.iss, `https://login.microsoftonline.com/${TID}/v2.0`);
  assert.equal(claims.tid, TID);
  assert.equal(claims.aud, s.clientId);
  assert.equal(claims.nonce, "n-1");
  assert.equal(claims.preferred_username, "alice@contoso.onmicrosoft.com");
  assert.ok(claims.oid);
  const offline = await login(s, "openid offline_access User.Read");
  assert.equal(typeof offline.body.refresh_token, "string");
  assert.equal(offline.body.expires_in, 3599);
  assert.equal(typeof offline.body.ext_expires_in, "number");
});

test("[SIM-microsoft-rotation] each refresh returns a new refresh token; the old one stays valid until it expires", async () => {
  const s = await sim({ refreshTokenTtlSeconds: 1000 });
  const first = await login(s, "offline_access User.Read");
  const rt1 = first.body.refresh_token as string;
  const refresh = (rt: string) =>
    postForm(`${s.url}/common/oauth2/v2.0/token`, {
      grant_type: "refresh_token",
      refresh_token: rt,
      client_id: s.clientId,
      scope: "offline_access User.Read",
    });
  const r2 = await refresh(rt1);
  assert.equal(r2.status, 200);
  const rt2 = r2.body.refresh_token as string;
  assert.notEqual(rt2, rt1);
  assert.equal(
    s.isRefreshTokenActive(rt1),
    true,
    "Microsoft does not revoke the old refresh token",
  );
  assert.equal((await refresh(rt1)).status, 200);
  s.advanceTime(1001);
  const expired = await refresh(rt1);
  assert.equal(expired.status, 400);
  assert.equal(expired.body.error, "invalid_grant");
  assert.deepEqual(expired.body.error_codes, [700082]);
  assert.ok(expired.body.trace_id && expired.body.correlation_id);
});

test("[SIM-microsoft-errors] PKCE mismatch, code reuse, wrong secret for confidential clients: AADSTS errors", async () => {
  const s = await sim({ clientType: "confidential" });
  const p = pkce();
  const loc = await authorizeAt(s.url, "/common/oauth2/v2.0/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "User.Read",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  const code = loc.searchParams.get("code")!;
  const base = {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
  };
  const noSecret = await postForm(`${s.url}/common/oauth2/v2.0/token`, {
    ...base,
    code_verifier: p.verifier,
  });
  assert.equal(noSecret.status, 401);
  assert.deepEqual(noSecret.body.error_codes, [7000218]);
  const badPkce = await postForm(`${s.url}/common/oauth2/v2.0/token`, {
    ...base,
    client_secret: s.clientSecret,
    code_verifier: pkce().verifier,
  });
  assert.equal(badPkce.body.error, "invalid_grant");
  assert.deepEqual(badPkce.body.error_codes, [50148]);
  const reused = await postForm(`${s.url}/common/oauth2/v2.0/token`, {
    ...base,
    client_secret: s.clientSecret,
    code_verifier: p.verifier,
  });
  assert.deepEqual(reused.body.error_codes, [54005]);
  s.deny = true;
  const denied = await authorizeAt(s.url, "/common/oauth2/v2.0/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "User.Read",
    state: "z",
  });
  assert.equal(denied.searchParams.get("error"), "access_denied");
  assert.equal(denied.searchParams.get("state"), "z");
  const mismatch = await fetch(
    `${s.url}/common/oauth2/v2.0/authorize?client_id=${s.clientId}&response_type=code&scope=x&redirect_uri=${encodeURIComponent("http://127.0.0.1:1/other")}`,
    { redirect: "manual" },
  );
  assert.equal(mismatch.status, 400);
});

test("[SIM-microsoft-device] device code flow: message, pending, authorization_declined, approval", async () => {
  const s = await sim({ deviceIntervalSeconds: 1, enforceDeviceInterval: false });
  const start = () =>
    postForm(`${s.url}/organizations/oauth2/v2.0/devicecode`, {
      client_id: s.clientId,
      scope: "openid offline_access User.Read",
    });
  const d = await start();
  assert.equal(d.body.verification_uri, "https://microsoft.com/devicelogin");
  assert.match(String(d.body.message), /microsoft\.com\/devicelogin/);
  const poll = (dc: unknown) =>
    postForm(`${s.url}/organizations/oauth2/v2.0/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      client_id: s.clientId,
      device_code: String(dc),
    });
  const pending = await poll(d.body.device_code);
  assert.equal(pending.status, 400);
  assert.equal(pending.body.error, "authorization_pending");
  s.approveDevice(d.body.user_code as string);
  const ok = await poll(d.body.device_code);
  assert.equal(ok.status, 200);
  assert.equal(typeof ok.body.refresh_token, "string");
  const d2 = await start();
  s.denyDevice(d2.body.user_code as string);
  assert.equal((await poll(d2.body.device_code)).body.error, "authorization_declined");
});

test("[SIM-microsoft-graph] Graph /me with a live token, 401 in Graph's shape otherwise; revokeSignInSessions deletes the grants", async () => {
  const s = await sim();
  const t = await login(s, "offline_access User.Read");
  const me = await getJson(`${s.url}/v1.0/me`, { authorization: `Bearer ${t.body.access_token}` });
  assert.equal(me.status, 200);
  assert.equal(me.body.userPrincipalName, "alice@contoso.onmicrosoft.com");
  assert.equal(me.body.mail, "alice@contoso.com");
  const bad = await getJson(`${s.url}/v1.0/me`, { authorization: "Bearer nope" });
  assert.equal(bad.status, 401);
  assert.equal((bad.body.error as { code: string }).code, "InvalidAuthenticationToken");
  assert.equal(s.grantCount(), 1);
  const rv = await fetch(`${s.url}/v1.0/me/revokeSignInSessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${t.body.access_token}` },
  });
  assert.equal(rv.status, 200);
  assert.equal(s.grantCount(), 0);
  const r = await postForm(`${s.url}/common/oauth2/v2.0/token`, {
    grant_type: "refresh_token",
    refresh_token: t.body.refresh_token as string,
    client_id: s.clientId,
  });
  assert.equal(r.body.error, "invalid_grant");
  s.failNext("rate_limit");
  const limited = await postForm(`${s.url}/common/oauth2/v2.0/token`, {
    grant_type: "refresh_token",
    refresh_token: "x",
    client_id: s.clientId,
  });
  assert.equal(limited.status, 429);
  assert.ok(limited.headers.get("retry-after"));
});

test("[SIM-microsoft-resource-refused] Entra v2.0 refuses RFC 8707 resource with AADSTS901002 on authorize, token and devicecode", async () => {
  const s = await sim();
  const p = pkce();
  const loc = await authorizeAt(s.url, "/common/oauth2/v2.0/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "openid",
    state: "st",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    resource: "https://mcp.example.com",
  });
  assert.equal(loc.searchParams.get("error"), "invalid_request");
  assert.match(String(loc.searchParams.get("error_description")), /^AADSTS901002: /);
  for (const path of ["token", "devicecode"]) {
    const answer = await postForm(`${s.url}/common/oauth2/v2.0/${path}`, {
      client_id: s.clientId,
      grant_type: "refresh_token",
      refresh_token: "x",
      scope: "openid",
      resource: "https://mcp.example.com",
    });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.error, "invalid_request");
    assert.match(String(answer.body.error_description), /^AADSTS901002: /);
  }
});
