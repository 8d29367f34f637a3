/** The console's security checks: pure functions, then the same over real HTTP against a running console. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  checkCsrf,
  checkHost,
  checkJsonContentType,
  checkSite,
  cookieValue,
  SessionBook,
} from "../../src/console/security.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { postJson, rawRequest, signedInConsole } from "./support.ts";

test("[CONSOLE-security-host] pure: only 127.0.0.1:PORT and localhost:PORT pass", () => {
  assert.equal(checkHost("127.0.0.1:8080", 8080), undefined);
  assert.equal(checkHost("LOCALHOST:8080", 8080), undefined);
  for (const host of [
    "evil.example:8080",
    "127.0.0.1:8081",
    "127.0.0.1",
    undefined,
    "",
    "localhost.evil:8080",
  ]) {
    assert.equal(checkHost(host, 8080)?.status, 421, String(host));
  }
});

test("[CONSOLE-security-site] pure: cross-site fetch metadata and foreign origins are refused", () => {
  assert.equal(checkSite({}, 80), undefined);
  assert.equal(
    checkSite({ secFetchSite: "same-origin", origin: "http://127.0.0.1:80" }, 80),
    undefined,
  );
  assert.equal(checkSite({ secFetchSite: "none" }, 80), undefined);
  assert.equal(checkSite({ secFetchSite: "cross-site" }, 80)?.status, 403);
  // Another loopback port is "same-site" (ports do not count): a page there is not the console.
  assert.equal(checkSite({ secFetchSite: "same-site" }, 80)?.status, 403);
  assert.equal(checkSite({ origin: "http://evil.example" }, 80)?.status, 403);
  assert.equal(checkSite({ origin: "null" }, 80)?.status, 403);
  assert.equal(checkSite({ origin: "http://127.0.0.1:81" }, 80)?.status, 403);
});

test("[CONSOLE-security-csrf] pure: CSRF header must equal the session's token; JSON content type only", () => {
  assert.equal(checkCsrf("abc", "abc"), undefined);
  assert.equal(checkCsrf("abd", "abc")?.status, 403);
  assert.equal(checkCsrf(undefined, "abc")?.status, 403);
  assert.equal(checkCsrf("", "")?.status, 403);
  assert.equal(checkJsonContentType("application/json; charset=utf-8"), undefined);
  assert.equal(checkJsonContentType("text/plain")?.status, 415);
  assert.equal(checkJsonContentType("application/x-www-form-urlencoded")?.status, 415);
  assert.equal(checkJsonContentType(undefined)?.status, 415);
});

test("[CONSOLE-security-token-once] pure: the login token opens one session, once; cookies parse strictly", () => {
  const book = new SessionBook();
  const token = book.loginToken as string;
  assert.equal(token.length, 43, "256 bits, base64url");
  assert.equal(book.redeem("wrong"), undefined);
  assert.equal(book.redeem(undefined), undefined);
  const session = book.redeem(token);
  assert.ok(session);
  assert.equal(book.redeem(token), undefined, "single use");
  assert.equal(book.loginToken, undefined);
  assert.equal(book.find(`a=b; agentauth_console=${session.id}`)?.csrf, session.csrf);
  assert.equal(book.find("agentauth_console=nope"), undefined);
  assert.equal(book.find(undefined), undefined);
  assert.equal(cookieValue("x=1; y = 2 ;z", "y"), "2");
});

test("[CONSOLE-security-http] real HTTP: session, token, CSRF, Host, Origin, Sec-Fetch-Site, content type, body cap, headers", async () => {
  const store = new MemoryCredentialStore();
  const signedIn = await signedInConsole({ store });
  const { url, loginUrl } = signedIn.console;
  const host = new URL(url).host;

  // No cookie → 401 (page and API), with a page that says how to get a fresh link.
  const page = await rawRequest(url, { headers: { host } });
  assert.equal(page.status, 401);
  assert.match(page.body, /start it again/);
  const api = await rawRequest(`${url}api/state`, { headers: { host } });
  assert.equal(api.status, 401);
  assert.equal(
    (JSON.parse(api.body) as { error: { code: string } }).error.code,
    "console_session_required",
  );
  const events = await rawRequest(`${url}api/events`, { headers: { host } });
  assert.equal(events.status, 401);

  // The login token worked once (in signedInConsole); a second use opens nothing.
  const again = await rawRequest(loginUrl, { headers: { host } });
  assert.equal(again.status, 401);
  assert.equal(again.headers["set-cookie"], undefined);

  // A session reads state; every answer carries the security headers and no CORS header.
  const state = await rawRequest(`${url}api/state`, { headers: { host, cookie: signedIn.cookie } });
  assert.equal(state.status, 200);
  for (const answer of [page, api, state, again]) {
    assert.equal(answer.headers["cache-control"], "no-store");
    assert.match(
      String(answer.headers["content-security-policy"]),
      /default-src 'none'; script-src 'self'/,
    );
    assert.match(String(answer.headers["content-security-policy"]), /frame-ancestors 'none'/);
    assert.equal(answer.headers["x-content-type-options"], "nosniff");
    assert.equal(answer.headers["x-frame-options"], "DENY");
    assert.equal(answer.headers["referrer-policy"], "no-referrer");
    assert.ok(!Object.keys(answer.headers).some((name) => name.startsWith("access-control-")));
  }

  // Foreign Host (DNS rebinding) → 421, even with a valid session.
  const rebound = await rawRequest(`${url}api/state`, {
    headers: { host: "evil.example", cookie: signedIn.cookie },
  });
  assert.equal(rebound.status, 421);
  assert.equal(
    (JSON.parse(rebound.body) as { error: { code: string } }).error.code,
    "console_host_refused",
  );
  const asset = await rawRequest(`${url}assets/console.js`, {
    headers: { host: `attacker.test:${new URL(url).port}` },
  });
  assert.equal(asset.status, 421);

  // Assets are served to our own Host without a session.
  const js = await rawRequest(`${url}assets/console.js`, { headers: { host } });
  assert.equal(js.status, 200);
  assert.match(String(js.headers["content-type"]), /javascript/);
  assert.doesNotMatch(js.body, /innerHTML/);
  const css = await rawRequest(`${url}assets/console.css`, {
    headers: { host: `localhost:${new URL(url).port}` },
  });
  assert.equal(css.status, 200);

  // State changes: CSRF, Origin, Sec-Fetch-Site, content type, body size.
  const body = { id: "nope" };
  assert.equal(
    (await postJson(signedIn, "/api/accounts/disconnect", body, { "x-csrf-token": undefined }))
      .status,
    403,
  );
  const wrong = await postJson(signedIn, "/api/accounts/disconnect", body, {
    "x-csrf-token": "x".repeat(43),
  });
  assert.equal(wrong.status, 403);
  assert.deepEqual(Object.keys(wrong.json.error as object).sort(), ["code", "message"]);
  assert.equal(
    (await postJson(signedIn, "/api/accounts/disconnect", body, { cookie: undefined })).status,
    401,
  );
  assert.equal(
    (await postJson(signedIn, "/api/accounts/disconnect", body, { origin: "http://evil.example" }))
      .status,
    403,
  );
  assert.equal(
    (await postJson(signedIn, "/api/accounts/disconnect", body, { "sec-fetch-site": "cross-site" }))
      .status,
    403,
  );
  const form = await postJson(signedIn, "/api/accounts/disconnect", "id=nope", {
    "content-type": "application/x-www-form-urlencoded",
  });
  assert.equal(form.status, 415);
  const textPlain = await postJson(signedIn, "/api/accounts/disconnect", "{}", {
    "content-type": "text/plain",
  });
  assert.equal(textPlain.status, 415);
  const big = await postJson(signedIn, "/api/accounts/disconnect", { id: "x".repeat(20_000) });
  assert.equal(big.status, 413);
  // A cross-site GET of the page is refused too (no framing, no reading, no login CSRF).
  const crossGet = await rawRequest(url, {
    headers: { host, cookie: signedIn.cookie, "sec-fetch-site": "cross-site" },
  });
  assert.equal(crossGet.status, 403);
  // The right request passes every check and reaches the route (an unknown id: 404).
  const ok = await postJson(signedIn, "/api/accounts/disconnect", body);
  assert.equal(ok.status, 404);
  assert.equal((ok.json.error as { code: string }).code, "console_account_unknown");
  // The session cookie is HttpOnly and SameSite=Strict; the page never holds the login token.
  const fresh = await rawRequest(url, { headers: { host, cookie: signedIn.cookie } });
  assert.equal(fresh.status, 200);
  assert.ok(!fresh.body.includes(new URL(loginUrl).searchParams.get("token") as string));
});

test("[CONSOLE-security-cookie] the login link sets an HttpOnly SameSite=Strict cookie and 303s to / (token leaves the address bar)", async () => {
  const { startConsole } = await import("../../src/console/index.ts");
  const running = await startConsole({ store: new MemoryCredentialStore() });
  try {
    const host = new URL(running.url).host;
    const answer = await rawRequest(running.loginUrl, { headers: { host } });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.location, "/");
    const cookie = String(answer.headers["set-cookie"]);
    assert.match(
      cookie,
      /^agentauth_console=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/$/,
    );
    const cross = await rawRequest(running.loginUrl, {
      headers: { host, "sec-fetch-site": "cross-site" },
    });
    assert.equal(cross.status, 403);
  } finally {
    await running.close();
  }
});
