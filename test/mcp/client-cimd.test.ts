/**
 * Client ID Metadata Documents (MCP authorization 2026-07-28; draft-ietf-oauth-client-id-metadata-document), both
 * sides: agentAuthProvider signs in with its client_id URL when the authorization server advertises support, and the
 * embedded authorization server fetches, checks and uses such documents.
 *
 * The draft requires https client_id URLs. These tests serve documents from a loopback http origin, which the
 * embedded server accepts only because it is started with `clientIdMetadataDocuments: { allowHttpLoopback: true }`
 * (and the provider only with `allowInsecureClientMetadataUrl`); without those the same URLs are refused (tested).
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { clientMetadataDocument } from "../../src/mcp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import {
  browser,
  connect,
  connectWithPerson,
  hello,
  providerFor,
  startDocumentServer,
  whoami,
} from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const cimdIdp = await useIdp({ clientIdMetadataDocuments: { allowHttpLoopback: true } });
const plainIdp = await useIdp();
const hostileIdp = await useIdp({
  clientIdMetadataDocuments: { allowHttpLoopback: true, fetchTimeoutMs: 500 },
});
// Every top-level await comes before the first test(): the runner may start tests (and, once they are done, the
// file's after() hooks) while the module still awaits.
const docs = await startDocumentServer();

function publish(path: string, extra: Record<string, unknown> = {}): string {
  const url = `${docs.origin}${path}`;
  docs.json(path, {
    ...clientMetadataDocument({
      clientId: url,
      clientName: "CIMD test agent",
      allowInsecure: true,
    }),
    ...extra,
  });
  return url;
}

async function metadata(issuer: string): Promise<Record<string, unknown>> {
  return (await fetch(`${issuer}/.well-known/openid-configuration`)).json() as Promise<
    Record<string, unknown>
  >;
}

test("[MCP-client-cimd] through the official client, an authorization server that advertises CIMD gets the client_id URL: no dynamic registration, the credential's clientId is the URL, and a refresh at expiry works", async () => {
  assert.equal((await metadata(cimdIdp.issuer)).client_id_metadata_document_supported, true);
  const clientId = publish("/agents/cimd-signin.json");
  const mcp = await startProtectedMcpServer({ issuer: cimdIdp.issuer });
  const store = new MemoryCredentialStore();
  const person = browser();
  const registrationsBefore = cimdIdp.memory().registrations;
  const provider = providerFor(mcp.url, {
    store,
    clientMetadataUrl: clientId,
    allowInsecureClientMetadataUrl: true,
    onAuthorizationUrl: person.open,
  });
  const client = await connect(mcp.url, provider);

  assert.deepEqual((await client.callTool(whoami)).content, hello);

  assert.equal(person.asked.length, 1);
  assert.equal(person.asked[0]?.searchParams.get("client_id"), clientId);
  // The listener's port is not in the document's http://127.0.0.1/callback: RFC 8252 §7.3 port variance held.
  assert.notEqual(new URL(person.asked[0]?.searchParams.get("redirect_uri") ?? "").port, "");
  const stored = await store.get({ subject: "alice", issuer: cimdIdp.issuer, resource: mcp.url });
  assert.equal(stored?.clientId, clientId);
  assert.equal(cimdIdp.memory().registrations, registrationsBefore, "no dynamic registration");
  assert.ok(docs.hits("/agents/cimd-signin.json") >= 1, "the authorization server fetched it");

  await expireAccessToken(store, stored);
  cimdIdp.resetStats();
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.deepEqual(cimdIdp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(person.asked.length, 1);
});

test("[MCP-client-cimd-only] a CIMD server without dynamic registration still signs the client in with its URL", async () => {
  const idp = await useIdp({
    clientIdMetadataDocuments: { allowHttpLoopback: true },
    dynamicRegistration: false,
  });
  assert.equal((await metadata(idp.issuer)).registration_endpoint, undefined);
  const clientId = publish("/agents/cimd-only.json");
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { client, person } = await connectWithPerson(mcp.url, {
    clientMetadataUrl: clientId,
    allowInsecureClientMetadataUrl: true,
  });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(person.asked[0]?.searchParams.get("client_id"), clientId);
});

test("[MCP-client-cimd-dcr-fallback] a server that does not advertise CIMD gets a dynamic registration even when the host has a document; the document is never fetched", async () => {
  assert.equal((await metadata(plainIdp.issuer)).client_id_metadata_document_supported, undefined);
  const clientId = publish("/agents/not-advertised.json");
  const mcp = await startProtectedMcpServer({ issuer: plainIdp.issuer });
  const before = plainIdp.memory().registrations;
  const { client, person } = await connectWithPerson(mcp.url, {
    clientMetadataUrl: clientId,
    allowInsecureClientMetadataUrl: true,
  });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  const used = person.asked[0]?.searchParams.get("client_id");
  assert.ok(used && used !== clientId);
  assert.equal(plainIdp.memory().registrations, before + 1);
  assert.equal(docs.hits("/agents/not-advertised.json"), 0);
});

test("[MCP-client-cimd-no-url] a CIMD server and a host without a document: dynamic registration", async () => {
  const mcp = await startProtectedMcpServer({ issuer: cimdIdp.issuer });
  const before = cimdIdp.memory().registrations;
  const { client, person } = await connectWithPerson(mcp.url);
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(cimdIdp.memory().registrations, before + 1);
  assert.ok(!person.asked[0]?.searchParams.get("client_id")?.startsWith("http"));
});

for (const [name, cimd, withUrl] of [
  ["neither CIMD nor dynamic registration", false, false],
  ["CIMD but no document from the host, and no dynamic registration", true, false],
] as const) {
  test(`[MCP-client-registration-none] ${name}: a typed registration_unavailable before anyone is asked`, async (t) => {
    const idp = await useIdp({
      dynamicRegistration: false,
      ...(cimd ? { clientIdMetadataDocuments: { allowHttpLoopback: true } } : {}),
    });
    const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
    const person = browser();
    const provider = providerFor(mcp.url, {
      ...(withUrl ? { clientMetadataUrl: publish("/unused.json") } : {}),
      onAuthorizationUrl: person.open,
    });
    const client = new Client({ name: "agentauth-test", version: "1.0.0" });
    t.after(() => client.close());
    const error = await client
      .connect(new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider }))
      .then(
        () => assert.fail("connecting must fail"),
        (e: unknown) => e,
      );
    const found = findCode(error);
    assert.equal(found?.code, "registration_unavailable");
    assert.match(found?.message ?? "", /clientFor/);
    assert.equal(person.asked.length, 0);
  });
}

/** What the authorization server answers when a client with this id uses its token endpoint. */
async function tokenEndpointError(issuer: string, clientId: string): Promise<string> {
  const response = await fetch(`${issuer}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: "not-a-real-refresh-token",
      client_id: clientId,
    }),
  });
  return ((await response.json()) as { error: string }).error;
}

test("[IDP-cimd-positive-control] a good document is accepted at the token endpoint (the refusal is then about the grant, not the client)", async () => {
  const clientId = publish("/control.json");
  assert.equal(await tokenEndpointError(cimdIdp.issuer, clientId), "invalid_grant");
});

const good = (path: string) =>
  clientMetadataDocument({
    clientId: `${docs.origin}${path}`,
    clientName: "x",
    allowInsecure: true,
  });
const hostile: [string, string, (path: string) => void][] = [
  ["another client_id", "/h/other-id.json", (p) => docs.json(p, good("/h/someone-else.json"))],
  [
    "a client secret",
    "/h/secret.json",
    (p) => docs.json(p, { ...good(p), client_secret: "s3cret-s3cret-s3cret" }),
  ],
  [
    "a shared-secret auth method",
    "/h/basic.json",
    (p) => docs.json(p, { ...good(p), token_endpoint_auth_method: "client_secret_basic" }),
  ],
  [
    "no redirect_uris",
    "/h/no-redirects.json",
    (p) => docs.json(p, { ...good(p), redirect_uris: [] }),
  ],
  [
    "an oversized document",
    "/h/big.json",
    (p) => docs.json(p, { ...good(p), client_name: "x".repeat(6 * 1024) }),
  ],
  [
    "text that is not JSON",
    "/h/not-json.json",
    (p) =>
      docs.at(p, (_q, r) => r.writeHead(200, { "content-type": "application/json" }).end("{no")),
  ],
  [
    "an http redirect URI off loopback (the code would cross the network in clear)",
    "/h/http-redirect.json",
    (p) =>
      docs.json(p, {
        ...good(p),
        redirect_uris: ["http://agent.example/callback"],
        application_type: "web",
      }),
  ],
  ["a JSON array", "/h/array.json", (p) => docs.json(p, [good(p)])],
  ["a non-JSON content type", "/h/html.json", (p) => docs.json(p, good(p), "text/html")],
  [
    "a redirect to a good document elsewhere",
    "/h/redirect.json",
    (p) => {
      docs.json("/h/redirect-target.json", good(p));
      docs.at(p, (_q, r) => r.writeHead(302, { location: "/h/redirect-target.json" }).end());
    },
  ],
  ["a 404", "/h/missing.json", () => {}],
  ["a server that never answers", "/h/hang.json", (p) => docs.at(p, () => {})],
];
for (const [name, path, serve] of hostile) {
  test(`[IDP-cimd-hostile] a client metadata document with ${name} is refused: invalid_client`, async () => {
    serve(path);
    assert.equal(
      await tokenEndpointError(hostileIdp.issuer, `${docs.origin}${path}`),
      "invalid_client",
    );
    assert.ok(docs.hits(path) >= 1, "the document was fetched and refused, not skipped");
  });
}

test("[IDP-cimd-hostile] at the authorization endpoint, a refused document shows the person an error and never redirects to its redirect URI", async () => {
  const path = "/h/authorize-secret.json";
  docs.json(path, { ...good(path), client_secret: "s3cret-s3cret-s3cret" });
  const url = new URL(`${hostileIdp.issuer}/auth`);
  url.search = new URLSearchParams({
    client_id: `${docs.origin}${path}`,
    redirect_uri: "http://127.0.0.1:9/callback",
    response_type: "code",
    scope: "openid",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "s",
  }).toString();
  const response = await fetch(url, { redirect: "manual" });
  assert.equal(response.headers.get("location"), null);
  assert.equal(response.status, 400);
  assert.match(await response.text(), /invalid_client/);
});

test("[IDP-cimd-off] http loopback client_id URLs are refused without allowHttpLoopback, and nothing is fetched; CIMD is off by default", async () => {
  const strict = await useIdp({ clientIdMetadataDocuments: {} });
  const path = "/h/strict.json";
  docs.json(path, good(path));
  assert.equal(await tokenEndpointError(strict.issuer, `${docs.origin}${path}`), "invalid_client");
  assert.equal(
    await tokenEndpointError(plainIdp.issuer, `${docs.origin}${path}`),
    "invalid_client",
  );
  assert.equal(docs.hits(path), 0);
  assert.equal((await metadata(strict.issuer)).client_id_metadata_document_supported, true);
});

test("[MCP-client-cimd-document] clientMetadataDocument builds a public native client's document", () => {
  const doc = clientMetadataDocument({
    clientId: "https://agent.example/oauth/client.json",
    clientName: "Example agent",
    deviceFlow: true,
    clientUri: "https://agent.example/",
  });
  assert.deepEqual(doc, {
    client_id: "https://agent.example/oauth/client.json",
    client_name: "Example agent",
    redirect_uris: ["http://127.0.0.1/callback"],
    grant_types: [
      "authorization_code",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:device_code",
    ],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: "native",
    client_uri: "https://agent.example/",
  });
  const web = clientMetadataDocument({
    clientId: "https://agent.example/c.json",
    clientName: "Web agent",
    redirectUris: ["https://agent.example/callback"],
  });
  assert.equal(web.application_type, "web");
});

for (const [name, options] of [
  ["an http client_id", { clientId: "http://agent.example/c.json" }],
  ["an http loopback client_id without allowInsecure", { clientId: "http://127.0.0.1:9/c.json" }],
  ["a client_id with a fragment", { clientId: "https://agent.example/c.json#x" }],
  ["a client_id with a user", { clientId: "https://user:pw@agent.example/c.json" }],
  ["a client_id without a path", { clientId: "https://agent.example" }],
  ["a client_id with a dot segment", { clientId: "https://agent.example/a/../c.json" }],
  ["a client_id with a space", { clientId: "https://agent.example/c .json" }],
  ["a client_id that is not a URL", { clientId: "agent" }],
  ["a client_id that is not a string", { clientId: 42 }],
  ["a secret", { clientSecret: "s3cret" }],
  ["an empty name", { clientName: " " }],
  ["no redirect URIs", { redirectUris: [] }],
  ["an http redirect off loopback", { redirectUris: ["http://agent.example/cb"] }],
  [
    "an http redirect off loopback, even with allowInsecure",
    { allowInsecure: true, redirectUris: ["http://agent.example/cb"] },
  ],
  ["a redirect with a fragment", { redirectUris: ["http://127.0.0.1/cb#f"] }],
  ["a javascript: redirect", { redirectUris: ["javascript:alert(1)"] }],
  ["an http client_uri", { clientUri: "http://agent.example/" }],
] as const) {
  test(`[MCP-client-cimd-document-hostile] clientMetadataDocument refuses ${name} with a typed client_metadata_invalid`, () => {
    assert.throws(
      () =>
        clientMetadataDocument({
          clientId: "https://agent.example/c.json",
          clientName: "Agent",
          ...(options as object),
        } as Parameters<typeof clientMetadataDocument>[0]),
      (error: unknown) => {
        assert.equal(findCode(error)?.code, "client_metadata_invalid");
        assert.doesNotMatch(String((error as Error).message), /s3cret|pw@/);
        return true;
      },
    );
  });
}

test("[MCP-client-cimd-url-hostile] agentAuthProvider refuses a bad clientMetadataUrl at construction, typed", () => {
  for (const clientMetadataUrl of [
    "http://agent.example/c.json",
    "http://127.0.0.1:9/c.json",
    "https://agent.example/c.json#x",
    "not a url",
  ]) {
    assert.throws(
      () => providerFor("https://mcp.example/mcp", { clientMetadataUrl }),
      (error: unknown) => findCode(error)?.code === "client_metadata_invalid",
      clientMetadataUrl,
    );
  }
});
