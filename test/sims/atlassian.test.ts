/** Checks the Atlassian 3LO simulator itself with raw fetch (audience, JSON token body, offline_access, rotation with the reuse leeway and expiry, /me and accessible-resources, errors), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type AtlassianSimulator,
  type AtlassianSimulatorOptions,
  startAtlassianSimulator,
} from "./atlassian.ts";
import { authorizeAt, getJson, postForm, postJson, REDIRECT } from "./sim-test-b.ts";

const sims: AtlassianSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: AtlassianSimulatorOptions = {}) {
  const s = await startAtlassianSimulator(options);
  sims.push(s);
  return s;
}

async function login(s: AtlassianSimulator, scope = "read:me read:jira-work offline_access") {
  const loc = await authorizeAt(s.url, "/authorize", {
    audience: "api.atlassian.com",
    client_id: s.clientId,
    scope,
    redirect_uri: REDIRECT,
    state: "st",
    response_type: "code",
    prompt: "consent",
  });
  assert.equal(loc.searchParams.get("state"), "st");
  return postJson(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code: loc.searchParams.get("code"),
    redirect_uri: REDIRECT,
  });
}
const refresh = (s: AtlassianSimulator, rt: unknown) =>
  postJson(`${s.url}/oauth/token`, {
    grant_type: "refresh_token",
    client_id: s.clientId,
    client_secret: s.clientSecret,
    refresh_token: rt,
  });

test("[SIM-atlassian-token] JSON code exchange as documented: no token_type; refresh token only with offline_access", async () => {
  const s = await sim();
  const t = await login(s);
  assert.equal(t.status, 200);
  assert.equal(t.body.expires_in, 3600);
  assert.equal(t.body.token_type, undefined);
  assert.equal(typeof t.body.refresh_token, "string");
  assert.equal(s.lastTokenRequest()?.contentType, "application/json");
  assert.equal(s.lastTokenRequest()?.auth, "post");
  const online = await login(s, "read:me");
  assert.equal(online.body.refresh_token, undefined);
  const noAudience = await authorizeAt(s.url, "/authorize", {
    client_id: s.clientId,
    scope: "read:me",
    redirect_uri: REDIRECT,
    response_type: "code",
    state: "a",
  });
  assert.equal(noAudience.searchParams.get("error"), "invalid_request");
});

test("[SIM-atlassian-rotation] rotation: the old refresh token works within the 10-minute leeway, then 403 invalid_grant", async () => {
  const s = await sim();
  const t = await login(s);
  const r1 = await refresh(s, t.body.refresh_token);
  assert.equal(r1.status, 200);
  assert.notEqual(r1.body.refresh_token, t.body.refresh_token);
  s.advanceTime(599);
  assert.equal((await refresh(s, t.body.refresh_token)).status, 200, "within the reuse interval");
  s.advanceTime(2);
  const late = await refresh(s, t.body.refresh_token);
  assert.equal(late.status, 403);
  assert.deepEqual(late.body, {
    error: "invalid_grant",
    error_description: "Unknown or invalid refresh token.",
  });
  assert.equal((await refresh(s, r1.body.refresh_token)).status, 200);
});

test("[SIM-atlassian-expiry] refresh tokens die after 90 days unused and 365 days absolute", async () => {
  const s = await sim();
  const t = await login(s);
  s.advanceTime(90 * 86400);
  assert.equal((await refresh(s, t.body.refresh_token)).status, 403);
  const u = await login(s);
  let rt = u.body.refresh_token;
  for (let day = 0; day < 4; day++) {
    s.advanceTime(89 * 86400);
    const r = await refresh(s, rt);
    assert.equal(r.status, 200, `refresh on day ${(day + 1) * 89}`);
    rt = r.body.refresh_token;
  }
  s.advanceTime(10 * 86400);
  assert.equal((await refresh(s, rt)).status, 403, "365 days after the first login");
});

test("[SIM-atlassian-api] /me needs read:me; accessible-resources lists the sites; removed access ends the grant", async () => {
  const s = await sim({
    sites: [
      {
        id: "1324a887-45db-1bf4-1e99-ef0ff456d421",
        url: "https://acme.atlassian.net",
        name: "acme",
      },
    ],
  });
  const t = await login(s);
  const auth = { authorization: `Bearer ${t.body.access_token}` };
  const me = await getJson(`${s.url}/me`, auth);
  assert.equal(me.status, 200);
  assert.equal(me.body.account_id, "5b10ac8d82e05b22cc7d4ef5");
  assert.equal(me.body.email, "alice@example.com");
  const res = await fetch(`${s.url}/oauth/token/accessible-resources`, { headers: auth });
  const sites = (await res.json()) as { id: string; url: string }[];
  assert.equal(sites[0]?.url, "https://acme.atlassian.net");
  const noScope = await login(s, "read:jira-work");
  assert.equal(
    (await getJson(`${s.url}/me`, { authorization: `Bearer ${noScope.body.access_token}` })).status,
    403,
  );
  s.removeAppAccess();
  assert.equal(s.grantCount(), 0);
  assert.equal((await getJson(`${s.url}/me`, auth)).status, 401);
  assert.equal((await refresh(s, t.body.refresh_token)).status, 403);
});

test("[SIM-atlassian-errors] bad secret 401 access_denied, reused code 403 invalid_grant, form bodies accepted, faults", async () => {
  const s = await sim();
  const loc = await authorizeAt(s.url, "/authorize", {
    audience: "api.atlassian.com",
    client_id: s.clientId,
    scope: "read:me",
    redirect_uri: REDIRECT,
    response_type: "code",
  });
  const code = loc.searchParams.get("code")!;
  const bad = await postJson(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    client_id: s.clientId,
    client_secret: "wrong",
    code,
    redirect_uri: REDIRECT,
  });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.error, "access_denied");
  const form = await postForm(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code,
    redirect_uri: REDIRECT,
  });
  assert.equal(form.status, 200);
  assert.equal(s.lastTokenRequest()?.contentType, "application/x-www-form-urlencoded");
  const reused = await postJson(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code,
    redirect_uri: REDIRECT,
  });
  assert.equal(reused.status, 403);
  assert.equal(reused.body.error, "invalid_grant");
  s.failNext("rate_limit");
  const limited = await refresh(s, "x");
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
  const nested = await postJson(`${s.url}/oauth/token`, { grant_type: { $ne: 1 } });
  assert.equal(nested.status, 400);
});
