/**
 * Connect (authorization code + PKCE through the console's own callback) and Disconnect (revoke at the IdP, then
 * delete) against the real embedded authorization server and a real SQLite vault.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConsoleState } from "../../src/console/index.ts";
import {
  type ProviderRef,
  type ProviderResolver,
  REGISTRATION_SUBJECT,
} from "../../src/oauth/index.ts";
import { generic } from "../../src/providers/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { postJson, signedInConsole } from "./support.ts";

const CLIENT_ID = "console-test-client";
const CLIENT = {
  client_id: CLIENT_ID,
  client_name: "console test",
  application_type: "native",
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  // Native: a loopback redirect matches on any port (RFC 8252 §7.3).
  redirect_uris: ["http://127.0.0.1/connect/callback"],
} as const;

async function setUp(
  options: { provider?: ProviderRef; providers?: (issuer: string) => ProviderResolver } = {},
) {
  const idp = await useIdp({ clients: [CLIENT] });
  const store = openVault({ env: { AGENTAUTH_HOME: tempDir() } });
  const signedIn = await signedInConsole({
    store,
    providers: options.providers?.(idp.issuer),
    connectTargets: [
      {
        id: "demo-idp",
        label: "Demo IdP",
        issuer: idp.issuer,
        clientId: CLIENT_ID,
        scope: "openid profile email offline_access",
        provider: options.provider,
      },
    ],
  });
  return { idp, store, signedIn };
}

/** The auto-approving IdP sends the browser straight back: where to. */
async function backFromIdp(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  assert.ok(location, `the IdP answered ${response.status} without a redirect`);
  return new URL(location, authorizationUrl);
}

async function refreshAtIdp(issuer: string, refreshToken: string): Promise<number> {
  const response = await fetch(new URL("/token", issuer), {
    method: "POST",
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: CLIENT_ID,
    }),
  });
  await response.arrayBuffer();
  return response.status;
}

test("[CONSOLE-connect-disconnect] Connect stores the credential via /connect/callback; Disconnect revokes at the IdP, then deletes", async () => {
  const { idp, store, signedIn } = await setUp();
  const started = await postJson(signedIn, "/api/connect", { target: "demo-idp" });
  assert.equal(started.status, 200, JSON.stringify(started.json));
  const binding = connectCookie(started.headers);
  const authorizationUrl = String(started.json.authorizationUrl);
  const asked = new URL(authorizationUrl);
  assert.equal(asked.searchParams.get("code_challenge_method"), "S256");
  assert.equal(
    asked.searchParams.get("redirect_uri"),
    `${new URL(signedIn.console.url).origin}/connect/callback`,
  );

  const callback = await backFromIdp(authorizationUrl);
  assert.equal(callback.pathname, "/connect/callback");
  assert.ok(callback.searchParams.get("iss"), "RFC 9207 iss comes back");
  const page = await fetch(callback, { headers: { cookie: binding } });
  const html = await page.text();
  assert.equal(page.status, 200, html);
  assert.match(html, /Connected/);
  assert.ok(!html.includes(callback.searchParams.get("code") as string));

  const [summary] = await store.list();
  assert.ok(summary);
  assert.equal(summary.subject, "alice");
  assert.equal(summary.issuer, idp.issuer);
  const record = await store.getById(summary.id);
  const refreshToken = record?.tokens.refreshToken?.reveal();
  assert.ok(refreshToken, "offline_access gave a refresh token");

  // The same callback again: its state was used, so nothing happens.
  const replay = await fetch(callback, { headers: { cookie: binding } });
  assert.equal(replay.status, 400);
  assert.match(await replay.text(), /state is unknown, already used or expired/);

  const state = (await (
    await fetch(new URL("/api/state", signedIn.console.url), {
      headers: { cookie: signedIn.cookie },
    })
  ).json()) as ConsoleState;
  assert.equal(state.accounts.length, 1);
  assert.ok(!JSON.stringify(state).includes(refreshToken));

  const gone = await postJson(signedIn, "/api/accounts/disconnect", { id: summary.id });
  assert.equal(gone.status, 200, JSON.stringify(gone.json));
  assert.match(String(gone.json.message), /^Disconnected alice/);
  assert.equal(gone.json.revoked, true);
  assert.deepEqual(await store.list(), [], "the vault entry is gone");
  assert.equal(
    await refreshAtIdp(idp.issuer, refreshToken),
    400,
    "the refresh token was revoked at the IdP",
  );
  const after = (await (
    await fetch(new URL("/api/state", signedIn.console.url), {
      headers: { cookie: signedIn.cookie },
    })
  ).json()) as ConsoleState;
  assert.equal(after.accounts.length, 0);
  assert.ok(after.activity.some((e) => e.kind === "revoke" && e.component === "console"));
  const again = await postJson(signedIn, "/api/accounts/disconnect", { id: summary.id });
  assert.equal(again.status, 404);
  await store.close();
});

test("[CONSOLE-connect-iss] a callback whose iss names another server is refused (mix-up), and its state is spent", async () => {
  const { store, signedIn } = await setUp();
  const started = await postJson(signedIn, "/api/connect", { target: "demo-idp" });
  const binding = connectCookie(started.headers);
  const callback = await backFromIdp(String(started.json.authorizationUrl));
  const forged = new URL(callback);
  forged.searchParams.set("iss", "https://evil.example.test");
  const refused = await fetch(forged, { headers: { cookie: binding } });
  assert.equal(refused.status, 400);
  assert.match(await refused.text(), /iss/);
  const honest = await fetch(callback, { headers: { cookie: binding } });
  assert.equal(honest.status, 400, "state is single use even when the first attempt failed");
  assert.deepEqual(await store.list(), []);
  await store.close();
});

