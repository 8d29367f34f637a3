import assert from "node:assert/strict";
import { test } from "node:test";
import { listenOnLoopback } from "../../src/oauth/index.ts";
import { authorizationUrl, LOOPBACK_REDIRECT, pkce, tokenRequest } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";
import { Browser } from "./browser.ts";

// No auto-approve: a person has to sign in and consent.
const idp = await useIdp({ autoApproveAs: undefined });

function formAction(html: string, pattern: RegExp): URL {
  const action = pattern.exec(html)?.[1];
  assert.ok(action, `no form matching ${pattern} in:\n${html}`);
  return new URL(action, idp.issuer);
}

test("[IDP-auto-approve-off] /auth shows a login form instead of redirecting with a code", async () => {
  const { challenge } = await pkce();
  const page = await new Browser().visit(authorizationUrl(idp.issuer, challenge), idp.issuer);
  assert.equal(page.status, 200);
  assert.equal(page.location, undefined, "no redirect to the client");
  assert.match(page.html, /<form method="post" action="\/interaction\/[\w-]+\/login"/);
  assert.match(page.html, /<label for="login">Username<\/label>\s*<input id="login" name="login"/);
  assert.match(
    page.html,
    /<label for="password">Password<\/label>\s*<input id="password" name="password" type="password"/,
  );
  assert.match(page.html, /Sign in to continue to <strong>agentauth CLI<\/strong>/);
  assert.match(page.html, /<button type="submit">Sign in<\/button>/);
});

test("[IDP-auto-approve-off] a full browser journey: wrong password, then alice/alice, then consent, then a code", async () => {
  const browser = new Browser();
  const { verifier, challenge } = await pkce();
  const start = authorizationUrl(idp.issuer, challenge, { scope: "openid profile email" });
  const loginPage = await browser.visit(start, idp.issuer);
  const loginAction = formAction(loginPage.html, /<form method="post" action="([^"]+\/login)"/);

  const wrong = await browser.visit(loginAction, idp.issuer, {
    login: "alice",
    password: "not-alice",
  });
  assert.equal(wrong.status, 401);
  assert.match(wrong.html, /Unknown user or wrong password\./);
  assert.match(wrong.html, /action="[^"]+\/login"/, "the login form is shown again");

  const consent = await browser.visit(loginAction, idp.issuer, {
    login: "alice",
    password: "alice",
  });
  assert.equal(consent.status, 200);
  assert.match(consent.html, /<h1>Allow access\?<\/h1>/);
  assert.match(consent.html, /<li>your name<\/li>/);
  const allow = formAction(consent.html, /<form method="post" action="([^"]+\/confirm)"/);

  const done = await browser.visit(allow, idp.issuer, {});
  assert.ok(done.location, `expected a redirect to the client, got HTTP ${done.status}`);
  assert.equal(`${done.location.origin}${done.location.pathname}`, LOOPBACK_REDIRECT);
  assert.equal(done.location.searchParams.get("state"), start.searchParams.get("state"));
  const code = done.location.searchParams.get("code");
  assert.ok(code);

  const tokens = await tokenRequest(idp.issuer, {
    grant_type: "authorization_code",
    code,
    redirect_uri: LOOPBACK_REDIRECT,
    code_verifier: verifier,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  assert.equal(typeof tokens.body.id_token, "string");
});

test("[IDP-auto-approve-off] the login form without the interaction cookie is refused", async () => {
  const { challenge } = await pkce();
  const page = await new Browser().visit(authorizationUrl(idp.issuer, challenge), idp.issuer);
  const loginAction = formAction(page.html, /<form method="post" action="([^"]+\/login)"/);
  // A different browser (no cookies) posting the right password must not complete someone else's sign-in.
  const stranger = await new Browser().visit(loginAction, idp.issuer, {
    login: "alice",
    password: "alice",
  });
  assert.equal(stranger.status, 400);
  assert.equal(stranger.location, undefined);
});

test("[IDP-auto-approve-off] denying consent sends access_denied to the client", async () => {
  const browser = new Browser();
  const { challenge } = await pkce();
  const page = await browser.visit(authorizationUrl(idp.issuer, challenge), idp.issuer);
  const loginAction = formAction(page.html, /<form method="post" action="([^"]+\/login)"/);
  const consent = await browser.visit(loginAction, idp.issuer, { login: "bob", password: "bob" });
  const deny = formAction(consent.html, /<form method="post" action="([^"]+\/abort)"/);
  const done = await browser.visit(deny, idp.issuer, {});
  assert.equal(done.location?.searchParams.get("error"), "access_denied");
  assert.equal(done.location?.searchParams.get("code"), null);
});

