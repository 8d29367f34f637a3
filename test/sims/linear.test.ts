/** Checks the Linear simulator itself with raw fetch (comma-separated scopes, PKCE without a secret, 24 h tokens with rotating refresh tokens, revoke, GraphQL viewer, rate limit), so a wrong simulator is caught on its own. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import {
  type LinearSimulator,
  type LinearSimulatorOptions,
  startLinearSimulator,
} from "./linear.ts";
import { authorizeAt, pkce, postForm, postJson, REDIRECT } from "./sim-test-b.ts";

const sims: LinearSimulator[] = [];
after(() => Promise.all(sims.map((s) => s.close())));
async function sim(options: LinearSimulatorOptions = {}) {
  const s = await startLinearSimulator(options);
  sims.push(s);
  return s;
}

async function login(s: LinearSimulator, withSecret = true) {
  const p = pkce();
  const loc = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "read,write",
    state: "st",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  assert.equal(loc.searchParams.get("state"), "st");
  return postForm(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    ...(withSecret ? { client_secret: s.clientSecret } : {}),
    code_verifier: p.verifier,
  });
}
const viewer = (s: LinearSimulator, token: unknown) =>
  postJson(
    `${s.url}/graphql`,
    { query: "{ viewer { id name email } }" },
    { authorization: `Bearer ${token}` },
  );

test("[SIM-linear-token] comma-separated scopes; 24 h token with a refresh token; scope as the documented array", async () => {
  const s = await sim();
  const t = await login(s);
  assert.equal(t.status, 200);
  assert.equal(t.body.token_type, "Bearer");
  assert.equal(t.body.expires_in, 86399);
  assert.deepEqual(t.body.scope, ["read", "write"]);
  assert.equal(typeof t.body.refresh_token, "string");
  const pkceOnly = await login(s, false);
  assert.equal(pkceOnly.status, 200, "PKCE exchanges may leave out the client secret");
  const str = await sim({ scopeFormat: "string" });
  assert.equal((await login(str)).body.scope, "read,write");
});

test("[SIM-linear-rotation] a refresh returns a new refresh token; the used one is invalid_grant", async () => {
  const s = await sim();
  const t = await login(s);
  const refresh = (rt: unknown) =>
    postForm(`${s.url}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: String(rt),
      client_id: s.clientId,
      client_secret: s.clientSecret,
    });
  const r = await refresh(t.body.refresh_token);
  assert.equal(r.status, 200);
  assert.notEqual(r.body.refresh_token, t.body.refresh_token);
  const reuse = await refresh(t.body.refresh_token);
  assert.equal(reuse.status, 400);
  assert.equal(reuse.body.error, "invalid_grant");
  assert.equal(s.stats().refreshGrants, 2);
});

test("[SIM-linear-graphql] viewer with a live token; AUTHENTICATION_ERROR without one", async () => {
  const s = await sim();
  const t = await login(s);
  const v = await viewer(s, t.body.access_token);
  assert.equal(v.status, 200);
  assert.deepEqual(v.body.data, {
    viewer: {
      id: "8f1c2a6e-5d4b-4c3a-9e2f-1a2b3c4d5e6f",
      name: "Alice Example",
      email: "alice@example.com",
    },
  });
  const bad = await viewer(s, "lin_oauth_nope");
  assert.equal(bad.status, 401);
  assert.equal(
    (bad.body.errors as { extensions: { code: string } }[])[0]?.extensions.code,
    "AUTHENTICATION_ERROR",
  );
});

test("[SIM-linear-revoke] revoke with the Bearer access token deletes the grant; again answers 400", async () => {
  const s = await sim();
  const t = await login(s);
  const rv = () =>
    fetch(`${s.url}/oauth/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.body.access_token}` },
    });
  assert.equal((await rv()).status, 200);
  assert.equal(s.grantCount(), 0);
  assert.equal((await rv()).status, 400);
  assert.equal((await viewer(s, t.body.access_token)).status, 401);
  const u = await login(s);
  const byRefresh = await postForm(`${s.url}/oauth/revoke`, {
    token: String(u.body.refresh_token),
    token_type_hint: "refresh_token",
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(byRefresh.status, 200);
  assert.equal(s.isActive(u.body.access_token as string), false);
});

test("[SIM-linear-errors] deny, unknown scope, bad verifier, rate limit in Linear's documented shape", async () => {
  const s = await sim();
  const bad = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "read,everything",
  });
  assert.equal(bad.searchParams.get("error"), "invalid_scope");
  const p = pkce();
  const loc = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "read",
    code_challenge: p.challenge,
    code_challenge_method: "S256",
  });
  const wrong = await postForm(`${s.url}/oauth/token`, {
    grant_type: "authorization_code",
    code: loc.searchParams.get("code")!,
    redirect_uri: REDIRECT,
    client_id: s.clientId,
    client_secret: s.clientSecret,
    code_verifier: pkce().verifier,
  });
  assert.equal(wrong.body.error, "invalid_grant");
  s.deny = true;
  const denied = await authorizeAt(s.url, "/oauth/authorize", {
    client_id: s.clientId,
    redirect_uri: REDIRECT,
    response_type: "code",
    scope: "read",
  });
  assert.equal(denied.searchParams.get("error"), "access_denied");
  s.failNext("rate_limit");
  const limited = await postForm(`${s.url}/oauth/token`, {
    grant_type: "refresh_token",
    refresh_token: "x",
    client_id: s.clientId,
    client_secret: s.clientSecret,
  });
  assert.equal(limited.status, 400);
  assert.equal(limited.headers.get("x-ratelimit-requests-remaining"), "0");
  assert.equal(
    (limited.body.errors as { extensions: { code: string } }[])[0]?.extensions.code,
    "RATELIMITED",
  );
});
