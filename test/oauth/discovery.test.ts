import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DiscoveryError,
  discoverAuthorizationServer,
  discoverProtectedResource,
  MetadataCache,
  TransportError,
} from "../../src/oauth/index.ts";
import { useIdp } from "../support/idp.ts";
import { asMetadata, scriptedServer } from "../support/scripted-server.ts";

test("[RFC8414-discovery] the embedded server's metadata is discovered with every endpoint the engine uses", async () => {
  const idp = await useIdp();
  const as = await discoverAuthorizationServer(idp.issuer, { cache: new MetadataCache() });
  assert.equal(as.issuer, idp.issuer);
  for (const field of [
    "authorization_endpoint",
    "token_endpoint",
    "device_authorization_endpoint",
    "revocation_endpoint",
    "introspection_endpoint",
    "registration_endpoint",
    "jwks_uri",
  ] as const) {
    assert.ok(as[field], field);
  }
  assert.equal(as.authorization_response_iss_parameter_supported, true);
  assert.deepEqual(as.code_challenge_methods_supported, ["S256"]);
});

test("[DISCOVERY-cache-ttl] results are cached for the TTL and fetched again after it", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_r, _b, origin) => ({ body: asMetadata(origin) }),
  });
  const cache = new MetadataCache();
  await discoverAuthorizationServer(server.origin, { cache, ttlMs: 60_000 });
  await discoverAuthorizationServer(server.origin, { cache, ttlMs: 60_000 });
  assert.equal(server.requests.length, 1, "second call served from cache");
  const shortCache = new MetadataCache();
  await discoverAuthorizationServer(server.origin, { cache: shortCache, ttlMs: 1 });
  await new Promise((r) => setTimeout(r, 5));
  await discoverAuthorizationServer(server.origin, { cache: shortCache, ttlMs: 1 });
  assert.equal(server.requests.length, 3, "expired entry refetched");
});

test("[RFC8414-oidc-fallback] OpenID Connect discovery is used when RFC 8414 metadata is absent", async () => {
  const server = await scriptedServer({
    "/.well-known/openid-configuration": (_r, _b, origin) => ({ body: asMetadata(origin) }),
  });
  const as = await discoverAuthorizationServer(server.origin, { cache: new MetadataCache() });
  assert.equal(as.issuer, server.origin);
  assert.deepEqual(
    server.requests.map((r) => r.path),
    ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"],
  );
});

test("[RFC8414-S3.3-issuer-echo] metadata naming another issuer is refused", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": () => ({ body: asMetadata("https://evil.example") }),
  });
  await assert.rejects(
    discoverAuthorizationServer(server.origin, { cache: new MetadataCache() }),
    (e: unknown) => e instanceof DiscoveryError && e.code === "issuer_mismatch",
  );
});

test("[DISCOVERY-bad-input] malformed, non-JSON, error and oversized metadata give typed errors, never a crash", async () => {
  const cases: [
    string,
    { status?: number; body: string | object; headers?: Record<string, string> },
  ][] = [
    ["not json", { body: "<html>hello</html>", headers: { "content-type": "text/html" } }],
    ["truncated json", { body: '{"issuer": "http://127' }],
    ["array", { body: [1, 2, 3] }],
    ["issuer not a string", { body: { issuer: 42 } }],
    ["server error", { status: 500, body: { error: "server_error" } }],
    ["huge", { body: { issuer: "x".repeat(2_000_000) } }],
  ];
  for (const [name, response] of cases) {
    const server = await scriptedServer({
      "/.well-known/oauth-authorization-server": () => response,
    });
    await assert.rejects(
      discoverAuthorizationServer(server.origin, { cache: new MetadataCache() }),
      (e: unknown) =>
        e instanceof DiscoveryError &&
        typeof e.code === "string" &&
        !String(e.message).includes("x".repeat(100)),
      name,
    );
  }
});

test("[DISCOVERY-network] an unreachable server is a typed transport error", async () => {
  const server = await scriptedServer();
  const origin = server.origin;
  await server.close();
  await assert.rejects(
    discoverAuthorizationServer(origin, { cache: new MetadataCache() }),
    (e: unknown) => e instanceof TransportError && e.code === "network_error",
  );
});

