/**
 * The sign-in cookie that binds a RAP sign-in to the browser that pressed Continue (issue 20 §1.1), on a tool whose
 * publicBaseUrl is https: its name comes from `state`, which the attacker who pressed Continue on their own consent
 * page holds, together with their own cookie value. Without a prefix, anyone who can set a cookie for the tool's
 * host (a network attacker answering one plain-http request to it, a sibling subdomain with `Domain=`) could plant
 * the attacker's cookie in a victim's browser and bring the consent bypass back. As `__Host-…` (Secure, Path=/, no
 * Domain) a browser accepts it only from the tool's own https origin.
 *
 * The tool listens on loopback http behind the name https://tools.example (as behind a TLS-terminating proxy); the
 * test's browsers map that origin to it and apply the cookie rules of RFC 6265bis to the URL they see.
 */

import assert from "node:assert/strict";
import { randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { createToolServer } from "../../src/rap/tool/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { CookieBrowser } from "../support/cookie-browser.ts";
import { useIdp } from "../support/idp.ts";
import { FAST_DELIVERY, invocation, post } from "./tool-fixture.ts";
import { oauthOperations, SCOPE } from "./tool-oauth-fixture.ts";

const PUBLIC = "https://tools.example";
/** The tool's client at the authorization server, registered with the tool's public redirect URI. */
const HTTPS_TOOL_CLIENT = {
  client_id: "rap-tool-https",
  application_type: "web",
  token_endpoint_auth_method: "none",
  redirect_uris: [`${PUBLIC}/oauth/callback`],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
} as const;

const idp = await useIdp({ clients: [HTTPS_TOOL_CLIENT] }); // approves every sign-in as alice
const sink = await callbackSink();
const store = new MemoryCredentialStore();
const tool = createToolServer({
  toolset: { name: "https-tools" },
  operations: oauthOperations(idp),
  providers: {
    demo: {
      issuer: idp.issuer,
      client: { clientId: HTTPS_TOOL_CLIENT.client_id },
      scope: SCOPE,
      displayName: "Demo ID",
    },
  },
  store,
  publicBaseUrl: PUBLIC,
  delivery: FAST_DELIVERY,
});
const server = createServer(tool.handler);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const listening = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(async () => {
  await tool.settled();
  tool.shutdown();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});

const browser = () => new CookieBrowser({ origins: { [PUBLIC]: listening } });

/** `user_id` invokes `whoami`: the call and the auth_url (on the public origin) of its oauth message. */
async function invokeAs(userId: string): Promise<{ id: string; authUrl: string }> {
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: userId });
  assert.equal((await post(`${listening}/invoke`, body)).status, 200);
  const first = await sink.waitFor((m) => m.id === body.id);
  assert.equal(first.type, "oauth");
  const authUrl = String(first.auth_url);
  assert.equal(new URL(authUrl).origin, PUBLIC);
  return { id: String(body.id), authUrl };
}

/** Shows the consent page in `person` and presses Continue: the 303 that answers it. */
async function pressContinue(person: CookieBrowser, authUrl: string): Promise<Response> {
  const html = await person.fetch(authUrl).then((r) => r.text());
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  const decided = await person.fetch(new URL("/oauth/start", authUrl), {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: PUBLIC },
    body: new URLSearchParams({
      consent: field("consent"),
      csrf: field("csrf"),
      action: "continue",
    }).toString(),
  });
  await decided.arrayBuffer();
  assert.equal(decided.status, 303);
  return decided;
}

/** The binding cookie Continue set (not the consent cookie it clears). */
function bindingOf(decided: Response): { line: string; name: string; value: string } {
  const line = decided.headers
    .getSetCookie()
    .find((c) => /rap_signin_/.test(c) && !/Max-Age=0/.test(c));
  assert.ok(line, decided.headers.getSetCookie().join(" | "));
  const pair = line.split(";")[0] ?? "";
  const eq = pair.indexOf("=");
  return { line, name: pair.slice(0, eq), value: pair.slice(eq + 1) };
}

/** `person` signs in at the provider (as alice) and lands on the tool's redirect endpoint. */
async function signInAtProvider(
  person: CookieBrowser,
  providerUrl: URL,
): Promise<{ status: number; page: string; setCookie: string[] }> {
  const approved = await person.fetch(providerUrl, { redirect: "manual" });
  await approved.arrayBuffer();
  const callback = new URL(approved.headers.get("location") ?? "", providerUrl);
  assert.equal(callback.origin + callback.pathname, `${PUBLIC}/oauth/callback`);
  const landed = await person.fetch(callback);
  return {
    status: landed.status,
    page: await landed.text(),
    setCookie: landed.headers.getSetCookie(),
  };
}

async function resultOf(id: string): Promise<string> {
  const result = await sink.waitFor((m) => m.id === id && m.type === "tool_result");
  return String(result.text);
}

