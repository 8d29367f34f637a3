/**
 * Issue 20 §1.1: the provider URL that Continue hands out is bound to the browser that pressed it. The attack, end
 * to end through a real runtime, the tool and the embedded authorization server: carol invokes `whoami` as herself,
 * presses Continue on her own consent page, and sends alice the provider URL. Alice signs in (the server approves
 * as alice); before the fix, alice's sign-in was stored under carol's user_id and carol's `whoami` answered
 * "signed in as alice", without alice ever seeing the consent page.
 */

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { CookieBrowser } from "../support/cookie-browser.ts";
import { useIdp } from "../support/idp.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { startTool } from "./tool-fixture.ts";
import { oauthOperations, providers, RAP_TOOL_CLIENT } from "./tool-oauth-fixture.ts";

const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] }); // approves every sign-in as alice
const store = new MemoryCredentialStore();
const { url: toolUrl, logs } = await startTool({
  operations: oauthOperations(idp),
  providers: providers(idp),
  store,
});
const { runtime, recorded } = await testRuntime({ toolsetUrls: [toolUrl] });

async function invokeAs(userId: string): Promise<{ groupId: string; id: string }> {
  const call = { groupId: `thread_${randomUUID()}`, id: `call_${randomUUID()}` };
  const outcome = await runtime.invoke({ ...call, userId, operation: "whoami", arguments: {} });
  assert.ok(outcome.accepted);
  return call;
}

async function authUrlOf(id: string): Promise<string> {
  for (;;) {
    const found = recorded.authorizations.find((a) => a.id === id);
    if (found) return found.authUrl;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Opens the consent page in `browser` and presses Continue: the provider's authorization URL it is sent to. */
async function pressContinue(browser: CookieBrowser, authUrl: string): Promise<URL> {
  const shown = await browser.fetch(authUrl);
  const html = await shown.text();
  assert.equal(shown.status, 200, html);
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  const decided = await browser.fetch(new URL("/oauth/start", authUrl), {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(authUrl).origin,
    },
    body: new URLSearchParams({
      consent: field("consent"),
      csrf: field("csrf"),
      action: "continue",
    }).toString(),
  });
  await decided.arrayBuffer();
  assert.equal(decided.status, 303);
  return new URL(decided.headers.get("location") ?? "");
}

/** The person signs in at the provider in `browser` and lands on the tool's redirect endpoint. */
async function signInAtProvider(
  browser: CookieBrowser,
  providerUrl: URL,
): Promise<{ status: number; page: string; callback: URL }> {
  const approved = await browser.fetch(providerUrl, { redirect: "manual" });
  await approved.arrayBuffer();
  const callback = new URL(approved.headers.get("location") ?? "", providerUrl);
  assert.equal(callback.pathname, "/oauth/callback");
  const landed = await browser.fetch(callback);
  return { status: landed.status, page: await landed.text(), callback };
}

test("[RAP-consent-browser-binding] a provider URL carried from the consenting browser to another is refused before any code exchange: nothing is stored under the attacker's user_id, the attacker's call ends with an error", async () => {
  const carol = new CookieBrowser();
  const alice = new CookieBrowser();
  const call = await invokeAs("carol");
  const providerUrl = await pressContinue(carol, await authUrlOf(call.id));
  const codesBefore = idp.stats.byGrant.authorization_code?.success ?? 0;

  // carol sends alice the provider URL; alice signs in there (as alice) and never sees the consent page.
  const landed = await signInAtProvider(alice, providerUrl);
  assert.equal(landed.status, 403, landed.page);
  assert.match(landed.page, /another browser/);
  assert.match(landed.page, /Nothing was connected/);
  assert.ok(!/signed in/i.test(landed.page), "no success page");

  assert.equal(
    idp.stats.byGrant.authorization_code?.success ?? 0,
    codesBefore,
    "the code was never exchanged",
  );
  assert.equal(
    await store.get({ subject: "carol", issuer: idp.issuer, resource: "" }),
    undefined,
    "alice's account is not stored under carol",
  );
  const settled = await runtime.waitForResult(call.groupId, call.id);
  assert.match(
    settled.result.text,
    /^Error: .*another browser.*whoami did not run/s,
    settled.result.text,
  );
  assert.ok(!settled.result.text.includes("alice"), settled.result.text);
  assert.ok(
    logs.some((line) => line.includes('"rap.oauth.browser_mismatch"')),
    "the refusal is logged",
  );
  // The link is spent: carol's own browser cannot use it afterwards either.
  const again = await carol.fetch(landed.callback);
  assert.equal(again.status, 400);
  await again.arrayBuffer();

  // carol's next whoami asks for a sign-in again; it never answers with alice's account.
  const next = await invokeAs("carol");
  assert.match(await authUrlOf(next.id), /\/oauth\/start\?consent=/);
});

test("[RAP-consent-browser-binding] the browser that pressed Continue completes the sign-in; the binding cookie is HttpOnly, SameSite=Lax, scoped to the redirect path, and cleared after use", async () => {
  const erin = new CookieBrowser();
  const call = await invokeAs("erin");
  const authUrl = await authUrlOf(call.id);
  // Continue, by hand this time, to read the Set-Cookie headers it answers with.
  const form = await erin.fetch(authUrl).then((r) => r.text());
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(form)?.[1] ?? "";
  const decided = await erin.fetch(new URL("/oauth/start", authUrl), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      consent: field("consent"),
      csrf: field("csrf"),
      action: "continue",
    }).toString(),
  });
  await decided.arrayBuffer();
  assert.equal(decided.status, 303);
  const binding = decided.headers
    .getSetCookie()
    .find((c) => c.startsWith("rap_signin_") && !/Max-Age=0/.test(c));
  assert.ok(binding, decided.headers.getSetCookie().join(" | "));
  assert.match(binding, /; Path=\/oauth\/callback;/);
  assert.match(binding, /; HttpOnly/);
  assert.match(binding, /; SameSite=Lax/);
  assert.match(binding, /; Max-Age=\d+/);

  const landed = await signInAtProvider(erin, new URL(decided.headers.get("location") ?? ""));
  assert.equal(landed.status, 200, landed.page);
  assert.match(landed.page, /belongs to the user &quot;erin&quot;/);
  assert.equal(erin.cookieHeader(landed.callback), "", "the binding cookie is cleared");
  const settled = await runtime.waitForResult(call.groupId, call.id);
  assert.match(settled.result.text, /^signed in as alice/);
});

