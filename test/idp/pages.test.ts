/**
 * The embedded server's pages as a person meets them (login, consent, deny), the demo and console static clients,
 * and per-resource token lifetimes for the demo's short-lived AHP tokens.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeJwt } from "jose";
import {
  CONSOLE_CLIENT_ID,
  EXAMPLE_TOOL_CLIENT_ID,
  type IdpOptions,
  startIdp,
} from "../../src/idp/index.ts";
import { consentPage, errorPage, loginPage } from "../../src/idp/pages.ts";
import { deniedPage as toolDeniedPage } from "../../src/rap/tool/pages.ts";
import { authorizationUrl, authorizeAndRedeem, pkce, tokenRequest } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";
import { Browser } from "./browser.ts";

const HOSTILE = `<img src=x onerror="alert(1)">&'`;
const ALPHA = "https://alpha.example.test/";
const BETA = "https://beta.example.test/";

/** A person's idp: no auto-approve. */
const idp = await useIdp({ autoApproveAs: undefined });

function action(html: string, issuer: string, path: "login" | "confirm" | "abort"): URL {
  const found = new RegExp(`<form method="post" action="([^"]+/${path})"`).exec(html)?.[1];
  assert.ok(found, `no ${path} form in:\n${html}`);
  return new URL(found, issuer);
}

/** Opens the authorization URL and signs in as alice: the consent page (or wherever the server sends the browser). */
async function signInAsAlice(issuer: string, params: Record<string, string | undefined>) {
  const browser = new Browser();
  const { challenge } = await pkce();
  const login = await browser.visit(authorizationUrl(issuer, challenge, params), issuer);
  assert.equal(login.status, 200, login.html);
  const consent = await browser.visit(action(login.html, issuer, "login"), issuer, {
    login: "alice",
    password: "alice",
  });
  return { browser, login, consent };
}

test("[IDP-demo-accounts-hidden] by default the login page lists no demo accounts or passwords", async () => {
  const { challenge } = await pkce();
  const page = await new Browser().visit(authorizationUrl(idp.issuer, challenge), idp.issuer);
  assert.match(page.html, /<button type="submit">Sign in<\/button>/);
  assert.doesNotMatch(page.html, /Demo accounts/);
  assert.doesNotMatch(page.html, /alice\/alice/);
  assert.doesNotMatch(loginPage({ uid: "u", clientName: "c" }), /Demo accounts/);
});

test("[IDP-demo-accounts-hidden] showDemoAccounts: true lists them (the demo and `idp serve`)", async (t) => {
  const shown = await startIdp({ showDemoAccounts: true });
  t.after(() => shown.close());
  const browser = new Browser();
  const { challenge } = await pkce();
  const page = await browser.visit(authorizationUrl(shown.issuer, challenge), shown.issuer);
  assert.match(page.html, /Demo accounts: alice\/alice, bob\/bob, carol\/carol\./);
  const wrong = await browser.visit(action(page.html, shown.issuer, "login"), shown.issuer, {
    login: "alice",
    password: "nope",
  });
  assert.equal(wrong.status, 401);
  assert.match(wrong.html, /Demo accounts:/, "still listed after a wrong password");
});

test("[IDP-consent-page] the login page names the client and has labelled fields; the consent page names the client, the user, the scopes in words and the resource", async () => {
  const redirect = "http://127.0.0.1:43210/oauth/callback";
  const { login, consent } = await signInAsAlice(idp.issuer, {
    client_id: EXAMPLE_TOOL_CLIENT_ID,
    redirect_uri: redirect,
    scope: "openid profile email offline_access read",
    // No prompt=consent: oidc-provider then drops offline_access, but a refresh token is issued all the same.
    resource: ALPHA,
  });
  assert.match(login.html, /Sign in to continue to <strong>agentauth example RAP tool<\/strong>/);
  assert.match(login.html, /<label for="login">Username<\/label>/);
  assert.match(login.html, /<label for="password">Password<\/label>/);

  assert.equal(consent.status, 200, consent.html);
  const html = consent.html;
  assert.match(html, /<strong>agentauth example RAP tool<\/strong> asks for access/);
  assert.match(html, /You are signed in as <strong>Alice Liddell \(alice\)<\/strong>/);
  for (const words of [
    "confirm who you are",
    "your name",
    "your email address",
    "stay signed in (refresh tokens)",
  ]) {
    assert.ok(html.includes(`<li>${words}</li>`), `${words} in:\n${html}`);
  }
  assert.match(html, /<li><code>read<\/code><\/li>/, "other scopes as they are");
  assert.match(
    html,
    /<h2>For use at<\/h2>\s*<ul><li><code>https:\/\/alpha\.example\.test\/<\/code>/,
  );
  assert.match(html, /<button type="submit" class="primary">Allow<\/button>/);
  assert.match(html, /<button type="submit">Deny<\/button>/);
  assert.doesNotMatch(html, /scope openid/, "no raw 'scope x' lines any more");
});

