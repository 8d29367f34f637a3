import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { autoSubmittableForm } from "../../src/idp/auto-approve.ts";
import { consentPage, loginPage } from "../../src/idp/pages.ts";
import {
  authorizationRedirect,
  authorizationUrl,
  LOOPBACK_REDIRECT,
  pkce,
} from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

// --- The form reader (pure) ---

test("[IDP-auto-approve-emulator] a POST form of hidden inputs is submittable, with entities decoded", () => {
  const form = autoSubmittableForm(
    `<p>Confirm</p><form method="post" action="/device?x=1&amp;y=&quot;2&quot;">
     <input type="hidden" name="xsrf" value="a&amp;b&lt;c&gt;&#39;d&#x27;e">
     <input type="hidden" name="double" value="&amp;lt;">
     <input type="hidden" name="confirm" value="yes"></form>`,
  );
  assert.ok(form);
  assert.equal(form.action, '/device?x=1&y="2"');
  assert.deepEqual(
    [...form.fields],
    [
      ["xsrf", "a&b<c>'d'e"],
      ["double", "&lt;"],
      ["confirm", "yes"],
    ],
  );
});

test("[IDP-auto-approve-emulator] forms a person must type into are refused", () => {
  const visible = [
    `<input name="login">`,
    `<input type="text" name="user_code">`,
    `<input type="password" name="password">`,
    `<input type="hidden" name="a" value="1"><input type="email" name="b">`,
    `<input type='hidden' name='a'>`,
    // The word "hidden" in another attribute does not hide an input.
    `<input data-type="hidden" name="a">`,
    `<input type="text" title='type="hidden"' name="a">`,
  ];
  for (const inputs of visible) {
    assert.equal(
      autoSubmittableForm(`<form method="post" action="/x">${inputs}</form>`),
      undefined,
      inputs,
    );
  }
  assert.equal(
    autoSubmittableForm(loginPage({ uid: "uid123", clientName: "client" })),
    undefined,
    "the real login page",
  );
});

test("[IDP-auto-approve-emulator] GET forms, forms without an action and pages without a form are refused", () => {
  assert.equal(
    autoSubmittableForm(`<form method="get" action="/x"><input type="hidden" name="a"></form>`),
    undefined,
  );
  assert.equal(autoSubmittableForm(`<form action="/x"></form>`), undefined);
  assert.equal(
    autoSubmittableForm(`<form method="post"><input type="hidden" name="a"></form>`),
    undefined,
  );
  assert.equal(
    autoSubmittableForm(`<form data-method="post" action="/x"></form>`),
    undefined,
    "a GET form in disguise",
  );
  assert.equal(autoSubmittableForm("<p>Signed in</p>"), undefined);
});

test("[IDP-auto-approve-emulator] on the consent page it presses Allow, not Deny", () => {
  const form = autoSubmittableForm(
    consentPage({ uid: "uid123", clientName: "client", scopes: ["openid"], resources: [] }),
  );
  assert.equal(form?.action, "/interaction/uid123/confirm");
});

// --- The emulation marker cannot be forged ---

const idp = await useIdp();

async function redirectWithMarker(value: string): Promise<URL> {
  const { challenge } = await pkce();
  return authorizationRedirect(authorizationUrl(idp.issuer, challenge), {
    "x-agentauth-emulated": value,
  });
}

test("[IDP-auto-approve-emulator] a forged x-agentauth-emulated header is still emulated: the answer is a code for the client", async () => {
  // Same length as the real marker (32 random bytes, base64url) and a few other shapes.
  for (const forged of [randomBytes(32).toString("base64url"), "1", "true", ""]) {
    const location = await redirectWithMarker(forged);
    assert.equal(
      `${location.origin}${location.pathname}`,
      LOOPBACK_REDIRECT,
      `forged ${JSON.stringify(forged)} got through to ${location.href}`,
    );
    assert.ok(location.searchParams.get("code"));
  }
});

test("[IDP-auto-approve-emulator] the device page with a user_code completes the sign-in", async () => {
  const response = await fetch(`${idp.issuer}/device/auth`, {
    method: "POST",
    body: new URLSearchParams({ client_id: "agentauth-cli", scope: "openid" }),
  });
  const { verification_uri_complete } = (await response.json()) as {
    verification_uri_complete: string;
  };
  const page = await fetch(verification_uri_complete, {
    headers: { "x-agentauth-emulated": randomBytes(32).toString("base64url") },
  });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<h1>Signed in<\/h1>/);
});
