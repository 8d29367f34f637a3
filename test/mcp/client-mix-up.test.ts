/**
 * Authorization-server mix-up through a hostile MCP server (issue 18 item 7; RFC 9700 §4.4, RFC 8628 §5.4), attacked
 * on loopback against the strict embedded server playing the real authorization server. The hostile server's
 * metadata names the real server's authorization or device endpoint beside its own token endpoint, which forwards
 * what it receives to the real one: before the fix, the person's code (browser flow, a real server without RFC 9207
 * `iss`) or device code (device flow, even with `iss`) reached it, and the real tokens with it.
 */

import assert from "node:assert/strict";
import type { IncomingMessage, ServerResponse } from "node:http";
import { test } from "node:test";
import type { DevicePrompt } from "../../src/oauth/index.ts";
import { useIdp } from "../support/idp.ts";
import { rewritingProxy } from "../support/rewriting-proxy.ts";
import { findCode } from "./fixtures/find-code.ts";
import {
  browser,
  connect,
  connectRefused,
  hello,
  providerFor,
  startDocumentServer,
  whoami,
} from "./fixtures/mcp-client.ts";
import { startProtectedMcpServer } from "./fixtures/protected-mcp-server.ts";

const idp = await useIdp();
const real = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json();

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The attacker's authorization server: metadata naming `endpoints` of the real one, and a token endpoint that keeps
 * what it is sent and relays it to the real one (so a stolen code or device code becomes real tokens).
 */
async function hostileAuthorizationServer(endpoints: (origin: string) => Record<string, string>) {
  const server = await startDocumentServer();
  const stolen: string[] = [];
  server.json("/.well-known/oauth-authorization-server", {
    issuer: server.origin,
    response_types_supported: ["code"],
    code_challenge_methods_supported: ["S256"],
    grant_types_supported: [
      "authorization_code",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:device_code",
    ],
    token_endpoint: `${server.origin}/token`,
    ...endpoints(server.origin),
  });
  const relay = relayTo(real.token_endpoint);
  server.at("/token", (req, res) => {
    stolen.push(req.headers["content-length"] ?? "a request");
    relay(req, res);
  });
  return { ...server, stolen };
}

/** A provider as the CLI's client whose person enters every code shown (on the page the prompt names). */
function devicePerson(serverUrl: string) {
  const prompts: DevicePrompt[] = [];
  const provider = providerFor(serverUrl, {
    clientFor: () => ({ clientId: "agentauth-cli" }),
    onDeviceCode: async (prompt) => {
      prompts.push(prompt);
      await (await fetch(prompt.verificationUriComplete ?? "")).arrayBuffer();
    },
  });
  return { provider, prompts };
}

/** Forwards a form POST to `target` and its answer back: how a relay turns what it is sent into real tokens. */
function relayTo(target: string) {
  return (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const relayed = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: await body(req),
      });
      res.writeHead(relayed.status, { "content-type": "application/json" });
      res.end(await relayed.text());
    })();
  };
}

test("[MCP-client-mix-up-browser] a hostile server naming a real authorization endpoint (without iss) beside its own token endpoint is refused before the person is asked; its token endpoint receives nothing", async (t) => {
  // The real server as one without RFC 9207 `iss`: its redirects lose the parameter.
  const noIss = await rewritingProxy(idp.issuer, {}, (url) => {
    url.searchParams.delete("iss");
    return url;
  });
  const hostile = await hostileAuthorizationServer(() => ({
    authorization_endpoint: `${noIss.origin}/auth`,
    registration_endpoint: real.registration_endpoint,
  }));
  const mcp = await startProtectedMcpServer({ issuer: hostile.origin });
  const person = browser();
  const error = await connectRefused(
    t,
    mcp.url,
    providerFor(mcp.url, { onAuthorizationUrl: person.open }),
  );
  assert.equal(findCode(error)?.code, "endpoint_off_issuer");
  assert.equal(person.asked.length, 0, "nobody was sent to sign in");
  assert.deepEqual(hostile.stolen, [], "nothing reached the hostile token endpoint");
});

test("[MCP-client-mix-up-device] a hostile server naming a real device endpoint beside its own token endpoint is refused before any code is shown, even though the real server sends iss", async (t) => {
  const hostile = await hostileAuthorizationServer(() => ({
    device_authorization_endpoint: real.device_authorization_endpoint,
  }));
  const mcp = await startProtectedMcpServer({ issuer: hostile.origin });
  // The person enters the code on the real server's own page.
  const { provider, prompts } = devicePerson(mcp.url);
  const error = await connectRefused(t, mcp.url, provider);
  assert.equal(findCode(error)?.code, "endpoint_off_issuer");
  assert.equal(prompts.length, 0, "no code was shown");
  assert.deepEqual(hostile.stolen, [], "nothing reached the hostile token endpoint");
});

test("[MCP-client-mix-up-device-relay] a hostile server relaying its own device endpoint to a real one is caught by the verification page's origin; nothing is shown, nothing reaches its token endpoint", async (t) => {
  const hostile = await hostileAuthorizationServer((origin) => ({
    device_authorization_endpoint: `${origin}/device`,
  }));
  hostile.at("/device", relayTo(real.device_authorization_endpoint));
  const mcp = await startProtectedMcpServer({ issuer: hostile.origin });
  const { provider, prompts } = devicePerson(mcp.url);
  const error = await connectRefused(t, mcp.url, provider);
  const found = findCode(error) as { code?: string; message?: string } | undefined;
  assert.equal(found?.code, "endpoint_off_issuer");
  assert.match(String(found?.message), /verification page on http:\/\/127\.0\.0\.1:\d+/);
  assert.equal(prompts.length, 0);
  assert.deepEqual(hostile.stolen, []);
});

test("[MCP-client-mix-up-allowed] a host that trusts an authorization server with endpoints elsewhere says so explicitly, and only for that issuer", async (t) => {
  const split = await hostileAuthorizationServer(() => ({
    authorization_endpoint: real.authorization_endpoint,
  }));
  const mcp = await startProtectedMcpServer({ issuer: split.origin });
  const person = browser();
  const other = providerFor(mcp.url, {
    clientFor: () => ({ clientId: "agentauth-cli" }),
    onAuthorizationUrl: person.open,
    crossOriginEndpoints: ["https://another.example"],
  });
  assert.equal(findCode(await connectRefused(t, mcp.url, other))?.code, "endpoint_off_issuer");
  assert.equal(person.asked.length, 0);

  const trusted = providerFor(mcp.url, {
    clientFor: () => ({ clientId: "agentauth-cli" }),
    onAuthorizationUrl: person.open,
    crossOriginEndpoints: [split.origin],
  });
  // The sign-in goes ahead (the real server's `iss` then refuses the answer: it is not the split issuer).
  assert.equal(findCode(await connectRefused(t, mcp.url, trusted))?.code, "iss_mismatch");
  assert.equal(person.asked.length, 1, "the person was sent to the allowed endpoint");
  assert.equal(person.asked[0]?.origin, idp.issuer);
});

test("[MCP-client-device-prompt-issuer] the device prompt names the authorization server, for hosts to show (RFC 8628 §5.4)", async (t) => {
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const { provider, prompts } = devicePerson(mcp.url);
  const client = await connect(mcp.url, provider, { t });
  assert.deepEqual((await client.callTool(whoami)).content, hello);
  assert.equal(prompts.length, 1);
  assert.equal(prompts[0]?.issuer, idp.issuer);
});
