/**
 * Discovery as the MCP spec orders it, against the strict embedded authorization server (issue 18 items 2, 3, 8):
 * a root-only RFC 9728 document naming the server's origin, the 2025-03-26 revision's fallbacks (metadata at the
 * MCP server's origin, then the default endpoints), the real reason when discovery fails, and no redirects followed.
 */

import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { test } from "node:test";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import {
  buildBearerChallenge,
  createTokenVerifier,
  discoverAuthorizationServer,
  MetadataCache,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { scriptedServer } from "../support/scripted-server.ts";
import { findCode } from "./fixtures/find-code.ts";
import {
  browser,
  connectRefused,
  connectWithPerson,
  hello,
  providerFor,
  startDocumentServer,
  whoami,
} from "./fixtures/mcp-client.ts";
import {
  startProtectedMcpServer,
  startRootMetadataServer,
} from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();

test("[MCP-client-root-metadata-origin] a root-only metadata document naming the server's origin is accepted: the origin is the RFC 8707 resource asked for, checked and kept", async (t) => {
  const mcp = await startRootMetadataServer(idp.issuer);
  const origin = new URL(mcp.url).origin;
  const store = new MemoryCredentialStore();
  const { client, person } = await connectWithPerson(mcp.url, { store }, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(person.asked[0]?.searchParams.get("resource"), origin);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: origin });
  assert.equal(stored?.status, "active", "kept under the resource the token is for");
});

test("[MCP-client-path-prefix-resource] a document naming a path prefix of the server URL on its origin is accepted; one naming a sibling path, another origin or a longer path is refused", async (t) => {
  const accepted = await startProtectedMcpServer({
    issuer: idp.issuer,
    resource: (url) => `${new URL(url).origin}/`,
  });
  const { client } = await connectWithPerson(accepted.url, {}, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);

  for (const claim of [
    (o: string) => `${o}/mc`,
    (o: string) => `${o}/mcp/deeper`,
    (o: string) => `${o}/other/mcp`,
    () => "http://127.0.0.2:9/mcp",
  ]) {
    const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
    mcp.metadataResource = claim(new URL(mcp.url).origin);
    const person = browser();
    const error = await connectRefused(
      t,
      mcp.url,
      providerFor(mcp.url, { onAuthorizationUrl: person.open }),
    );
    assert.equal(findCode(error)?.code, "resource_mismatch", mcp.metadataResource);
    assert.equal(person.asked.length, 0);
  }
});

test("[MCP-client-discovery-real-reason] when the path-aware URL answers 404 and the root document names another resource, the error is the mismatch, not the 404", async (t) => {
  const server = await scriptedServer({
    "/mcp": () => ({ status: 401, headers: { "www-authenticate": 'Bearer realm="x"' } }),
    "/.well-known/oauth-protected-resource": () => ({
      body: { resource: "https://elsewhere.example/mcp", authorization_servers: [idp.issuer] },
    }),
  });
  const person = browser();
  const provider = providerFor(`${server.origin}/mcp`, { onAuthorizationUrl: person.open });
  const error = await connectRefused(t, `${server.origin}/mcp`, provider);
  const found = findCode(error) as { code?: string; message?: string } | undefined;
  assert.equal(found?.code, "resource_mismatch");
  assert.match(String(found?.message), /a resource on https:\/\/elsewhere\.example/);
  assert.equal(person.asked.length, 0);
});

test("[MCP-client-metadata-no-redirect] a same-origin resource_metadata URL that redirects to another origin is not followed", async (t) => {
  const elsewhere = await startDocumentServer();
  const target = elsewhere.json("/.well-known/oauth-protected-resource", {
    resource: "http://127.0.0.1:1/mcp",
    authorization_servers: [idp.issuer],
  });
  const server = await scriptedServer({
    "/mcp": (_req, _body, origin) => ({
      status: 401,
      headers: {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      },
    }),
    "/.well-known/oauth-protected-resource/mcp": () => ({
      status: 302,
      headers: { location: target },
    }),
  });
  const person = browser();
  const provider = providerFor(`${server.origin}/mcp`, { onAuthorizationUrl: person.open });
  const error = await connectRefused(t, `${server.origin}/mcp`, provider);
  const found = findCode(error) as { code?: string; message?: string } | undefined;
  assert.equal(found?.code, "metadata_not_found");
  assert.match(String(found?.message), /302, a redirect, not followed/);
  assert.equal(
    elsewhere.hits("/.well-known/oauth-protected-resource"),
    0,
    "the redirect target was never fetched",
  );
  assert.equal(person.asked.length, 0);
});

test("[MCP-client-metadata-oversized] a metadata document over 64 KB is refused unread, typed", async (t) => {
  const server = await scriptedServer({
    "/mcp": () => ({ status: 401, headers: { "www-authenticate": 'Bearer realm="x"' } }),
    "/.well-known/oauth-protected-resource/mcp": (_req, _body, origin) => ({
      body: {
        resource: `${origin}/mcp`,
        authorization_servers: [idp.issuer],
        pad: "x".repeat(70_000),
      },
    }),
  });
  const provider = providerFor(`${server.origin}/mcp`, { onAuthorizationUrl: browser().open });
  const error = await connectRefused(t, `${server.origin}/mcp`, provider);
  assert.equal(findCode(error)?.code, "metadata_invalid");
});

/**
 * An MCP server of the 2025-03-26 revision: no RFC 9728 document, a 401 without `resource_metadata`, on its
 * authorization server's own origin (the embedded server's `beside` hook), accepting tokens for its URL.
 */