test("[RAP-consent-cookie-host-prefix] on an https publicBaseUrl the binding cookie is __Host-… (Secure, Path=/, no Domain, HttpOnly, SameSite=Lax), cleared the same way, and the browser that pressed Continue completes the sign-in", async () => {
  const erin = browser();
  const call = await invokeAs("erin");
  const decided = await pressContinue(erin, call.authUrl);
  const binding = bindingOf(decided);
  assert.match(binding.name, /^__Host-rap_signin_[A-Za-z0-9_-]{16}$/, binding.line);
  assert.match(binding.line, /; Path=\/(;|$)/, binding.line);
  assert.match(binding.line, /; Secure(;|$)/, binding.line);
  assert.match(binding.line, /; HttpOnly(;|$)/, binding.line);
  assert.match(binding.line, /; SameSite=Lax(;|$)/, binding.line);
  assert.doesNotMatch(binding.line, /Domain=/i, binding.line);

  const landed = await signInAtProvider(erin, new URL(decided.headers.get("location") ?? ""));
  assert.equal(landed.status, 200, landed.page);
  assert.match(landed.page, /belongs to the user &quot;erin&quot;/);
  const cleared = landed.setCookie.find((c) => c.startsWith(`${binding.name}=;`));
  assert.ok(cleared, landed.setCookie.join(" | "));
  assert.match(cleared, /; Path=\/(;|$)/);
  assert.match(cleared, /; Secure(;|$)/);
  assert.match(cleared, /Max-Age=0/);
  assert.equal(erin.count(new URL(PUBLIC)), 0, "nothing left in the browser");
  assert.match(await resultOf(call.id), /^signed in as alice/);
});

/**
 * The attack of [RAP-consent-browser-binding], with the attacker's cookie planted in the victim's browser first:
 * carol presses Continue for her own call, keeps her binding cookie (name and value), plants it in alice's browser
 * with `plant`, and sends alice the provider URL.
 */
async function plantedAttack(
  plant: (victim: CookieBrowser, cookie: { name: string; value: string }) => void,
) {
  const carol = browser();
  const alice = browser();
  const userId = `carol-${randomUUID()}`;
  const call = await invokeAs(userId);
  const decided = await pressContinue(carol, call.authUrl);
  const cookie = bindingOf(decided);
  plant(alice, cookie);
  const codesBefore = idp.stats.byGrant.authorization_code?.success ?? 0;
  const landed = await signInAtProvider(alice, new URL(decided.headers.get("location") ?? ""));
  assert.equal(landed.status, 403, landed.page);
  assert.match(landed.page, /another browser/);
  assert.equal(
    idp.stats.byGrant.authorization_code?.success ?? 0,
    codesBefore,
    "the code was never exchanged",
  );
  assert.equal(
    await store.get({ subject: userId, issuer: idp.issuer, resource: "" }),
    undefined,
    "alice's account is not stored under carol's user_id",
  );
  assert.match(await resultOf(call.id), /^Error: .*another browser/s);
}

/** The cookie's name without a `__Host-` prefix, for a planter who tries the bare name as well. */
const bare = (name: string) => name.replace(/^__Host-/, "");

test("[RAP-consent-cookie-host-prefix] a network attacker who answers one plain-http request for the tool's host cannot plant the attacker's binding cookie: the victim's sign-in is refused, nothing is stored under the attacker's user_id", async () => {
  await plantedAttack((victim, { name, value }) => {
    // What a Set-Cookie on http://tools.example/ can do: any name, any path, with or without Secure.
    const http = new URL("http://tools.example/");
    for (const cookieName of new Set([name, bare(name)])) {
      victim.store(http, [
        `${cookieName}=${value}; Path=/oauth/callback; HttpOnly`,
        `${cookieName}=${value}; Path=/; Secure; HttpOnly`,
        `${cookieName}=${value}; Path=/`,
      ]);
    }
  });
});

test("[RAP-consent-cookie-host-prefix] a sibling subdomain (Domain=tools.example, over https) cannot plant the attacker's binding cookie either", async () => {
  await plantedAttack((victim, { name, value }) => {
    const sibling = new URL("https://evil.tools.example/");
    for (const cookieName of new Set([name, bare(name)])) {
      victim.store(sibling, [
        `${cookieName}=${value}; Domain=tools.example; Path=/oauth/callback; Secure; HttpOnly`,
        `${cookieName}=${value}; Domain=tools.example; Path=/; Secure; HttpOnly`,
      ]);
    }
  });
});

test("[RAP-consent-cookie-wrong-value] a victim's browser holding a binding cookie under the right name but with another value is refused as one holding none: present but wrong is not the same browser", async () => {
  await plantedAttack((victim, { name }) => {
    // However it got there: the right name, set from the tool's own origin, a value that is not the attacker's.
    victim.store(new URL(`${PUBLIC}/`), [
      `${name}=${randomBytes(32).toString("base64url")}; Path=/; Secure; HttpOnly; SameSite=Lax`,
    ]);
    assert.match(victim.cookieHeader(new URL(`${PUBLIC}/oauth/callback`)), /rap_signin_/);
  });
});