test("[CONSOLE-connect-hostile] unknown target, bad fields, and callbacks without or with a forged state store nothing", async () => {
  const { store, signedIn } = await setUp();
  const unknown = await postJson(signedIn, "/api/connect", { target: "nope" });
  assert.equal(unknown.status, 404);
  assert.equal((unknown.json.error as { code: string }).code, "console_unknown_target");
  for (const body of [
    {},
    { target: 42 },
    { target: "demo-idp", subject: "a\nb" },
    { target: "x".repeat(500) },
  ]) {
    const answer = await postJson(signedIn, "/api/connect", body);
    assert.equal(answer.status, 400, JSON.stringify(body));
    assert.equal((answer.json.error as { code: string }).code, "console_field_invalid");
  }
  const base = new URL("/connect/callback", signedIn.console.url);
  for (const query of [
    "",
    "?code=abc",
    "?code=abc&state=forged",
    `?state=${"x".repeat(5000)}`,
    "?error=access_denied",
  ]) {
    const answer = await fetch(`${base.href}${query}`);
    assert.equal(answer.status, 400, query);
    const html = await answer.text();
    assert.match(html, /Not connected/);
    assert.ok(!html.includes("<script"), "no script on the callback page");
  }
  assert.equal((await fetch(base, { method: "POST" })).status, 405);
  assert.deepEqual(await store.list(), []);
  // Any page can send a browser to the callback: failures without a known state are not the person's activity.
  const state = (await (
    await fetch(new URL("/api/state", signedIn.console.url), {
      headers: { cookie: signedIn.cookie },
    })
  ).json()) as ConsoleState;
  assert.deepEqual(
    state.activity.filter((event) => event.component === "console"),
    [],
    "unknown-state callbacks leave no activity",
  );
  await store.close();
});

test("[CONSOLE-connect-reserved-subject] a subject in agentauth's reserved namespace (agentauth:client:…, the client-registration subject) is refused with 400 invalid_subject before any authorization URL, as login and the MCP code refuse it; nothing is stored", async () => {
  const { store, signedIn } = await setUp();
  for (const subject of [
    "agentauth:client:https://mcp.example.com/",
    "agentauth:client-registration",
    "agentauth:",
  ]) {
    const answer = await postJson(signedIn, "/api/connect", { target: "demo-idp", subject });
    assert.equal(answer.status, 400, `${subject}: ${JSON.stringify(answer.json)}`);
    const error = answer.json.error as { code: string; message: string };
    assert.equal(error.code, "invalid_subject", subject);
    assert.match(error.message, /agentauth's own vault records; choose another subject/);
    assert.equal(answer.json.authorizationUrl, undefined);
    assert.equal(answer.headers.get("set-cookie"), null, "no Connect started");
  }
  // Not reserved: an ordinary subject that merely mentions agentauth is fine.
  const ok = await postJson(signedIn, "/api/connect", {
    target: "demo-idp",
    subject: "me-agentauth:x",
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  assert.deepEqual(await store.list(), []);
  await store.close();
});

test("[CONSOLE-connect-reserved-subject] Connect without a subject refuses the one the provider named when it is in agentauth's namespace (an account API answering agentauth:client-registration): the callback says so, nothing is stored", async () => {
  const { store, signedIn } = await setUp({
    provider: { name: "generic", options: {} },
    // The demo server's own sign-in (alice), read back by an account API that names the account in agentauth's
    // namespace: the subject the credential would have been filed under without one given.
    providers: (issuer) => (_ref, client) => ({
      ...generic({ issuer, clientId: client.clientId }),
      account: async () => ({ subject: REGISTRATION_SUBJECT, login: "mallory" }),
    }),
  });
  const started = await postJson(signedIn, "/api/connect", { target: "demo-idp" });
  assert.equal(started.status, 200, JSON.stringify(started.json));
  const callback = await backFromIdp(String(started.json.authorizationUrl));
  const answer = await fetch(callback, { headers: { cookie: connectCookie(started.headers) } });
  const html = await answer.text();
  assert.equal(answer.status, 400, html);
  assert.match(html, /Not connected/);
  assert.match(html, /agentauth&#39;s own|agentauth's own/);
  assert.deepEqual(await store.list(), [], "nothing filed under the reserved subject");
  await store.close();
});

test("[CONSOLE-connect-binding] a callback is completed only in the browser that started the Connect (state bound to a cookie)", async () => {
  const { store, signedIn } = await setUp();
  const started = await postJson(signedIn, "/api/connect", { target: "demo-idp" });
  const setCookie = started.headers.get("set-cookie") ?? "";
  assert.match(setCookie, /^agentauth_connect=[A-Za-z0-9_-]{43};/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Lax/, "Lax: sent when the AS redirects the browser back");
  assert.match(setCookie, /Path=\/connect\/callback/);
  const callback = await backFromIdp(String(started.json.authorizationUrl));
  // Someone else's browser (no cookie, or another value) with this state and a code: refused, nothing stored.
  for (const cookie of [undefined, "agentauth_connect=AAAA", signedIn.cookie]) {
    const second = await postJson(signedIn, "/api/connect", { target: "demo-idp" });
    const other = await backFromIdp(String(second.json.authorizationUrl));
    const answer = await fetch(other, cookie ? { headers: { cookie } } : {});
    assert.equal(answer.status, 403, String(cookie));
    assert.match(await answer.text(), /not started from this browser/);
  }
  assert.deepEqual(await store.list(), []);
  const page = await fetch(callback, { headers: { cookie: connectCookie(started.headers) } });
  assert.equal(page.status, 200, await page.text());
  assert.equal((await store.list()).length, 1);
  await store.close();
});

function connectCookie(headers: Headers): string {
  const value = (headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  assert.match(value, /^agentauth_connect=/);
  return value;
}
