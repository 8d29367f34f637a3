import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { callbackSink, type Message } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";
import { invocation, post, startTool } from "./tool-fixture.ts";
import {
  authorize,
  consent,
  oauthOperations,
  providers,
  RAP_TOOL_CLIENT,
} from "./tool-oauth-fixture.ts";

const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
const sink = await callbackSink();
const store = new MemoryCredentialStore();
const { tool, url, logs } = await startTool({
  toolset: { name: "Acme <Notes>" },
  operations: oauthOperations(idp),
  providers: providers(idp),
  store,
});

async function oauthFor(userId: string): Promise<{ id: string; authUrl: string }> {
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: userId });
  assert.equal((await post(`${url}/invoke`, body)).status, 200);
  const first: Message = await sink.waitFor((m) => m.id === body.id);
  assert.equal(first.type, "oauth");
  return { id: String(body.id), authUrl: String(first.auth_url) };
}

function formOf(html: string): { consent: string; csrf: string } {
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  return { consent: field("consent"), csrf: field("csrf") };
}

test("[RAP-oauth-consent-page] auth_url shows the tool, provider, scopes and the user_id, escaped, unframeable, not cached", async () => {
  const hostile = "<script>alert(1)</script>\u202Eevil";
  const { authUrl } = await oauthFor(hostile);
  const response = await fetch(authUrl);
  const html = await response.text();
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("cache-control"), "no-store");
  assert.equal(response.headers.get("x-frame-options"), "DENY");
  assert.match(response.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
  assert.match(response.headers.get("set-cookie") ?? "", /HttpOnly; SameSite=Strict/);
  assert.match(html, /Acme &lt;Notes&gt;/);
  assert.match(html, /Demo ID/);
  assert.match(html, /openid, profile, offline_access/);
  assert.match(html, /whoami/);
  assert.ok(!html.includes("<script>"), "no markup from the peer");
  assert.ok(!html.includes("\u202E"), "no bidi override");
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(html, /value="continue"/);
  assert.match(html, /value="cancel"/);
  assert.ok(!html.includes("code_challenge"), "the provider URL is not on the page");
});

test("[RAP-oauth-consent-csrf] Continue without the page's cookie, with a wrong token, cross-origin, or not as a form is refused; then single use", async () => {
  const { authUrl } = await oauthFor("u-csrf");
  const shown = await fetch(authUrl);
  const cookie = (shown.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  const { consent: id, csrf } = formOf(await shown.text());
  const target = new URL("/oauth/start", url);
  const form = (fields: Record<string, string>) =>
    new URLSearchParams({ consent: id, csrf, action: "continue", ...fields }).toString();
  const attempts: [string, RequestInit][] = [
    [
      "no cookie",
      { headers: { "content-type": "application/x-www-form-urlencoded" }, body: form({}) },
    ],
    [
      "wrong token",
      {
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: form({ csrf: "x".repeat(43) }),
      },
    ],
    [
      "cookie swapped for the field",
      {
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie: cookie.replace(/=.*/, "=nope"),
        },
        body: form({}),
      },
    ],
    [
      "cross-origin",
      {
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          cookie,
          origin: "https://evil.example",
        },
        body: form({}),
      },
    ],
    [
      "json",
      {
        headers: { "content-type": "application/json", cookie },
        body: JSON.stringify({ consent: id, csrf }),
      },
    ],
    [
      "oversized",
      {
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: form({ pad: "p".repeat(10_000) }),
      },
    ],
    [
      "unknown link",
      {
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: form({ consent: "nope" }),
      },
    ],
  ];
  for (const [name, init] of attempts) {
    const response = await fetch(target, { ...init, method: "POST", redirect: "manual" });
    assert.equal(response.status, 403, name);
    assert.equal(response.headers.get("location"), null, name);
    await response.arrayBuffer();
  }
  const ok = await fetch(target, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie,
      origin: new URL(url).origin,
    },
    body: form({}),
  });
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get("cache-control"), "no-store");
  const location = new URL(ok.headers.get("location") ?? "");
  assert.equal(location.origin, idp.issuer);
  assert.equal(location.searchParams.get("code_challenge_method"), "S256");
  const again = await fetch(target, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: form({}),
  });
  assert.equal(again.status, 403, "a link is used once");
});

test("[RAP-oauth-consent-cancel] Cancel ends the call with an error tool_result saying the person cancelled; the link is then dead", async () => {
  const { id, authUrl } = await oauthFor("u-cancel");
  const response = await consent(authUrl, "cancel");
  assert.equal(response.status, 200);
  assert.match(await response.text(), /Nothing was connected/);
  const result = await sink.waitFor((m) => m.id === id && m.type === "tool_result");
  assert.match(
    String(result.text),
    /^Error: The person cancelled signing in to Demo ID, so whoami did not run/,
  );
  assert.equal((await fetch(authUrl)).status, 400);
  await tool.settled();
  assert.equal(sink.forCall(id).length, 2, "oauth, then exactly one tool_result");
  assert.equal(
    await store.get({ subject: "u-cancel", issuer: idp.issuer, resource: "" }),
    undefined,
  );
});

test("[RAP-oauth-account-recorded] after the redirect the account actually connected is shown, logged (without secrets) and kept in the vault record", async () => {
  const { id, authUrl } = await oauthFor("u-account");
  const landed = await authorize(authUrl);
  assert.equal(landed.status, 200);
  assert.match(landed.page, /signed in to Demo ID as Alice Liddell/);
  assert.match(landed.page, /account id alice/);
  assert.match(landed.page, /belongs to the user &quot;u-account&quot;/);
  await sink.waitFor((m) => m.id === id && m.type === "tool_result");
  const record = await store.get({ subject: "u-account", issuer: idp.issuer, resource: "" });
  assert.equal(record?.account.name, "Alice Liddell");
  const line = logs.find((l) => l.includes("rap.oauth.authorized") && l.includes("u-account"));
  assert.ok(line);
  assert.match(line, /"account_sub":"alice"/);
  for (const value of [
    record?.tokens.accessToken,
    record?.tokens.refreshToken,
    record?.tokens.idToken,
  ]) {
    if (value) assert.ok(!logs.join("\n").includes(value.reveal()), "no token in the logs");
  }
});
