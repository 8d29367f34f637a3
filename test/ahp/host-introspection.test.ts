import assert from "node:assert/strict";
import { test } from "node:test";
import { createAhpHost } from "../../src/ahp/host/index.ts";
import { Secret } from "../../src/core/secret.ts";
import { discoverAuthorizationServer, revokeTokens } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest } from "../support/credentials.ts";
import { CONFIDENTIAL_CLIENT, useIdp } from "../support/idp.ts";
import { WsPeer } from "../support/ws-peer.ts";

const OPAQUE = "https://opaque.example.test/";

test("[AHP-revocation-noticed] with introspection, a token revoked at the authorization server is noticed on the next gated command: -32007 and auth/required expired", async (t) => {
  const idp = await useIdp({
    opaqueResources: [OPAQUE],
    clients: [
      {
        ...CONFIDENTIAL_CLIENT,
        grant_types: [...CONFIDENTIAL_CLIENT.grant_types],
        redirect_uris: [...CONFIDENTIAL_CLIENT.redirect_uris],
      },
    ],
  });
  const client = {
    clientId: CONFIDENTIAL_CLIENT.client_id,
    clientSecret: new Secret(CONFIDENTIAL_CLIENT.client_secret),
  };
  const running = await createAhpHost({ verifier: { kind: "introspection", client } })
    .agent({
      provider: "opaque",
      displayName: "Opaque",
      resources: [
        { resource: OPAQUE, authorizationServers: [idp.issuer], scopesSupported: ["read"] },
      ],
    })
    .command("opaque/read", { requires: [OPAQUE] }, () => ({ ok: true }))
    .listen({ port: 0 });
  t.after(() => running.close());
  const record = await loginForTest(idp, new MemoryCredentialStore(), {
    resource: OPAQUE,
    scope: "openid read",
  });
  const token = record.tokens.accessToken?.reveal() ?? "";
  assert.equal(token.split(".").length, 1, "an opaque token, checked by introspection");

  const peer = await WsPeer.connect(running.url);
  t.after(() => peer.close());
  assert.ok(
    (
      await peer.request("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["1.1.0"],
        clientId: "c",
      })
    ).result,
  );
  assert.deepEqual(
    (await peer.request("authenticate", { channel: "ahp-root://", resource: OPAQUE, token }))
      .result,
    {},
  );
  assert.deepEqual((await peer.request("opaque/read", {})).result, { ok: true });

  const as = await discoverAuthorizationServer(idp.issuer);
  await revokeTokens({
    as,
    client: { clientId: "agentauth-cli" },
    refreshToken: record.tokens.refreshToken,
    accessToken: record.tokens.accessToken,
  });

  const refused = await peer.request("opaque/read", {});
  assert.equal(refused.error?.code, -32007);
  // The notice may trail the error response by a frame: wait for it (bounded), then check it is the only one.
  for (let i = 0; i < 100 && peer.notifications("auth/required").length === 0; i++)
    await new Promise((r) => setTimeout(r, 20));
  const notices = peer.notifications("auth/required");
  assert.equal(notices.length, 1);
  const params = notices[0]?.params as
    | { reason?: string; resource?: { resource?: string } }
    | undefined;
  assert.equal(params?.reason, "expired");
  assert.equal(params?.resource?.resource, OPAQUE);
  assert.ok(
    !JSON.stringify(refused).includes(token) && !JSON.stringify(notices).includes(token),
    "the token is never echoed",
  );
});

test("[AHP-custom-verifier] a custom verifier function decides acceptance; its refusal is -32007 with the reason in the message", async (t) => {
  const running = await createAhpHost({
    verifier: async (token: Secret) => {
      if (token.reveal() !== "letmein") throw new Error("nope");
      return { subject: "custom", scopes: ["read"], claims: {} };
    },
  })
    .agent({
      provider: "c",
      displayName: "C",
      resources: [
        {
          resource: "https://custom.example.test/",
          authorizationServers: ["https://as.example.test"],
        },
      ],
    })
    .command("c/read", { requires: ["https://custom.example.test/"] }, () => ({ ok: true }))
    .listen({ port: 0 });
  t.after(() => running.close());
  const peer = await WsPeer.connect(running.url);
  t.after(() => peer.close());
  await peer.request("initialize", {
    channel: "ahp-root://",
    protocolVersions: ["1.1.0"],
    clientId: "c",
  });
  const bad = await peer.request("authenticate", {
    channel: "ahp-root://",
    resource: "https://custom.example.test/",
    token: "wrong",
  });
  assert.equal(bad.error?.code, -32007);
  assert.ok(!JSON.stringify(bad).includes("wrong"));
  assert.deepEqual(
    (
      await peer.request("authenticate", {
        channel: "ahp-root://",
        resource: "https://custom.example.test/",
        token: "letmein",
      })
    ).result,
    {},
  );
  assert.deepEqual((await peer.request("c/read", {})).result, { ok: true });
});