/**
 * Every named input of the form with `id` in `html` (else of its first form: oidc-provider's auto-submitting
 * pages have no id), with its value (hidden xsrf, prefilled user_code, confirm).
 */
function formFields(html: string, id: string): { action: URL; fields: Record<string, string> } {
  const form =
    new RegExp(`<form[^>]*id="${id.replace(".", "\\.")}"[^>]*>([\\s\\S]*?)</form>`).exec(html) ??
    /<form[^>]*>([\s\S]*?)<\/form>/.exec(html);
  assert.ok(form, `no form ${id} in:\n${html}`);
  const action = /action="([^"]+)"/.exec(form[0])?.[1];
  assert.ok(action);
  const fields: Record<string, string> = {};
  for (const input of form[1]!.matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(input[0])?.[1];
    if (name) fields[name] = /value="([^"]*)"/.exec(input[0])?.[1] ?? "";
  }
  return { action: new URL(action, idp.issuer), fields };
}

test("[IDP-deny-page] denying consent in the device flow shows 'You denied access', not a bad-code message, and the device is told", async () => {
  const started = await fetch(`${idp.issuer}/device/auth`, {
    method: "POST",
    body: new URLSearchParams({ client_id: "agentauth-cli", scope: "openid" }),
  });
  const { device_code, verification_uri_complete } = (await started.json()) as Record<
    string,
    string
  >;
  const browser = new Browser();
  const input = await browser.visit(new URL(verification_uri_complete!), idp.issuer);
  const entered = formFields(input.html, "op.deviceInputForm");
  const confirm = await browser.visit(entered.action, idp.issuer, entered.fields);
  const confirmed = formFields(confirm.html, "op.deviceConfirmForm");
  const login = await browser.visit(confirmed.action, idp.issuer, confirmed.fields);
  const loginAction = formAction(login.html, /<form method="post" action="([^"]+\/login)"/);
  const consent = await browser.visit(loginAction, idp.issuer, { login: "bob", password: "bob" });
  const deny = formAction(consent.html, /<form method="post" action="([^"]+\/abort)"/);
  const done = await browser.visit(deny, idp.issuer, {});

  assert.match(done.html, /You denied access/);
  assert.match(done.html, /agentauth CLI/, "names the application that was told");
  assert.doesNotMatch(done.html, /did not work/);
  const poll = await fetch(`${idp.issuer}/token`, {
    method: "POST",
    body: new URLSearchParams({
      client_id: "agentauth-cli",
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: device_code!,
    }),
  });
  assert.equal(((await poll.json()) as { error: string }).error, "access_denied");
});

test("[IDP-deny-page] a wrong user code still says the code did not work", async () => {
  const browser = new Browser();
  const input = await browser.visit(new URL(`${idp.issuer}/device`), idp.issuer);
  const entered = formFields(input.html, "op.deviceInputForm");
  const retry = await browser.visit(entered.action, idp.issuer, {
    ...entered.fields,
    user_code: "BCDF-GHJK",
  });
  assert.match(retry.html, /did not work/);
  assert.doesNotMatch(retry.html, /denied/);
});

test("[IDP-deny-page] denying consent in the code flow lands on agentauth's loopback page saying 'You denied access'", async (t) => {
  const listener = await listenOnLoopback();
  t.after(() => listener.close());
  const state = "state-for-deny-test-0123456789";
  const waiting = listener.waitForCallback(state, { timeoutMs: 15_000 });
  const { challenge } = await pkce();
  const browser = new Browser();
  const url = authorizationUrl(idp.issuer, challenge, {
    redirect_uri: listener.redirectUri,
    state,
  });
  const page = await browser.visit(url, idp.issuer);
  const loginAction = formAction(page.html, /<form method="post" action="([^"]+\/login)"/);
  const consent = await browser.visit(loginAction, idp.issuer, { login: "bob", password: "bob" });
  const deny = formAction(consent.html, /<form method="post" action="([^"]+\/abort)"/);
  const redirect = await browser.visit(deny, idp.issuer, {});
  assert.equal(redirect.location?.searchParams.get("error"), "access_denied");
  const landing = await browser.request(redirect.location!);
  assert.equal(landing.status, 200);
  assert.match(landing.html, /You denied access/);
  assert.match(landing.html, /agentauth was told/);
  assert.doesNotMatch(landing.html, /received the sign-in/);
  assert.equal((await waiting).searchParams.get("error"), "access_denied", "the app was told");
});