test("[IDP-consent-page] a hostile client name (dynamic registration) is escaped on the login and consent pages", async () => {
  const registered = await fetch(`${idp.issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: HOSTILE,
      application_type: "native",
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code"],
      response_types: ["code"],
    }),
  });
  assert.equal(registered.status, 201);
  const { client_id } = (await registered.json()) as { client_id: string };
  const { login, consent } = await signInAsAlice(idp.issuer, {
    client_id,
    scope: "openid",
  });
  assert.doesNotMatch(consent.html, /stay signed in/, "a client without refresh_token gets none");
  for (const html of [login.html, consent.html]) {
    assert.doesNotMatch(html, /<img/);
    assert.ok(html.includes("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;"));
  }
});

test("[IDP-consent-page] every dynamic part of the pages is escaped (pure)", () => {
  const consent = consentPage({
    uid: `u"><script>`,
    clientName: HOSTILE,
    user: HOSTILE,
    scopes: [HOSTILE, "openid"],
    resources: [`https://x.test/<script>`],
  });
  const login = loginPage({ uid: `u"><script>`, clientName: HOSTILE, error: HOSTILE });
  for (const html of [consent, login]) {
    assert.doesNotMatch(html, /<img|<script/);
  }
  assert.match(login, /<p role="alert" id="login-error">/);
  assert.match(login, /aria-describedby="login-error"/);
  assert.match(consent, /<li>confirm who you are<\/li>/);
});

test("[IDP-deny] Deny sends access_denied back to the console's redirect on its own port; nothing to redeem", async () => {
  const redirect = "http://127.0.0.1:45678/connect/callback";
  const { browser, consent } = await signInAsAlice(idp.issuer, {
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: redirect,
    scope: "openid profile",
    state: "deny-state-0123456789",
  });
  assert.match(consent.html, /<strong>agentauth console<\/strong>/);
  const done = await browser.visit(action(consent.html, idp.issuer, "abort"), idp.issuer, {});
  assert.ok(done.location, `expected a redirect, got HTTP ${done.status}`);
  assert.equal(`${done.location.origin}${done.location.pathname}`, redirect);
  assert.equal(done.location.searchParams.get("error"), "access_denied");
  assert.equal(done.location.searchParams.get("state"), "deny-state-0123456789");
  assert.equal(done.location.searchParams.get("iss"), idp.issuer);
  assert.equal(done.location.searchParams.get("code"), null);
});

test("[IDP-deny] the pages after Deny say 'You denied access' and what to do next (the IdP's and the RAP tool's)", () => {
  const idpPage = errorPage("access_denied", "The user denied access", "agentauth console");
  assert.match(idpPage, /You denied access/);
  assert.match(idpPage, /<strong>agentauth console<\/strong> was told/);
  assert.match(idpPage, /close this tab/);
  assert.match(idpPage, /start again from agentauth console/);
  assert.doesNotMatch(idpPage, /Sign-in failed/);
  assert.match(errorPage("access_denied"), /start again from the application/);
  assert.match(errorPage("invalid_request", "bad"), /Sign-in failed/);

  const toolPage = toolDeniedPage("the demo API");
  assert.equal(toolPage.status, 200);
  assert.match(toolPage.html, /<h1>You denied access<\/h1>/);
  assert.match(toolPage.html, /Access to the demo API was not granted/);
  assert.match(toolPage.html, /close this tab/);
  assert.match(toolPage.html, /try again from there/);
  assert.ok(toolDeniedPage(HOSTILE).html.includes("&lt;img"), "escaped");
});

// --- Static clients for the demo ---

