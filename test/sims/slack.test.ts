/** Checks the Slack simulator itself with raw fetch, so a wrong simulator is caught on its own. */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { type SlackSimulator, startSlackSimulator } from "./slack.ts";

const sims: SlackSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));

async function sim(options: Parameters<typeof startSlackSimulator>[0] = {}) {
  const s = await startSlackSimulator(options);
  sims.push(s);
  return s;
}

const REDIRECT = "http://127.0.0.1:45679/callback";
type Json = Record<string, unknown>;

async function authorize(s: SlackSimulator, extra: Record<string, string> = {}) {
  const url = new URL("/oauth/v2/authorize", s.url);
  const params = {
    client_id: s.clientId,
    user_scope: "identity.basic,identity.email",
    redirect_uri: REDIRECT,
    state: "st-9",
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return fetch(url, { redirect: "manual" });
}

async function codeOf(s: SlackSimulator, extra: Record<string, string> = {}) {
  const res = await authorize(s, extra);
  assert.equal(res.status, 302);
  return new URL(res.headers.get("location")!).searchParams.get("code")!;
}

async function access(
  s: SlackSimulator,
  params: Record<string, string>,
  basic = false,
): Promise<Json> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const all = { ...params };
  if (basic)
    headers.authorization = `Basic ${Buffer.from(`${s.clientId}:${s.clientSecret}`).toString("base64")}`;
  else Object.assign(all, { client_id: s.clientId, client_secret: s.clientSecret }, params);
  const res = await fetch(new URL("/api/oauth.v2.access", s.url), {
    method: "POST",
    headers,
    body: new URLSearchParams(all),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

async function api(
  s: SlackSimulator,
  method: string,
  token: string,
  params: Record<string, string> = {},
): Promise<Json> {
  const res = await fetch(new URL(`/api/${method}`, s.url), {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams(params),
  });
  assert.equal(res.status, 200);
  return (await res.json()) as Json;
}

test("[SIM-slack-user-token] install with user_scope: code and state on the redirect; oauth.v2.access nests the xoxp user token in authed_user (no bot fields); auth.test and users.identity read it", async () => {
  const s = await sim();
  const res = await authorize(s);
  const back = new URL(res.headers.get("location")!);
  assert.equal(back.origin + back.pathname, REDIRECT);
  assert.equal(back.searchParams.get("state"), "st-9");
  const body = await access(
    s,
    { code: back.searchParams.get("code")!, redirect_uri: REDIRECT },
    true,
  );
  assert.equal(body.ok, true);
  assert.equal(body.access_token, undefined);
  assert.equal(body.bot_user_id, undefined);
  assert.equal(body.enterprise, null);
  assert.equal(body.is_enterprise_install, false);
  const user = body.authed_user as Json;
  assert.equal(user.id, "U0SIMALICE");
  assert.equal(user.token_type, "user");
  assert.equal(user.scope, "identity.basic,identity.email");
  assert.match(String(user.access_token), /^xoxp-/);
  assert.equal(user.refresh_token, undefined);
  assert.deepEqual(body.team, { id: "T0SIMTEAM1", name: "Simulated Workspace" });
  assert.equal(s.lastTokenRequest()?.auth, "basic");
  const who = await api(s, "auth.test", String(user.access_token));
  assert.deepEqual(
    { ok: who.ok, user: who.user, user_id: who.user_id, team_id: who.team_id, url: who.url },
    {
      ok: true,
      user: "alice",
      user_id: "U0SIMALICE",
      team_id: "T0SIMTEAM1",
      url: "https://simulated.slack.com/",
    },
  );
  const identity = await api(s, "users.identity", String(user.access_token));
  assert.deepEqual(identity.user, {
    name: "Alice Liddell",
    id: "U0SIMALICE",
    email: "alice@example.com",
  });
  assert.equal((await api(s, "auth.test", "xoxp-unknown")).error, "invalid_auth");
  const none = await (await fetch(new URL("/api/auth.test", s.url), { method: "POST" })).json();
  assert.equal((none as Json).error, "not_authed");
  assert.equal(s.grantCount(), 1);
});

test("[SIM-slack-bot-and-user] bot scope adds top-level xoxb fields beside authed_user", async () => {
  const s = await sim();
  const body = await access(s, {
    code: await codeOf(s, { scope: "chat:write,channels:read" }),
    redirect_uri: REDIRECT,
  });
  assert.match(String(body.access_token), /^xoxb-/);
  assert.equal(body.token_type, "bot");
  assert.equal(body.scope, "chat:write,channels:read");
  assert.equal(body.bot_user_id, "U0SIMBOT01");
  assert.match(String((body.authed_user as Json).access_token), /^xoxp-/);
  assert.equal(s.lastTokenRequest()?.auth, "post");
  assert.equal(s.lastTokenRequest()?.params.client_secret, "[redacted]");
});

test("[SIM-slack-200-error] a wrong code, reused code, redirect mismatch, PKCE mismatch and bad client credentials are HTTP 200 {ok:false}", async () => {
  const s = await sim();
  assert.equal((await access(s, { code: "nope" })).error, "invalid_code");
  const code = await codeOf(s);
  assert.equal((await access(s, { code })).error, "bad_redirect_uri");
  assert.equal((await access(s, { code, client_secret: "wrong" })).error, "bad_client_secret");
  assert.equal((await access(s, { code, client_id: "1.2" })).error, "invalid_client_id");
  assert.equal((await access(s, { code, redirect_uri: REDIRECT })).ok, true);
  assert.equal((await access(s, { code, redirect_uri: REDIRECT })).error, "invalid_code");
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const pkce = await codeOf(s, { code_challenge: challenge, code_challenge_method: "S256" });
  assert.equal(
    (await access(s, { code: pkce, redirect_uri: REDIRECT, code_verifier: "x".repeat(43) })).error,
    "invalid_code",
  );
  const pkce2 = await codeOf(s, { code_challenge: challenge, code_challenge_method: "S256" });
  assert.equal(
    (await access(s, { code: pkce2, redirect_uri: REDIRECT, code_verifier: verifier })).ok,
    true,
  );
  assert.equal((await access(s, { grant_type: "password" })).error, "invalid_grant_type");
  const late = await codeOf(s);
  s.advanceTime(601);
  assert.equal((await access(s, { code: late, redirect_uri: REDIRECT })).error, "invalid_code");
  const unknownMethod = await (await fetch(new URL("/api/nope.nope", s.url))).json();
  assert.equal((unknownMethod as Json).error, "unknown_method");
});

test("[SIM-slack-authorize] any loopback port and sub-paths are accepted; another path stops at an error page; cancel redirects with access_denied", async () => {
  const s = await sim();
  assert.equal(
    (await authorize(s, { redirect_uri: "http://127.0.0.1:1234/callback/x" })).status,
    302,
  );
  const wrong = await authorize(s, { redirect_uri: "http://127.0.0.1:1234/other" });
  assert.equal(wrong.status, 400);
  assert.match(await wrong.text(), /redirect_uri did not match/);
  assert.equal((await authorize(s, { client_id: "nope" })).status, 400);
  assert.equal((await authorize(s, { user_scope: "" })).status, 400);
  s.setBehaviour({ deny: true });
  const denied = new URL((await authorize(s)).headers.get("location")!);
  assert.equal(denied.searchParams.get("error"), "access_denied");
  assert.equal(denied.searchParams.get("state"), "st-9");
  assert.equal(denied.searchParams.get("code"), null);
});

test("[SIM-slack-rotation] token rotation: xoxe.xoxp user token expiring in 43200 s with an xoxe-1 refresh token; refresh is flat and single-use; expiry answers token_expired", async () => {
  const s = await sim({ tokenRotation: true });
  const body = await access(s, { code: await codeOf(s), redirect_uri: REDIRECT });
  const user = body.authed_user as Json;
  assert.match(String(user.access_token), /^xoxe\.xoxp-1-/);
  assert.match(String(user.refresh_token), /^xoxe-1-/);
  assert.equal(user.expires_in, 43200);
  const refreshed = await access(s, {
    grant_type: "refresh_token",
    refresh_token: String(user.refresh_token),
  });
  assert.equal(refreshed.ok, true);
  assert.equal(refreshed.token_type, "user");
  assert.match(String(refreshed.access_token), /^xoxe\.xoxp-1-/);
  assert.match(String(refreshed.refresh_token), /^xoxe-1-/);
  assert.equal(refreshed.expires_in, 43200);
  assert.notEqual(refreshed.refresh_token, user.refresh_token);
  const reuse = await access(s, {
    grant_type: "refresh_token",
    refresh_token: String(user.refresh_token),
  });
  assert.equal(reuse.error, "invalid_refresh_token");
  assert.equal(s.stats().refreshGrants, 2);
  s.advanceTime(43201);
  assert.equal((await api(s, "auth.test", String(refreshed.access_token))).error, "token_expired");
  assert.equal(s.isActive(String(refreshed.access_token)), false);
  const again = await access(s, {
    grant_type: "refresh_token",
    refresh_token: String(refreshed.refresh_token),
  });
  assert.equal(again.ok, true);
  assert.equal((await api(s, "auth.test", String(again.access_token))).ok, true);
});

test("[SIM-slack-revoke] auth.revoke: test=true revokes nothing; a real revoke kills the token, its refresh token and the older tokens of the grant (token_revoked)", async () => {
  const s = await sim({ tokenRotation: true });
  const user = (await access(s, { code: await codeOf(s), redirect_uri: REDIRECT }))
    .authed_user as Json;
  const next = await access(s, {
    grant_type: "refresh_token",
    refresh_token: String(user.refresh_token),
  });
  assert.deepEqual(await api(s, "auth.revoke", String(next.access_token), { test: "true" }), {
    ok: true,
    revoked: false,
  });
  assert.equal(s.isActive(String(next.access_token)), true);
  assert.deepEqual(await api(s, "auth.revoke", String(next.access_token)), {
    ok: true,
    revoked: true,
  });
  assert.equal(s.isActive(String(next.access_token)), false);
  assert.equal(s.isActive(String(user.access_token)), false);
  assert.equal(s.grantCount(), 0);
  assert.equal((await api(s, "auth.test", String(next.access_token))).error, "token_revoked");
  const afterRevoke = await access(s, {
    grant_type: "refresh_token",
    refresh_token: String(next.refresh_token),
  });
  assert.equal(afterRevoke.error, "invalid_refresh_token");
  // The token as a form argument works too.
  const other = (await access(s, { code: await codeOf(s), redirect_uri: REDIRECT }))
    .authed_user as Json;
  const res = await fetch(new URL("/api/auth.revoke", s.url), {
    method: "POST",
    body: new URLSearchParams({ token: String(other.access_token) }),
  });
  assert.deepEqual(await res.json(), { ok: true, revoked: true });
  assert.equal(s.stats().revocations, 2);
});

test("[SIM-slack-faults] injected 429 with Retry-After, HTML (503 and 200), 200 without a token, 500; oversized bodies get 413", async () => {
  const s = await sim({ retryAfterSeconds: 7 });
  s.failNext("rate_limit");
  s.failNext("html");
  s.failNext("html200");
  s.failNext("no_token");
  s.failNext("server_error");
  const call = () =>
    fetch(new URL("/api/oauth.v2.access", s.url), {
      method: "POST",
      body: new URLSearchParams({ code: "x" }),
    });
  const limited = await call();
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("retry-after"), "7");
  assert.equal(((await limited.json()) as Json).error, "ratelimited");
  const html = await call();
  assert.equal(html.status, 503);
  assert.match(html.headers.get("content-type")!, /text\/html/);
  await html.text();
  const html200 = await call();
  assert.equal(html200.status, 200);
  assert.match(await html200.text(), /<html>/);
  const noToken = (await (await call()).json()) as Json;
  assert.equal(noToken.ok, true);
  assert.equal(noToken.authed_user, undefined);
  assert.equal((await call()).status, 500);
  assert.equal(((await (await call()).json()) as Json).error, "invalid_client_id");
  s.failAccountNext("rate_limit");
  const account = await fetch(new URL("/api/auth.test", s.url), { method: "POST" });
  assert.equal(account.status, 429);
  const big = await fetch(new URL("/api/oauth.v2.access", s.url), {
    method: "POST",
    body: "x".repeat(70_000),
  });
  assert.equal(big.status, 413);
  const garbage = await fetch(new URL("/api/oauth.v2.access", s.url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{]",
  });
  assert.equal(((await garbage.json()) as Json).error, "invalid_client_id");
});
