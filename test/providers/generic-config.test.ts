/**
 * The generic preset without the embedded server: servers that bend the wire format, described only by quirks
 * data (hand-given endpoints and discovery), a discovery URL answering HTML, and configuration the preset refuses.
 * Scripted loopback servers play the odd servers (test/support/scripted-server.ts).
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import {
  DiscoveryError,
  LoginRequiredError,
  login,
  TokenEndpointError,
  TokenRefresher,
} from "../../src/oauth/index.ts";
import {
  generic,
  ProviderConfigError,
  presetNamed,
  resolveProvider,
} from "../../src/providers/index.ts";
import { type CredentialStore, MemoryCredentialStore } from "../../src/vault/index.ts";
import { scriptedServer } from "../support/scripted-server.ts";

/** A due credential issued by `provider`, as a login would have stored it. */
async function dueCredential(store: CredentialStore, provider: ReturnType<typeof generic>) {
  return store.put({
    subject: "u1",
    issuer: provider.issuer,
    resource: "",
    clientId: provider.client.clientId,
    provider: provider.ref,
    tokens: {
      accessToken: new Secret("old-access-token-value"),
      refreshToken: new Secret("old-refresh-token-value"),
      clientSecret: provider.client.clientSecret,
    },
    expiresAt: Date.now() - 1000,
    scopes: [],
    account: {},
    status: "active",
  });
}

test("[PROV-generic-discovery-quirks] by discovery with quirks: the discovered server's form-encoded, comma-scoped refresh answer is read", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_req, _body, origin) => ({
      body: {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        code_challenge_methods_supported: ["S256"],
      },
    }),
    "/token": () => ({
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "access_token=new-access-token-value&token_type=bearer&scope=repo%2Cgist&expires_in=3600",
    }),
  });
  const provider = generic({
    issuer: server.origin,
    clientId: "odd-client",
    quirks: { commaScopes: true },
  });
  const store = new MemoryCredentialStore();
  const record = await dueCredential(store, provider);
  const token = await new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(
    record,
  );
  assert.equal(token.reveal(), "new-access-token-value");
  const stored = await store.get(record);
  assert.deepEqual(stored?.scopes, ["repo", "gist"]);
  assert.ok((stored?.expiresAt ?? 0) > Date.now());
  // Without the quirks the same server's answer is refused: the quirks, not luck, made it work.
  const plain = generic({ issuer: server.origin, clientId: "odd-client" });
  const other = new MemoryCredentialStore();
  await assert.rejects(
    new TokenRefresher({ store: other, providers: resolveProvider }).getAccessToken(
      await dueCredential(other, plain),
    ),
    (error: unknown) => {
      assert.ok(error instanceof TokenEndpointError, String(error));
      assert.equal(error.code, "invalid_response");
      return true;
    },
  );
});

test("[PROV-generic-quirks-data] a non-standard token endpoint described only by quirks: its 200-status refusal of a refresh token means sign in again", async () => {
  const server = await scriptedServer({
    // 200 with a provider-specific error code, the way GitHub answers (and many in-house servers do).
    "/token": () => ({
      status: 200,
      body: { error: "refresh_token_dead", error_description: "gone" },
    }),
  });
  const quirks = { errorsWithStatus200: true, errorCodes: { refresh_token_dead: "invalid_grant" } };
  const provider = generic({
    endpoints: { issuer: `${server.origin}/`, token: `${server.origin}/token` },
    clientId: "in-house",
    clientSecret: "in-house-secret-value",
    quirks,
  });
  assert.deepEqual(provider.flows, []);
  const store = new MemoryCredentialStore();
  const record = await dueCredential(store, provider);
  // The quirks came back from the stored ref: the rebuilt provider maps the code.
  const rebuilt = presetNamed("generic")?.fromRef(record.provider!, {
    clientId: "in-house",
  });
  assert.ok(rebuilt);
  assert.deepEqual(JSON.parse(rebuilt.ref.options?.quirks ?? "{}"), quirks);
  await assert.rejects(
    new TokenRefresher({ store, providers: resolveProvider }).getAccessToken(record),
    (error: unknown) =>
      error instanceof LoginRequiredError &&
      !error.message.includes("old-refresh-token-value") &&
      !error.message.includes("in-house-secret-value"),
  );
  assert.equal((await store.get(record))?.status, "login_required");
  assert.equal(server.requests.filter((r) => r.path === "/token").length, 1);
  assert.match(server.requests[0]?.body ?? "", /grant_type=refresh_token/);
});

test("[PROV-generic-discovery-html] a discovery URL answering an HTML page is a typed error, and nothing is stored", async () => {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": () => ({
      headers: { "content-type": "text/html" },
      body: "<!doctype html><title>Sign in</title>",
    }),
  });
  const store = new MemoryCredentialStore();
  const provider = generic({ issuer: server.origin, clientId: "c" });
  await assert.rejects(
    login({ provider, flow: "browser", store }),
    (error: unknown) => error instanceof DiscoveryError && error.code === "metadata_invalid",
  );
  assert.deepEqual(await store.list(), []);
});

test("[PROV-generic-config-errors] a generic provider refuses unusable configuration with typed, named errors", () => {
  const codeOf = (make: () => unknown) => {
    try {
      make();
    } catch (error) {
      assert.ok(error instanceof ProviderConfigError, String(error));
      return error.code;
    }
    return "accepted";
  };
  assert.equal(
    codeOf(() => generic({ clientId: "c" })),
    "provider_generic_source",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        issuer: "https://a.example",
        endpoints: { issuer: "https://a.example", token: "https://a.example/token" },
      }),
    ),
    "provider_generic_source",
  );
  assert.equal(
    codeOf(() => generic({ clientId: "c", issuer: "http://id.example.com" })),
    "provider_url_invalid",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        endpoints: { issuer: "https://a.example", token: "ftp://a.example/t" },
      }),
    ),
    "provider_url_invalid",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        endpoints: {
          issuer: "https://a.example",
          token: "https://a.example/t",
          tokne: "x",
        } as never,
      }),
    ),
    "provider_endpoints_invalid",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        issuer: "https://a.example",
        quirks: { acceptJSON: true } as never,
      }),
    ),
    "provider_quirks_invalid",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        issuer: "https://a.example",
        quirks: { commaScopes: "yes" } as never,
      }),
    ),
    "provider_quirks_invalid",
  );
  assert.equal(
    codeOf(() =>
      generic({
        clientId: "c",
        issuer: "https://a.example",
        origins: { "https://a.example": "http://127.0.0.1:9" },
      }),
    ),
    "provider_origins_unsupported",
  );
  assert.equal(
    codeOf(() => generic({ clientId: "", issuer: "https://a.example" })),
    "provider_client_id_missing",
  );
  assert.equal(
    codeOf(() =>
      resolveProvider({ name: "generic", options: { endpoints: "{not json" } }, { clientId: "c" }),
    ),
    "provider_ref_invalid",
  );
});