test("[TRANSPORT-https-required] plain http to a non-loopback host is refused before any request", async () => {
  await assert.rejects(
    discoverAuthorizationServer("http://as.example.com", { cache: new MetadataCache() }),
    (e: unknown) => e instanceof TransportError && e.code === "insecure_transport",
  );
  await assert.rejects(
    discoverAuthorizationServer("ftp://as.example.com", { cache: new MetadataCache() }),
    (e: unknown) => e instanceof DiscoveryError && e.code === "invalid_url",
  );
  await assert.rejects(
    discoverAuthorizationServer("not a url", { cache: new MetadataCache() }),
    (e: unknown) => e instanceof DiscoveryError && e.code === "invalid_url",
  );
});

test("[RFC9728-path-aware] protected-resource metadata is fetched from the path-aware well-known URL", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-protected-resource/mcp/v1": (_r, _b, origin) => ({
      body: {
        resource: `${origin}/mcp/v1`,
        authorization_servers: ["https://as.example"],
        scopes_supported: ["read"],
      },
    }),
  });
  const prm = await discoverProtectedResource(`${server.origin}/mcp/v1`, {
    cache: new MetadataCache(),
  });
  assert.equal(prm.resource, `${server.origin}/mcp/v1`);
  assert.deepEqual(prm.authorization_servers, ["https://as.example"]);
});

test("[RFC9728-resource-metadata-url] the resource_metadata URL from a challenge is used as given", async () => {
  const server = await scriptedServer({
    "/meta/prm.json": (_r, _b, origin) => ({
      body: { resource: `${origin}/api`, authorization_servers: ["https://as.example"] },
    }),
  });
  const prm = await discoverProtectedResource(`${server.origin}/api`, {
    resourceMetadataUrl: `${server.origin}/meta/prm.json`,
    cache: new MetadataCache(),
  });
  assert.equal(prm.resource, `${server.origin}/api`);
  assert.deepEqual(
    server.requests.map((r) => r.path),
    ["/meta/prm.json"],
  );
});

test("[RFC9728-S3.3-resource-match] metadata for a different resource is refused", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-protected-resource/api": () => ({
      body: {
        resource: "https://attacker.example/api",
        authorization_servers: ["https://as.example"],
      },
    }),
  });
  await assert.rejects(
    discoverProtectedResource(`${server.origin}/api`, { cache: new MetadataCache() }),
    (e: unknown) => e instanceof DiscoveryError && e.code === "resource_mismatch",
  );
});

test("[DISCOVERY-not-found-names-urls] an issuer with a wrong path names every URL tried, what each answered, and what to do", async () => {
  const idp = await useIdp();
  const issuer = `${idp.issuer}/wrong`;
  await assert.rejects(
    discoverAuthorizationServer(issuer, { cache: new MetadataCache() }),
    (e: unknown) => {
      assert.ok(e instanceof DiscoveryError, String(e));
      assert.equal(e.code, "metadata_not_found");
      for (const url of [
        `${idp.issuer}/.well-known/oauth-authorization-server/wrong`,
        `${idp.issuer}/.well-known/openid-configuration/wrong`,
        `${idp.issuer}/wrong/.well-known/openid-configuration`,
      ])
        assert.ok(e.message.includes(`${url} (404)`), `${url} missing from: ${e.message}`);
      assert.ok(e.message.includes(issuer), "names the issuer with its path");
      assert.match(e.message, /Check the issuer URL/);
      return true;
    },
  );
});

test("[DISCOVERY-oidc-path-insertion] OpenID metadata at the path-inserted well-known URL (RFC 8414 §5) is found", async () => {
  const server = await scriptedServer({
    "/.well-known/openid-configuration/tenant": (_r, _b, origin) => ({
      body: asMetadata(`${origin}/tenant`),
    }),
  });
  const as = await discoverAuthorizationServer(`${server.origin}/tenant`, {
    cache: new MetadataCache(),
  });
  assert.equal(as.issuer, `${server.origin}/tenant`);
  assert.deepEqual(
    server.requests.map((r) => r.path),
    ["/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant"],
  );
});
