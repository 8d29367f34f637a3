/** Checks the Notion simulator itself with raw fetch (owner=user, Basic client credentials with a JSON body, the documented token answer, rolling refresh tokens, revoke, /v1/users/me with Notion-Version, errors), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type NotionSimulator,
  type NotionSimulatorOptions,
  startNotionSimulator,
} from "./notion.ts";
import { authorizeAt, basic, getJson, postForm, postJson, REDIRECT } from "./sim-test-b.ts";

const sims: NotionSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: NotionSimulatorOptions = {}) {
  const s = await startNotionSimulator(options);
  sims.push(s);
  return s;
}
const auth = (s: NotionSimulator) => ({ authorization: basic(s.clientId, s.clientSecret) });

async function code(s: NotionSimulator) {
  const loc = await authorizeAt(s.url, "/v1/oauth/authorize", {
    client_id: s.clientId,
    response_type: "code",
    owner: "user",
    redirect_uri: REDIRECT,
    state: "st",
  });
  assert.equal(loc.searchParams.get("state"), "st");
  return loc.searchParams.get("code")!;
}
async function login(s: NotionSimulator) {
  return postJson(
    `${s.url}/v1/oauth/token`,
    { grant_type: "authorization_code", code: await code(s), redirect_uri: REDIRECT },
    auth(s),
  );
}

test("[SIM-notion-token] Basic credentials and a JSON body; the documented answer with owner, workspace and refresh token", async () => {
  const s = await sim();
  const t = await login(s);
  assert.equal(t.status, 200);
  assert.equal(t.body.token_type, "bearer");
  assert.equal(t.body.expires_in, undefined);
  assert.equal(typeof t.body.refresh_token, "string");
  assert.equal(t.body.workspace_name, "Alice's Notion");
  assert.equal(typeof t.body.bot_id, "string");
  assert.deepEqual((t.body.owner as { user: { person: unknown } }).user.person, {
    email: "alice@example.com",
  });
  assert.equal(s.lastTokenRequest()?.auth, "basic");
  assert.equal(s.lastTokenRequest()?.params.code, "[redacted]");
});

test("[SIM-notion-client-auth] client secret in the body, or a form body, is refused", async () => {
  const s = await sim();
  const inBody = await postJson(`${s.url}/v1/oauth/token`, {
    grant_type: "authorization_code",
    code: await code(s),
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(inBody.status, 401);
  assert.equal(inBody.body.error, "invalid_client");
  const form = await postForm(
    `${s.url}/v1/oauth/token`,
    { grant_type: "authorization_code", code: await code(s), redirect_uri: REDIRECT },
    auth(s),
  );
  assert.equal(form.status, 400);
  assert.equal(form.body.object, "error");
  const wrongRedirect = await postJson(
    `${s.url}/v1/oauth/token`,
    {
      grant_type: "authorization_code",
      code: await code(s),
      redirect_uri: "http://127.0.0.1:1/other",
    },
    auth(s),
  );
  assert.equal(wrongRedirect.body.error, "invalid_grant");
});

test("[SIM-notion-refresh] refresh gives a new access and refresh token; the used refresh token is invalid_grant", async () => {
  const s = await sim();
  const t = await login(s);
  const refresh = (rt: unknown) =>
    postJson(
      `${s.url}/v1/oauth/token`,
      { grant_type: "refresh_token", refresh_token: rt },
      auth(s),
    );
  const r = await refresh(t.body.refresh_token);
  assert.equal(r.status, 200);
  assert.notEqual(r.body.refresh_token, t.body.refresh_token);
  assert.notEqual(r.body.access_token, t.body.access_token);
  assert.equal(r.body.bot_id, t.body.bot_id);
  const reuse = await refresh(t.body.refresh_token);
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, "invalid_grant");
});

test("[SIM-notion-me] /v1/users/me needs Notion-Version and a live token; revoke deletes the grant", async () => {
  const s = await sim();
  const t = await login(s);
  const bearer = { authorization: `Bearer ${t.body.access_token}` };
  const noVersion = await getJson(`${s.url}/v1/users/me`, bearer);
  assert.equal(noVersion.status, 400);
  assert.equal(noVersion.body.code, "missing_version");
  const me = await getJson(`${s.url}/v1/users/me`, { ...bearer, "notion-version": "2022-06-28" });
  assert.equal(me.status, 200);
  assert.equal(me.body.type, "bot");
  assert.equal(
    (me.body.bot as { owner: { user: { name: string } } }).owner.user.name,
    "Alice Example",
  );
  const rv = await postJson(`${s.url}/v1/oauth/revoke`, { token: t.body.access_token }, auth(s));
  assert.equal(rv.status, 200);
  assert.equal(s.grantCount(), 0);
  const after = await getJson(`${s.url}/v1/users/me`, {
    ...bearer,
    "notion-version": "2022-06-28",
  });
  assert.equal(after.status, 401);
  assert.deepEqual([after.body.object, after.body.code], ["error", "unauthorized"]);
});

test("[SIM-notion-errors] owner=user required, deny, rate limit 429 rate_limited with Retry-After", async () => {
  const s = await sim();
  const noOwner = await authorizeAt(s.url, "/v1/oauth/authorize", {
    client_id: s.clientId,
    response_type: "code",
    redirect_uri: REDIRECT,
  });
  assert.equal(noOwner.searchParams.get("error"), "invalid_request");
  s.deny = true;
  const denied = await authorizeAt(s.url, "/v1/oauth/authorize", {
    client_id: s.clientId,
    response_type: "code",
    owner: "user",
    redirect_uri: REDIRECT,
    state: "d",
  });
  assert.equal(denied.searchParams.get("error"), "access_denied");
  s.failNext("rate_limit");
  const limited = await postJson(
    `${s.url}/v1/oauth/token`,
    { grant_type: "refresh_token", refresh_token: "x" },
    auth(s),
  );
  assert.equal(limited.status, 429);
  assert.equal(limited.body.code, "rate_limited");
  assert.ok(limited.headers.get("retry-after"));
});
