import assert from "node:assert/strict";
import { test } from "node:test";
import { authorizationUrl, LOOPBACK_REDIRECT, pkce, tokenRequest } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

// No auto-approve: a person has to sign in and consent.
const idp = await useIdp({ autoApproveAs: undefined });

/** The small part of a browser these pages need: a cookie jar (names only; paths ignored) and manual redirects. */
class Browser {
  readonly #cookies = new Map<string, string>();

  async request(
    url: URL,
    form?: Record<string, string>,
  ): Promise<{ status: number; location?: URL; html: string }> {
    const response = await fetch(url, {
      method: form ? "POST" : "GET",
      body: form ? new URLSearchParams(form) : undefined,
      redirect: "manual",
      headers: { cookie: [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";");
      const eq = pair.indexOf("=");
      if (eq > 0) this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    return {
      status: response.status,
      location: location ? new URL(location, url) : undefined,
      html: await response.text(),
    };
  }

  /** Follows redirects while they stay on `origin`; returns the last page, or the redirect that leaves. */
  async visit(url: URL, origin: string, form?: Record<string, string>) {
    let answer = await this.request(url, form);
    while (answer.location && answer.location.origin === origin)
      answer = await this.request(answer.location);
    return answer;
  }
}

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
  assert.match(page.html, /<input name="login"/);
  assert.match(page.html, /<input name="password" type="password"/);
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
  assert.match(consent.html, /<h1>Authorize<\/h1>/);
  assert.match(consent.html, /scope profile/);
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
