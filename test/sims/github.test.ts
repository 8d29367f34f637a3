/** Checks the GitHub simulator itself with raw fetch, so a wrong simulator is caught on its own. */

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, test } from "node:test";
import { type GitHubSimulator, startGitHubSimulator } from "./github.ts";

const sims: GitHubSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));

async function sim(options: Parameters<typeof startGitHubSimulator>[0] = {}) {
  const s = await startGitHubSimulator(options);
  sims.push(s);
  return s;
}

const REDIRECT = "http://127.0.0.1:45678/callback";

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

async function authorize(s: GitHubSimulator, extra: Record<string, string> = {}) {
  const url = new URL("/login/oauth/authorize", s.url);
  const params = {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    state: "st-1",
    scope: "repo gist",
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const res = await fetch(url, { redirect: "manual" });
  assert.equal(res.status, 302);
  return new URL(res.headers.get("location")!);
}

function post(
  s: GitHubSimulator,
  path: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
) {
  return fetch(new URL(path, s.url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params),
  });
}

const JSON_ACCEPT = { accept: "application/json" };

test("[SIM-github-web-flow] authorize redirects with code and state (no iss); the exchange answers form-encoded, or JSON when asked; /user and /api/v3/user read the account", async () => {
  const s = await sim();
  const { verifier, challenge } = pkce();
  const back = await authorize(s, { code_challenge: challenge, code_challenge_method: "S256" });
  assert.equal(back.origin + back.pathname, REDIRECT);
  assert.equal(back.searchParams.get("state"), "st-1");
  assert.equal(back.searchParams.get("iss"), null);
  const code = back.searchParams.get("code")!;
  const res = await post(s, "/login/oauth/access_token", {
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type")!, /application\/x-www-form-urlencoded/);
  const form = new URLSearchParams(await res.text());
  assert.match(form.get("access_token")!, /^gho_[A-Za-z0-9]{36}$/);
  assert.equal(form.get("scope"), "repo,gist");
  assert.equal(form.get("token_type"), "bearer");
  assert.equal(form.get("refresh_token"), null);
  const token = form.get("access_token")!;
  for (const path of ["/user", "/api/v3/user"]) {
    const user = await fetch(new URL(path, s.url), {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(user.status, 200);
    assert.equal(user.headers.get("x-ratelimit-limit"), "5000");
    assert.equal(user.headers.get("x-oauth-scopes"), "repo, gist");
    const body = (await user.json()) as { login: string; email: string };
    assert.equal(body.login, "alice");
    assert.equal(body.email, "alice@example.com");
  }
  const legacy = await fetch(new URL("/user", s.url), {
    headers: { authorization: `token ${token}` },
  });
  assert.equal(legacy.status, 200);
  const bad = await fetch(new URL("/user", s.url), {
    headers: { authorization: "Bearer gho_nope" },
  });
  assert.equal(bad.status, 401);
  assert.equal(((await bad.json()) as { message: string }).message, "Bad credentials");
  assert.equal(s.lastTokenRequest()?.auth, "post");
  assert.equal(s.lastTokenRequest()?.params.code_verifier, "[redacted]");
  assert.equal(s.lastTokenRequest()?.params.client_secret, "[redacted]");
  assert.equal(s.stats().codeExchanges, 1);
  assert.equal(s.grantCount(), 1);
  assert.ok(s.isActive(token));

  // JSON on request, and HTTP Basic client authentication is recorded as such.
  const again = await authorize(s);
  const basic = `Basic ${Buffer.from(`${s.clientId}:${s.clientSecret}`).toString("base64")}`;
  const json = await post(
    s,
    "/login/oauth/access_token",
    {
      grant_type: "authorization_code",
      code: again.searchParams.get("code")!,
      redirect_uri: REDIRECT,
    },
    { ...JSON_ACCEPT, authorization: basic },
  );
  assert.match(json.headers.get("content-type")!, /application\/json/);
  assert.match(((await json.json()) as { access_token: string }).access_token, /^gho_/);
  assert.equal(s.lastTokenRequest()?.auth, "basic");
});

test("[SIM-github-200-error] PKCE mismatch, code reuse, a wrong secret and an unknown grant answer HTTP 200 with an error field", async () => {
  const s = await sim();
  const { challenge } = pkce();
  const code = (
    await authorize(s, { code_challenge: challenge, code_challenge_method: "S256" })
  ).searchParams.get("code")!;
  const exchange = (params: Record<string, string>) =>
    post(
      s,
      "/login/oauth/access_token",
      { client_id: s.clientId, client_secret: s.clientSecret, ...params },
      JSON_ACCEPT,
    );
  const wrong = await exchange({ code, code_verifier: pkce().verifier });
  assert.equal(wrong.status, 200);
  assert.equal(((await wrong.json()) as { error: string }).error, "bad_verification_code");
  const plain = (await authorize(s)).searchParams.get("code")!;
  assert.ok(
    ((await (await exchange({ code: plain })).json()) as { access_token?: string }).access_token,
  );
  assert.equal(
    ((await (await exchange({ code: plain })).json()) as { error: string }).error,
    "bad_verification_code",
  );
  const code3 = (await authorize(s)).searchParams.get("code")!;
  const badSecret = await exchange({ code: code3, client_secret: "nope" });
  assert.equal(
    ((await badSecret.json()) as { error: string }).error,
    "incorrect_client_credentials",
  );
  const mismatch = await exchange({ code: code3, redirect_uri: "http://127.0.0.1:1/other" });
  assert.equal(((await mismatch.json()) as { error: string }).error, "redirect_uri_mismatch");
  const grant = await exchange({ grant_type: "password" });
  assert.equal(((await grant.json()) as { error: string }).error, "unsupported_grant_type");
  const form = await post(s, "/login/oauth/access_token", { client_id: s.clientId, code: "x" });
  assert.equal(new URLSearchParams(await form.text()).get("error"), "incorrect_client_credentials");
  // Expiry after 10 minutes.
  const late = (await authorize(s)).searchParams.get("code")!;
  s.advanceTime(601);
  assert.equal(
    ((await (await exchange({ code: late })).json()) as { error: string }).error,
    "bad_verification_code",
  );
});

test("[SIM-github-redirect-rules] a loopback callback accepts any port and sub-paths; another path goes back to the callback URL with redirect_uri_mismatch; deny gives access_denied", async () => {
  const s = await sim();
  const sub = await authorize(s, { redirect_uri: "http://127.0.0.1:9999/callback/deeper" });
  assert.ok(sub.searchParams.get("code"));
  const other = await authorize(s, { redirect_uri: "http://127.0.0.1:9999/elsewhere" });
  assert.equal(other.toString().startsWith("http://127.0.0.1/callback?"), true);
  assert.equal(other.searchParams.get("error"), "redirect_uri_mismatch");
  const unknown = await fetch(new URL(`/login/oauth/authorize?client_id=nope`, s.url), {
    redirect: "manual",
  });
  assert.equal(unknown.status, 404);
  s.setBehaviour({ deny: true });
  const denied = await authorize(s);
  assert.equal(denied.searchParams.get("error"), "access_denied");
  assert.equal(denied.searchParams.get("state"), "st-1");
  assert.equal(denied.searchParams.get("code"), null);
});

test("[SIM-github-device] device code, authorization_pending, slow_down (+5 s, new interval), too-fast polling, approval, denial", async () => {
  const s = await sim({ deviceIntervalSeconds: 1, publicHost: "https://github.com" });
  const start = await post(
    s,
    "/login/device/code",
    { client_id: s.clientId, scope: "repo" },
    JSON_ACCEPT,
  );
  const device = (await start.json()) as Record<string, string | number>;
  assert.equal(device.verification_uri, "https://github.com/login/device");
  assert.equal(device.expires_in, 900);
  assert.equal(device.interval, 1);
  assert.match(String(device.user_code), /^[A-Z]{4}-[A-Z]{4}$/);
  const poll = async () =>
    (await (
      await post(
        s,
        "/login/oauth/access_token",
        {
          client_id: s.clientId,
          device_code: String(device.device_code),
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        },
        JSON_ACCEPT,
      )
    ).json()) as Record<string, string | number>;
  assert.equal((await poll()).error, "authorization_pending");
  s.advanceTime(1);
  s.slowDownNext();
  const slow = await poll();
  assert.equal(slow.error, "slow_down");
  assert.equal(slow.interval, 6);
  // Polling again at once (no time passed on the simulator's clock) is too fast: slow_down again, interval 11.
  const tooFast = await poll();
  assert.equal(tooFast.error, "slow_down");
  assert.equal(tooFast.interval, 11);
  s.advanceTime(11);
  s.approveDevice(String(device.user_code));
  const token = await poll();
  assert.match(String(token.access_token), /^gho_/);
  assert.equal(token.scope, "repo");
  assert.equal(s.lastTokenRequest()?.auth, "none");
  s.advanceTime(11);
  assert.equal((await poll()).error, "incorrect_device_code");

  const second = (await (
    await post(s, "/login/device/code", { client_id: s.clientId }, JSON_ACCEPT)
  ).json()) as Record<string, string>;
  s.denyDevice(second.user_code!);
  const denied = await post(s, "/login/oauth/access_token", {
    client_id: s.clientId,
    device_code: second.device_code!,
    grant_type: "urn:ietf:params:oauth:grant-type:device_code",
  });
  assert.equal(new URLSearchParams(await denied.text()).get("error"), "access_denied");
  const third = (await (
    await post(s, "/login/device/code", { client_id: s.clientId }, JSON_ACCEPT)
  ).json()) as Record<string, string>;
  s.advanceTime(901);
  const expired = await post(
    s,
    "/login/oauth/access_token",
    {
      client_id: s.clientId,
      device_code: third.device_code!,
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
    },
    JSON_ACCEPT,
  );
  assert.equal(((await expired.json()) as { error: string }).error, "expired_token");
  s.setBehaviour({ deviceFlowEnabled: false });
  const off = await post(s, "/login/device/code", { client_id: s.clientId }, JSON_ACCEPT);
  assert.equal(((await off.json()) as { error: string }).error, "device_flow_disabled");
  assert.equal(s.stats().devicePolls, 7);
});

test("[SIM-github-app-refresh] GitHub App: ghu_ token expiring in 8 h with a single-use ghr_ refresh token; refresh needs the secret; the old pair dies", async () => {
  const s = await sim({ appKind: "github_app" });
  const code = (await authorize(s)).searchParams.get("code")!;
  const first = (await (
    await post(
      s,
      "/login/oauth/access_token",
      { client_id: s.clientId, client_secret: s.clientSecret, code },
      JSON_ACCEPT,
    )
  ).json()) as Record<string, string | number>;
  assert.match(String(first.access_token), /^ghu_/);
  assert.match(String(first.refresh_token), /^ghr_/);
  assert.equal(first.expires_in, 28800);
  assert.equal(first.refresh_token_expires_in, 15897600);
  assert.equal(first.scope, "");
  const refresh = (params: Record<string, string>) =>
    post(
      s,
      "/login/oauth/access_token",
      { client_id: s.clientId, grant_type: "refresh_token", ...params },
      JSON_ACCEPT,
    ).then((r) => r.json() as Promise<Record<string, string | number>>);
  assert.equal(
    (await refresh({ refresh_token: String(first.refresh_token) })).error,
    "incorrect_client_credentials",
  );
  const second = await refresh({
    refresh_token: String(first.refresh_token),
    client_secret: s.clientSecret,
  });
  assert.match(String(second.access_token), /^ghu_/);
  assert.notEqual(second.refresh_token, first.refresh_token);
  assert.equal(s.isActive(String(first.access_token)), false);
  assert.equal(s.isActive(String(second.access_token)), true);
  const reuse = await refresh({
    refresh_token: String(first.refresh_token),
    client_secret: s.clientSecret,
  });
  assert.equal(reuse.error, "bad_refresh_token");
  assert.equal(s.stats().refreshGrants, 3);
  s.advanceTime(28801);
  assert.equal(s.isActive(String(second.access_token)), false);
  const user = await fetch(new URL("/api/v3/user", s.url), {
    headers: { authorization: `Bearer ${second.access_token}` },
  });
  assert.equal(user.status, 401);
  // The refresh token outlives the access token.
  const third = await refresh({
    refresh_token: String(second.refresh_token),
    client_secret: s.clientSecret,
  });
  assert.match(String(third.access_token), /^ghu_/);
});

test("[SIM-github-revoke] DELETE /applications/{id}/grant and /token: Basic auth required, 422 for a bad body, 404 for an unknown token, 204 deletes the grant or the token", async () => {
  const s = await sim();
  const tokenFor = async () => {
    const code = (await authorize(s)).searchParams.get("code")!;
    const res = await post(
      s,
      "/login/oauth/access_token",
      { client_id: s.clientId, client_secret: s.clientSecret, code },
      JSON_ACCEPT,
    );
    return ((await res.json()) as { access_token: string }).access_token;
  };
  const [a, b, c] = [await tokenFor(), await tokenFor(), await tokenFor()];
  const basic = `Basic ${Buffer.from(`${s.clientId}:${s.clientSecret}`).toString("base64")}`;
  const del = (path: string, body: string, authorization?: string) =>
    fetch(new URL(path, s.url), {
      method: "DELETE",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body,
    });
  const body = (token: string) => JSON.stringify({ access_token: token });
  assert.equal((await del(`/applications/${s.clientId}/token`, body(a))).status, 401);
  const wrongSecret = `Basic ${Buffer.from(`${s.clientId}:nope`).toString("base64")}`;
  assert.equal((await del(`/applications/${s.clientId}/token`, body(a), wrongSecret)).status, 401);
  assert.equal((await del(`/applications/${s.clientId}/token`, "{not json", basic)).status, 422);
  assert.equal(
    (await del(`/applications/${s.clientId}/token`, body("gho_unknown"), basic)).status,
    404,
  );
  assert.equal((await del(`/api/v3/applications/${s.clientId}/token`, body(a), basic)).status, 204);
  assert.equal(s.isActive(a), false);
  assert.equal(s.isActive(b), true);
  assert.equal(s.grantCount(), 1);
  assert.equal((await del(`/applications/${s.clientId}/grant`, body(b), basic)).status, 204);
  assert.equal(s.isActive(c), false);
  assert.equal(s.grantCount(), 0);
  assert.equal(s.stats().revocations, 2);
});

test("[SIM-github-faults] injected HTML (502 and 200), 200 without a token, rate limit (403, x-ratelimit-remaining 0), 500; oversized bodies get 413", async () => {
  const s = await sim();
  s.failNext("html");
  s.failNext("html200");
  s.failNext("no_token");
  s.failNext("rate_limit");
  s.failNext("server_error");
  const tokenCall = () =>
    post(s, "/login/oauth/access_token", { client_id: s.clientId }, JSON_ACCEPT);
  const html = await tokenCall();
  assert.equal(html.status, 502);
  assert.match(html.headers.get("content-type")!, /text\/html/);
  assert.match(await html.text(), /Unicorn!/);
  const html200 = await tokenCall();
  assert.equal(html200.status, 200);
  assert.match(await html200.text(), /Unicorn!/);
  const noToken = await tokenCall();
  assert.equal(noToken.status, 200);
  assert.equal(((await noToken.json()) as { access_token?: string }).access_token, undefined);
  const limited = await tokenCall();
  assert.equal(limited.status, 403);
  assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
  assert.match(limited.headers.get("x-ratelimit-reset")!, /^\d+$/);
  assert.match(((await limited.json()) as { message: string }).message, /rate limit exceeded/);
  assert.equal((await tokenCall()).status, 500);
  assert.equal(
    ((await (await tokenCall()).json()) as { error: string }).error,
    "incorrect_client_credentials",
  );
  s.failAccountNext("rate_limit");
  const account = await fetch(new URL("/user", s.url), { headers: { authorization: "Bearer x" } });
  assert.equal(account.status, 403);
  assert.equal(account.headers.get("x-ratelimit-remaining"), "0");
  assert.equal(s.stats().accountCalls, 1);
  const big = await post(s, "/login/oauth/access_token", {
    client_id: s.clientId,
    pad: "x".repeat(70_000),
  });
  assert.equal(big.status, 413);
  const garbage = await fetch(new URL("/login/oauth/access_token", s.url), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{]",
  });
  assert.equal(garbage.status, 200);
  assert.equal(
    new URLSearchParams(await garbage.text()).get("error"),
    "incorrect_client_credentials",
  );
});

test("[SIM-github-device-page] POST /login/device with the user code plays the person approving as approveAs; an unknown code is refused", async () => {
  const s = await sim({ deviceIntervalSeconds: 1 });
  const device = (await (
    await post(s, "/login/device/code", { client_id: s.clientId }, JSON_ACCEPT)
  ).json()) as Record<string, string>;
  assert.equal(device.verification_uri, `${s.url}/login/device`);
  const page = await post(s, "/login/device", { user_code: device.user_code!.toLowerCase() });
  assert.equal(page.status, 200);
  assert.equal((await post(s, "/login/device", { user_code: "NOPE-NOPE" })).status, 422);
  const token = (await (
    await post(
      s,
      "/login/oauth/access_token",
      {
        client_id: s.clientId,
        device_code: device.device_code!,
        grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      },
      JSON_ACCEPT,
    )
  ).json()) as Record<string, string>;
  assert.match(token.access_token!, /^gho_/);
});
