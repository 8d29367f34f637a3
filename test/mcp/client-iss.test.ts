/**
 * RFC 9207 at the MCP level: a mix-up attack delivers an authorization response to the client's loopback redirect
 * with another issuer's `iss`. The test's onAuthorizationUrl plays the browser: it follows the authorization URL at
 * the (auto-approving) embedded server up to the redirect, then delivers that redirect with `iss` altered. The sign-in
 * must fail with a typed error before the code is redeemed: the authorization server sees no token request.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import { hello, providerFor, whoami } from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();
// A real second authorization server: the issuer an attacker's server would put in `iss`.
const other = await useIdp();

/** Follows the authorization URL to the redirect, changes it with `tamper`, and delivers it. */
function tamperingBrowser(tamper: (redirect: URL) => void) {
  const delivered: URL[] = [];
  // What the loopback listener showed the person for each delivered redirect.
  const pages: string[] = [];
  return {
    delivered,
    pages,
    open: async (url: URL) => {
      const response = await fetch(url, { redirect: "manual" });
      await response.arrayBuffer();
      const location = response.headers.get("location");
      assert.ok(location, "the authorization server redirected back to the client");
      const redirect = new URL(location);
      assert.equal(redirect.searchParams.get("iss"), idp.issuer, "RFC 9207 iss was sent");
      assert.ok(redirect.searchParams.get("code"));
      tamper(redirect);
      delivered.push(redirect);
      pages.push(await (await fetch(redirect)).text());
    },
  };
}

async function signIn(t: { after: (fn: () => Promise<void>) => void }, tamper: (u: URL) => void) {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const person = tamperingBrowser(tamper);
  const provider = providerFor(mcp.url, {
    store,
    clientFor: () => ({ clientId: "agentauth-cli" }),
    onAuthorizationUrl: person.open,
    signInTimeoutMs: 15_000,
  });
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  t.after(() => client.close());
  idp.resetStats();
  const outcome: { result?: Awaited<ReturnType<Client["callTool"]>>; error?: unknown } =
    await client
      .connect(
        new StreamableHTTPClientTransport(new URL(mcp.url), {
          authProvider: provider,
          fetch: provider.fetch,
        }),
      )
      .then(
        async () => ({ result: await client.callTool(whoami) }),
        (error: unknown) => ({ error }),
      );
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  return { ...outcome, person, stored };
}

test("[MCP-client-iss-control] the redirect delivered untouched signs in (the tampering harness itself works)", async (t) => {
  const { result, person, stored } = await signIn(t, () => {});
  assert.deepEqual(result?.content, hello);
  assert.equal(person.delivered.length, 1);
  assert.match(person.pages[0] ?? "", /received the sign-in/);
  assert.deepEqual(idp.stats.byGrant.authorization_code, { success: 1, error: 0 });
  assert.equal(stored?.status, "active");
});

for (const [name, tamper] of [
  [
    "an iss naming another authorization server",
    (u: URL) => u.searchParams.set("iss", other.issuer),
  ],
  ["no iss (the server advertises that it sends one)", (u: URL) => u.searchParams.delete("iss")],
  [
    "an iss that is the issuer plus a trailing slash",
    (u: URL) => u.searchParams.set("iss", `${idp.issuer}/`),
  ],
] as const) {
  test(`[MCP-client-iss-mismatch] a redirect with ${name} fails the sign-in with a typed iss_mismatch, and the code is never redeemed`, async (t) => {
    const { error, person, stored } = await signIn(t, tamper);
    assert.equal(person.delivered.length, 1, "the tampered redirect reached the client");
    // The person is not told a sign-in arrived that agentauth then refuses.
    const page = person.pages[0] ?? "";
    assert.doesNotMatch(page, /Signed in|received the sign-in/);
    assert.match(page, /Sign-in did not complete/);
    assert.match(page, /another server/);
    const found = findCode(error);
    assert.equal(found?.code, "iss_mismatch");
    assert.doesNotMatch(found?.message ?? "", /code=|state=/);
    assert.equal(idp.stats.byGrant.authorization_code, undefined, "no token request was made");
    assert.equal(stored, undefined, "nothing was stored");
  });
}
