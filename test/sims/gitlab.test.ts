/** Checks the GitLab simulator itself with raw fetch (discovery on its own host, PKCE, 7200 s tokens with created_at, Doorkeeper rotation, device flow, RFC 7009 revoke, /api/v4/user), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type GitLabSimulator,
  type GitLabSimulatorOptions,
  startGitLabSimulator,
} from "./gitlab.ts";
import { authorizeAt, getJson, pkce, postForm, REDIRECT, verifyJwt } from "./sim-test-b.ts";

const sims: GitLabSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: GitLabSimulatorOptions = {}) {
  const s = await startGitLabSimulator(options);
  sims.push(s);
  return s;
}

async function login(
  s: GitLabSimulator,
  scope = "read_user openid",
  extra: Record<string, string> = {},
) {
  const p = pkce();
  const loc = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope,
    state: "st",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    ...extra,
  });
  assert.equal(loc.searchParams.get("state"), "st");
  return postForm(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code_verifier: p.verifier,
  });
}

test("[SIM-gitlab-discovery] discovery and ID tokens name the instance's own origin (self-managed host)", async () => {
  const s = await sim();
  const d = await getJson(`${s.url}/.well-known/openid-configuration`);
  assert.equal(d.body.issuer, s.url);
  assert.equal(d.body.token_endpoint, `${s.url}/oauth/token`);
  assert.equal(d.body.revocation_endpoint, `${s.url}/oauth/revoke`);
  assert.deepEqual(d.body.code_challenge_methods_supported, ["plain", "S256"]);
  const t = await login(s, "read_user openid", { nonce: "n-9" });
  assert.equal(t.status, 200);
  assert.equal(t.body.expires_in, 7200);
  assert.equal(typeof t.body.created_at, "number");
  assert.equal(typeof t.body.refresh_token, "string");
  const keys = await getJson(`${s.url}/oauth/discovery/keys`);
  const claims = verifyJwt(
    t.body.id_token as string,
    keys.body as { keys: Record<string, unknown>[] },
  );
  assert.equal(claims.iss, s.url);
  assert.equal(claims.aud, s.clientId);
  assert.equal(claims.nonce, "n-9");
});

test("[SIM-gitlab-rotation] a refresh returns a new pair; the old refresh and access tokens stop working", async () => {
  const s = await sim();
  const t = await login(s);
  const refresh = (rt: unknown) =>
    postForm(`${s.url}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: String(rt),
      client_id: s.clientId,
      client_secret: s.clientSecret,
      redirect_uri: REDIRECT,
    });
  const r = await refresh(t.body.refresh_token);
  assert.equal(r.status, 200);
  assert.notEqual(r.body.refresh_token, t.body.refresh_token);
  assert.equal(s.isActive(t.body.access_token as string), false);
  assert.equal(s.isActive(r.body.access_token as string), true);
  const reuse = await refresh(t.body.refresh_token);
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, "invalid_grant");
  assert.match(String(reuse.body.error_description), /invalid, expired, revoked/);
});

test("[SIM-gitlab-pkce] PKCE verifier, single-use code, client secret for confidential apps", async () => {
  const s = await sim();
  const p = pkce();
  const loc = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: "http://127.0.0.1:5999/callback",
    response_type: "code",
    scope: "api",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  const base = {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: "http://127.0.0.1:5999/callback",
    client_id: s.clientId,
  };
  assert.equal(
    (await postForm(`${s.url}/oauth/token`, { ...base, code_verifier: p.verifier })).status,
    401,
  );
  const bad = await postForm(`${s.url}/oauth/token`, {
    ...base,
    client_secret: s.clientSecret,
    code_verifier: pkce().verifier,
  });
  assert.equal(bad.body.error, "invalid_grant");
  const scope = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "sudo",
    state: "q",
  });
  assert.equal(scope.searchParams.get("error"), "invalid_scope");
  s.deny = true;
  const denied = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "api",
  });
  assert.equal(denied.searchParams.get("error"), "access_denied");
  const other = await fetch(
    `${s.url}/oauth/authorize?client_id=${s.clientId}&response_type=code&redirect_uri=${encodeURIComponent("https://evil.example/cb")}`,
    { redirect: "manual" },
  );
  assert.equal(other.status, 400);
});

test("[SIM-gitlab-device] /oauth/authorize_device on the instance host; pending, slow_down, approval", async () => {
  const s = await sim({ deviceIntervalSeconds: 1, enforceDeviceInterval: false });
  const d = await postForm(`${s.url}/oauth/authorize_device`, {
    client_id: s.clientId,
    scope: "read_user",
  });
  assert.equal(d.status, 200);
  assert.equal(d.body.verification_uri, `${s.url}/oauth/device`);
  assert.match(String(d.body.verification_uri_complete), /user_code=/);
  const poll = () =>
    postForm(`${s.url}/oauth/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: String(d.body.device_code),
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
  assert.equal((await poll()).body.error, "authorization_pending");
  s.slowDownNext(1);
  assert.equal((await poll()).body.error, "slow_down");
  s.approveDevice(String(d.body.user_code));
  const ok = await poll();
  assert.equal(ok.status, 200);
  assert.equal(s.stats().devicePolls, 3);
});

test("[SIM-gitlab-revoke] RFC 7009 revoke deletes the grant; /api/v4/user then 401", async () => {
  const s = await sim();
  const t = await login(s, "read_user");
  const me = await getJson(`${s.url}/api/v4/user`, {
    authorization: `Bearer ${t.body.access_token}`,
  });
  assert.equal(me.status, 200);
  assert.equal(me.body.username, "alice");
  assert.equal(me.body.email, "alice@example.com");
  assert.equal(
    (await getJson(`${s.url}/oauth/userinfo`, { authorization: `Bearer ${t.body.access_token}` }))
      .status,
    403,
  );
  const rv = await postForm(`${s.url}/oauth/revoke`, {
    token: String(t.body.refresh_token),
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(rv.status, 200);
  assert.equal(s.grantCount(), 0);
  assert.equal(s.stats().revocations, 1);
  const after = await getJson(`${s.url}/api/v4/user`, {
    authorization: `Bearer ${t.body.access_token}`,
  });
  assert.equal(after.status, 401);
  assert.equal(
    (
      await postForm(`${s.url}/oauth/revoke`, {
        token: "unknown",
        client_id: s.clientId,
        client_secret: s.clientSecret,
      })
    ).status,
    200,
  );
});

test("[SIM-gitlab-faults] rate limit 429 Retry later with headers, HTML 502, 200 without a token", async () => {
  const s = await sim();
  s.failNext("rate_limit");
  const r = await postForm(`${s.url}/oauth/token`, {
    grant_type: "refresh_token",
    refresh_token: "x",
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(r.status, 429);
  assert.equal(r.headers.get("ratelimit-remaining"), "0");
  assert.ok(r.headers.get("retry-after"));
  s.failNext("html");
  const h = await postForm(`${s.url}/oauth/token`, {});
  assert.equal(h.status, 502);
  assert.match(h.headers.get("content-type") ?? "", /text\/html/);
  s.failNext("no_token");
  const n = await postForm(`${s.url}/oauth/token`, {});
  assert.equal(n.status, 200);
  assert.equal(n.body.access_token, undefined);
  assert.equal(s.lastTokenRequest()?.grantType, undefined);
});