function legacyMcp(issuerOf: () => string, hideMetadata: () => boolean, cache?: MetadataCache) {
  const mcp = createMcpHandler(
    () => {
      const server = new McpServer({ name: "legacy", version: "1.0.0" });
      server.registerTool("whoami", { description: "Says who called" }, async () => ({
        content: [{ type: "text", text: "hello" }],
      }));
      return server;
    },
    { legacy: "stateless" },
  );
  let verifier: ReturnType<typeof createTokenVerifier> | undefined;
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (hideMetadata() && path.startsWith("/.well-known/")) {
      res.writeHead(404).end();
      return true;
    }
    if (path !== "/mcp") return false;
    void (async () => {
      verifier ??= createTokenVerifier({
        issuer: issuerOf(),
        audience: `${issuerOf()}/mcp`,
        discovery: cache ? { cache } : undefined,
      });
      try {
        await verifier.verify(req.headers.authorization);
      } catch (error) {
        const challenge = (error as { challenge?: { status: number } }).challenge;
        // 2025-03-26: a plain Bearer challenge, no resource_metadata.
        res.writeHead(challenge?.status ?? 401, {
          "www-authenticate": buildBearerChallenge({ error: "invalid_token" }).header,
        });
        res.end();
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
      }
      const answer = await mcp.fetch(
        new Request(`${issuerOf()}${req.url}`, {
          method: req.method,
          headers,
          body: chunks.length ? Buffer.concat(chunks) : undefined,
        }),
      );
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        out[name] = value;
      });
      res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
    })();
    return true;
  };
}

test("[MCP-client-2025-03-26-metadata] a server without protected resource metadata signs in at the authorization server metadata on its own origin (MCP 2025-03-26)", async (t) => {
  let issuer = "";
  const legacy = await useIdp({
    beside: legacyMcp(
      () => issuer,
      () => false,
    ),
  });
  issuer = legacy.issuer;
  const store = new MemoryCredentialStore();
  const { client, person } = await connectWithPerson(`${issuer}/mcp`, { store }, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(person.asked[0]?.origin, issuer);
  assert.equal(person.asked[0]?.pathname, "/auth", "the endpoint the metadata names");
  const stored = await store.get({ subject: "alice", issuer, resource: `${issuer}/mcp` });
  assert.equal(stored?.status, "active");
});

test("[MCP-client-2025-03-26-defaults] with no metadata at all, the 2025-03-26 default endpoints /authorize, /token and /register are used", async (t) => {
  let issuer = "";
  let hidden = false;
  // The server's own verifier read the metadata before it was hidden (its JWKS stays reachable).
  const cache = new MetadataCache();
  const legacy = await useIdp({
    beside: legacyMcp(
      () => issuer,
      () => hidden,
      cache,
    ),
    routes: { authorization: "/authorize", registration: "/register" },
  });
  issuer = legacy.issuer;
  await discoverAuthorizationServer(issuer, { cache });
  hidden = true;
  const before = legacy.memory().registrations;
  const { client, person } = await connectWithPerson(`${issuer}/mcp`, {}, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(person.asked[0]?.pathname, "/authorize");
  assert.equal(person.asked[0]?.searchParams.get("code_challenge_method"), "S256");
  assert.equal(legacy.memory().registrations, before + 1, "registered at /register");
  assert.deepEqual(legacy.stats.byGrant.authorization_code, { success: 1, error: 0 });
});

test("[MCP-client-2025-03-26-not-for-metadata-servers] a server whose challenge names a metadata URL that answers 404 is not taken for a 2025-03-26 server", async (t) => {
  const server = await scriptedServer({
    "/mcp": (_req, _body, origin) => ({
      status: 401,
      headers: {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
      },
    }),
  });
  const provider = providerFor(`${server.origin}/mcp`, { onAuthorizationUrl: browser().open });
  const error = await connectRefused(t, `${server.origin}/mcp`, provider);
  assert.equal(findCode(error)?.code, "metadata_not_found");
  assert.ok(
    !server.requests.some((r) => r.path.startsWith("/.well-known/oauth-authorization-server")),
    "no 2025-03-26 discovery",
  );
});

test("[MCP-client-2025-03-26-issuer-path] a 2025-03-26 server's metadata may name an issuer with a path on its own origin (the revision located metadata by origin); one on another origin is refused", async (t) => {
  const legacy = (issuerOf: (origin: string) => string) =>
    scriptedServer({
      "/mcp": () => ({ status: 401, headers: { "www-authenticate": 'Bearer realm="mcp"' } }),
      "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
        body: {
          issuer: issuerOf(origin),
          authorization_endpoint: `${origin}/oauth/authorize`,
          token_endpoint: `${origin}/oauth/token`,
          registration_endpoint: `${origin}/oauth/register`,
          code_challenge_methods_supported: ["S256"],
          response_types_supported: ["code"],
        },
      }),
      "/oauth/register": () => ({ status: 201, body: { client_id: "legacy-client" } }),
    });
  const tolerated = await legacy((origin) => `${origin}/oauth`);
  const person = browser();
  const provider = providerFor(`${tolerated.origin}/mcp`, {
    onAuthorizationUrl: async (url) => {
      person.asked.push(url);
    },
    signInTimeoutMs: 200,
  });
  // The sign-in starts (the person is sent to the metadata's endpoint); nobody completes it here.
  await connectRefused(t, `${tolerated.origin}/mcp`, provider);
  assert.equal(person.asked[0]?.origin, tolerated.origin);
  assert.equal(person.asked[0]?.pathname, "/oauth/authorize");

  const elsewhere = await legacy(() => "https://login.elsewhere.example");
  const refused = browser();
  const error = await connectRefused(
    t,
    `${elsewhere.origin}/mcp`,
    providerFor(`${elsewhere.origin}/mcp`, { onAuthorizationUrl: refused.open }),
  );
  assert.equal(findCode(error)?.code, "issuer_mismatch");
  assert.equal(refused.asked.length, 0);
});
