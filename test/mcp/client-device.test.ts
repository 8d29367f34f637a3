/**
 * The device flow (RFC 8628) for MCP hosts without a browser: agentAuthProvider's `onDeviceCode` and
 * `signInMethod`, through the official SDK client against the protected MCP server fixture and the embedded
 * authorization server. The test plays the person: it opens the verification URL it was shown, where the embedded
 * server (auto-approving as alice) signs in and confirms the code.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { DevicePrompt } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { findCode } from "./fixtures/find-code.ts";
import {
  connect,
  connectRefused,
  connectWithPerson,
  hello,
  providerFor,
  whoami,
} from "./fixtures/mcp-client.ts";
import { metadataOnlyServer } from "./fixtures/metadata-only-as.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp({ deviceIntervalSeconds: 1 });
// An authorization server with PKCE and no device endpoint (RFC 8414 metadata only): refusals happen before any
// request a real server would answer.
const noDeviceIssuer = await metadataOnlyServer({ after }, { pkce: true });

/** The person: reads the prompt, opens the complete verification URL, and approves there. */
function person() {
  const prompts: DevicePrompt[] = [];
  return {
    prompts,
    onDeviceCode: async (prompt: DevicePrompt) => {
      prompts.push(prompt);
      // Approve in the background, as a person on another device would; the provider is polling meanwhile.
      void fetch(prompt.verificationUriComplete ?? prompt.verificationUri).then((r) =>
        r.arrayBuffer(),
      );
    },
  };
}

function audienceOf(jwt: string | undefined): unknown {
  const payload = jwt?.split(".")[1];
  return payload ? JSON.parse(Buffer.from(payload, "base64url").toString()).aud : undefined;
}

test("[MCP-client-device] a host with only onDeviceCode signs in with the device flow: the person is shown the code, approves, and the tool call goes through with a token for this server", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const store = new MemoryCredentialStore();
  const someone = person();
  idp.resetStats();
  // Connecting is the first request: its 401 starts the sign-in.
  const client = await connect(
    mcp.url,
    providerFor(mcp.url, {
      store,
      onDeviceCode: someone.onDeviceCode,
    }),
  );

  assert.deepEqual((await client.callTool(whoami)).content, hello);

  assert.equal(someone.prompts.length, 1);
  const prompt = someone.prompts[0];
  assert.ok(prompt);
  // What the person needs (and which authorization server asks, RFC 8628 §5.4), and nothing more: the device code
  // stays inside the engine.
  assert.deepEqual(Object.keys(prompt).sort(), [
    "expiresInSeconds",
    "issuer",
    "userCode",
    "verificationUri",
    "verificationUriComplete",
  ]);
  assert.equal(new URL(prompt.verificationUri).origin, new URL(idp.issuer).origin);
  assert.match(prompt.userCode, /^[A-Z]{4}-[A-Z]{4}$/);
  assert.ok(prompt.expiresInSeconds > 0);
  assert.equal(idp.stats.byGrant["urn:ietf:params:oauth:grant-type:device_code"]?.success, 1);
  const stored = await store.get({ subject: "alice", issuer: idp.issuer, resource: mcp.url });
  assert.equal(stored?.status, "active");
  // `resource` went on the device authorization and token requests (RFC 8707): the token is for this server.
  assert.equal(audienceOf(stored?.tokens.accessToken?.reveal()), mcp.url);
  assert.ok(stored?.tokens.refreshToken, "offline_access was asked for");
});

test("[MCP-client-device-chosen] signInMethod device wins over a given onAuthorizationUrl", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const someone = person();
  const { client, person: web } = await connectWithPerson(mcp.url, {
    signInMethod: "device",
    onDeviceCode: someone.onDeviceCode,
  });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(someone.prompts.length, 1);
  assert.equal(web.asked.length, 0);
});

test("[MCP-client-device-default] with both callbacks and no signInMethod, the browser flow is used", async () => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const someone = person();
  const { client, person: web } = await connectWithPerson(mcp.url, {
    onDeviceCode: someone.onDeviceCode,
  });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(web.asked.length, 1);
  assert.equal(someone.prompts.length, 0);
});

test("[MCP-client-device-timeout] nobody enters the code: a typed login_timeout once signInTimeoutMs passes, and no token was issued", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const prompts: DevicePrompt[] = [];
  const started = performance.now();
  let promptedAfter = Number.NaN;
  const provider = providerFor(mcp.url, {
    // The timeout also covers the device authorization request before the prompt: 6 s, not 1.5 s, so a loaded
    // machine still shows the prompt inside it (the test then waits for the code's polls to time out).
    signInTimeoutMs: 6_000,
    onDeviceCode: async (prompt) => {
      promptedAfter = performance.now() - started;
      prompts.push(prompt);
    },
  });
  idp.resetStats();
  const code = findCode(await connectRefused(t, mcp.url, provider))?.code;
  t.diagnostic(
    `prompt shown after ${Math.round(promptedAfter)} ms, login_timeout after ${Math.round(performance.now() - started)} ms`,
  );
  assert.equal(code, "login_timeout");
  assert.equal(prompts.length, 1, "the person was shown the code before the timeout");
  assert.equal(idp.stats.byGrant["urn:ietf:params:oauth:grant-type:device_code"]?.success ?? 0, 0);
});

test("[MCP-client-device-unsupported] a server without a device endpoint and a host with only onDeviceCode: a typed device_flow_unsupported, nobody prompted", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: noDeviceIssuer });
  const someone = person();
  const provider = providerFor(mcp.url, {
    clientFor: () => ({ clientId: "preregistered" }),
    onDeviceCode: someone.onDeviceCode,
  });
  assert.equal(
    findCode(await connectRefused(t, mcp.url, provider))?.code,
    "device_flow_unsupported",
  );
  assert.equal(someone.prompts.length, 0);
});

for (const [name, options, code] of [
  [
    'signInMethod "browser" without onAuthorizationUrl',
    { signInMethod: "browser", onDeviceCode: async () => {} },
    "sign_in_unavailable",
  ],
  [
    'signInMethod "device" without onDeviceCode',
    { signInMethod: "device", onAuthorizationUrl: async () => {} },
    "sign_in_unavailable",
  ],
] as const) {
  test(`[MCP-client-device-hostile] ${name}: a typed ${code} before anyone is asked`, async (t) => {
    const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
    idp.resetStats();
    const provider = providerFor(mcp.url, {
      ...options,
    });
    assert.equal(findCode(await connectRefused(t, mcp.url, provider))?.code, code);
    assert.deepEqual(idp.stats.byGrant, {});
  });
}

test("[MCP-client-device-hostile] an unknown signInMethod is refused at construction, typed", () => {
  assert.throws(
    () =>
      providerFor("https://mcp.example/mcp", {
        signInMethod: "carrier-pigeon" as "device",
        onDeviceCode: async () => {},
      }),
    (error: unknown) => findCode(error)?.code === "sign_in_unavailable",
  );
});