test("[RAP-consent-cookie-wrong-value] on plain-http loopback too, a browser that holds the binding cookie's name with another value (present but wrong) is refused before the exchange, nothing is stored, and the plain name and redirect path are kept", async () => {
  const carol = new CookieBrowser();
  const alice = new CookieBrowser();
  const call = await invokeAs("carol");
  const authUrl = await authUrlOf(call.id);
  const providerUrl = await pressContinue(carol, authUrl);
  const callbackUrl = new URL("/oauth/callback", authUrl);
  const [name = "", value = ""] = carol.cookieHeader(callbackUrl).split("=");
  assert.match(name, /^rap_signin_[A-Za-z0-9_-]{16}$/, "no prefix on plain http");
  // The right name, a value that is not carol's: however alice's browser came to hold it.
  assert.ok(value.length > 0);
  alice.store(callbackUrl, [
    `${name}=${randomBytes(32).toString("base64url")}; Path=/oauth/callback; HttpOnly`,
  ]);
  assert.match(alice.cookieHeader(callbackUrl), new RegExp(`^${name}=`));
  const codesBefore = idp.stats.byGrant.authorization_code?.success ?? 0;

  const landed = await signInAtProvider(alice, providerUrl);
  assert.equal(landed.status, 403, landed.page);
  assert.match(landed.page, /another browser/);
  assert.equal(idp.stats.byGrant.authorization_code?.success ?? 0, codesBefore);
  assert.equal(await store.get({ subject: "carol", issuer: idp.issuer, resource: "" }), undefined);
  const settled = await runtime.waitForResult(call.groupId, call.id);
  assert.match(settled.result.text, /^Error: .*another browser/s);
});
