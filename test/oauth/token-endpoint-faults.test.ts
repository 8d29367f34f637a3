import assert from "node:assert/strict";
import { test } from "node:test";
import { AgentAuthError } from "../../src/core/errors.ts";
import { secret } from "../../src/core/secret.ts";
import {
  LoginRequiredError,
  MetadataCache,
  TokenEndpointError,
  TokenRefresher,
  TransportError,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { asMetadata, type ScriptedResponse, scriptedServer } from "../support/scripted-server.ts";

const REFRESH = "rt-SECRET-faults-0123456789";

async function refreshAgainst(response: ScriptedResponse) {
  const server = await scriptedServer({
    "/.well-known/oauth-authorization-server": (_r, _b, origin) => ({ body: asMetadata(origin) }),
    "/token": () => response,
  });
  const store = new MemoryCredentialStore();
  const key = { subject: "alice", issuer: server.origin, resource: "" };
  await store.put({
    ...key,
    clientId: "c",
    tokens: { accessToken: secret("old-at"), refreshToken: secret(REFRESH) },
    expiresAt: Date.now() - 1,
    scopes: [],
    account: {},
    status: "active",
  });
  const refresher = new TokenRefresher({ store, discovery: { cache: new MetadataCache() } });
  const error = await refresher.getAccessToken(key).then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, server, store, key, refresher };
}

test("[FAULTS-token-endpoint] malformed and failing token responses give typed errors with stable codes and no secret", async () => {
  const cases: [string, ScriptedResponse, string][] = [
    [
      "HTML 500",
      { status: 500, body: "<html>oops</html>", headers: { "content-type": "text/html" } },
      "server_error",
    ],
    ["JSON 503 error", { status: 503, body: { error: "temporarily_unavailable" } }, "server_error"],
    [
      "non-JSON 200",
      { body: "not json", headers: { "content-type": "text/plain" } },
      "invalid_response",
    ],
    ["no access_token", { body: { token_type: "Bearer", expires_in: 60 } }, "invalid_response"],
    ["wrong token_type", { body: { access_token: "x", token_type: 42 } }, "invalid_response"],
    ["invalid_client", { status: 401, body: { error: "invalid_client" } }, "token_endpoint_error"],
  ];
  for (const [name, response, code] of cases) {
    const { error, store, key } = await refreshAgainst(response);
    assert.ok(error instanceof AgentAuthError, `${name}: ${String(error)}`);
    assert.equal(error.code, code, name);
    assert.ok(
      !JSON.stringify(error).includes(REFRESH) && !error.message.includes(REFRESH),
      `${name}: no secret`,
    );
    assert.equal(
      (await store.get(key))?.status,
      "active",
      `${name}: a transient or server fault does not discard the credential`,
    );
  }
});

test("[FAULTS-invalid-grant] invalid_grant from the token endpoint marks the credential login_required", async () => {
  const { error, store, key, server, refresher } = await refreshAgainst({
    status: 400,
    body: { error: "invalid_grant", error_description: "refresh token reused" },
  });
  assert.ok(error instanceof LoginRequiredError);
  assert.equal((await store.get(key))?.status, "login_required");
  const before = server.requests.length;
  await assert.rejects(refresher.getAccessToken(key), LoginRequiredError);
  assert.equal(server.requests.length, before, "no further token requests");
});

test("[FAULTS-no-retry-loop] a failed refresh is not retried internally; the next call tries once more", async () => {
  const { error, server, refresher, key } = await refreshAgainst({
    status: 500,
    body: { error: "server_error" },
  });
  assert.ok(error instanceof TokenEndpointError);
  const tokenCalls = () => server.requests.filter((r) => r.path === "/token").length;
  assert.equal(tokenCalls(), 1);
  await assert.rejects(refresher.getAccessToken(key), TokenEndpointError);
  assert.equal(tokenCalls(), 2);
});

test("[FAULTS-network] an authorization server that went away is a typed transport error", async () => {
  const { server, refresher, key } = await refreshAgainst({ body: {} });
  // Metadata is cached from the first call; now the server disappears.
  await server.close();
  await assert.rejects(
    refresher.getAccessToken(key),
    (e: unknown) => e instanceof TransportError && e.code === "network_error",
  );
});