test("[IDP-static-clients] the example tool's and the console's public clients take their callback on any loopback port, nothing else", async (t) => {
  const auto = await startIdp({ autoApproveAs: "alice" });
  t.after(() => auto.close());
  const cases: { clientId: string; good: string; bad: string[] }[] = [
    {
      clientId: EXAMPLE_TOOL_CLIENT_ID,
      good: "http://127.0.0.1:54321/oauth/callback",
      bad: [
        "http://127.0.0.1:54321/connect/callback",
        "http://evil.test/oauth/callback",
        "https://127.0.0.1:54321/oauth/callback",
      ],
    },
    {
      clientId: CONSOLE_CLIENT_ID,
      good: "http://127.0.0.1:61234/connect/callback",
      bad: ["http://127.0.0.1:61234/oauth/callback", "http://localhost.evil.test/connect/callback"],
    },
  ];
  for (const { clientId, good, bad } of cases) {
    const { verifier, challenge } = await pkce();
    const url = authorizationUrl(auto.issuer, challenge, {
      client_id: clientId,
      redirect_uri: good,
      scope: "openid offline_access",
    });
    const answer = await fetch(url, { redirect: "manual" });
    await answer.arrayBuffer();
    const callback = new URL(answer.headers.get("location") ?? "", url);
    assert.equal(`${callback.origin}${callback.pathname}`, good, clientId);
    const code = callback.searchParams.get("code");
    assert.ok(code, `${clientId}: ${callback.href}`);
    const tokens = await tokenRequest(auto.issuer, {
      client_id: clientId,
      grant_type: "authorization_code",
      code,
      redirect_uri: good,
      code_verifier: verifier,
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const refreshed = await tokenRequest(auto.issuer, {
      client_id: clientId,
      grant_type: "refresh_token",
      refresh_token: String(tokens.body.refresh_token),
    });
    assert.equal(refreshed.status, 200, `${clientId} refreshes`);
    for (const redirect of bad) {
      const refused = await fetch(
        authorizationUrl(auto.issuer, challenge, { client_id: clientId, redirect_uri: redirect }),
        { redirect: "manual" },
      );
      await refused.arrayBuffer();
      assert.equal(refused.status, 400, `${clientId} refuses ${redirect}`);
      assert.equal(refused.headers.get("location"), null);
    }
    // Browser clients only: no device flow.
    const device = await fetch(`${auto.issuer}/device/auth`, {
      method: "POST",
      body: new URLSearchParams({ client_id: clientId, scope: "openid" }),
    });
    assert.equal(device.status, 400);
    // oidc-provider answers invalid_request ("… is not allowed for this client").
    assert.match(
      ((await device.json()) as { error_description: string }).error_description,
      /not allowed/,
    );
  }
  const metadata = (await (
    await fetch(`${auto.issuer}/.well-known/openid-configuration`)
  ).json()) as { registration_endpoint?: string };
  assert.ok(metadata.registration_endpoint, "dynamic registration is still offered");
});

// --- Per-resource access token lifetimes ---

async function tokenFor(issuer: string, resource: string): Promise<{ ttl: number; rt: string }> {
  const answer = await authorizeAndRedeem(
    issuer,
    { scope: "openid offline_access read", resource },
    { resource },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const claims = decodeJwt(String(answer.body.access_token));
  assert.equal(answer.body.expires_in, Number(claims.exp) - Number(claims.iat));
  return { ttl: Number(claims.exp) - Number(claims.iat), rt: String(answer.body.refresh_token) };
}

test("[IDP-resource-ttl] resourceTokenTtlSeconds gives the named resources short tokens (also on refresh); others keep the default", async (t) => {
  const options: IdpOptions = {
    autoApproveAs: "alice",
    accessTokenTtlSeconds: 900,
    // Written without the trailing slash: resources are compared as URLs.
    resourceTokenTtlSeconds: { "https://alpha.example.test": 6, [BETA]: 7 },
  };
  const short = await startIdp(options);
  t.after(() => short.close());
  const alpha = await tokenFor(short.issuer, ALPHA);
  assert.equal(alpha.ttl, 6);
  assert.equal((await tokenFor(short.issuer, BETA)).ttl, 7);
  assert.equal((await tokenFor(short.issuer, "https://api.example.test/")).ttl, 900);
  const refreshed = await tokenRequest(short.issuer, {
    grant_type: "refresh_token",
    refresh_token: alpha.rt,
    resource: ALPHA,
  });
  assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.equal(refreshed.body.expires_in, 6);
});

test("[IDP-resource-ttl] a bad resourceTokenTtlSeconds is refused before anything listens", async () => {
  const bad: Record<string, number>[] = [
    { "not a url": 5 },
    { [ALPHA]: 0 },
    { [ALPHA]: 1.5 },
    { [ALPHA]: Number.NaN },
  ];
  for (const ttls of bad) {
    await assert.rejects(startIdp({ resourceTokenTtlSeconds: ttls }), (error: unknown) => {
      assert.equal((error as { code?: string }).code, "idp_invalid_option");
      return true;
    });
  }
});
