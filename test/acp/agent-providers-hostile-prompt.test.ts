/**
 * The ACP agent kit shows a device prompt that came from the authorization server (a peer): a verification URL
 * or user code carrying terminal escapes or bidi overrides reaches the terminal and the ACP client only after
 * sanitising, like the CLI does (RFC 8628 section 3.3 puts both in the server's answer). A scripted hostile server
 * on a real loopback socket plays the peer.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { createAgentAuth, runTerminalLoginIfRequested } from "../../src/acp/agent/index.ts";
import { generic } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

const ESC = "\u001b";
const RLO = "\u202e";

/** A device authorization server whose prompt is hostile and whose token endpoint then refuses (access_denied). */
async function hostileDeviceServer(prompt: Record<string, unknown>): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/device") {
        res.end(JSON.stringify({ device_code: "dc", expires_in: 600, interval: 1, ...prompt }));
      } else {
        res.statusCode = 400;
        res.end(JSON.stringify({ error: "access_denied" }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function terminalLogin(base: string): Promise<string> {
  const provider = generic({
    endpoints: { issuer: base, token: `${base}/token`, device: `${base}/device` },
    clientId: "agent-client",
  });
  const auth = createAgentAuth({
    name: "t",
    store: new MemoryCredentialStore(),
    methods: [
      { kind: "oauth", id: "idp", provider, flow: "device" },
      {
        kind: "terminal",
        id: "terminal",
        name: "Sign in in a terminal",
        args: ["--login"],
        oauthMethodId: "idp",
      },
    ],
  });
  let stderr = "";
  const code = await runTerminalLoginIfRequested(auth, ["--login"], {
    stderr: (text) => {
      stderr += text;
    },
    interactive: false,
  });
  assert.equal(code, 1, "denied: the login fails");
  return stderr;
}

test("[ACP-provider-hostile-device-prompt] a verification URL and user code with terminal escapes and bidi overrides are shown sanitised on the terminal", async () => {
  const base = await hostileDeviceServer({
    verification_uri: `https://idp.example/dev${ESC}]0;owned${ESC}\\ice`,
    verification_uri_complete: `https://idp.example/x${RLO}evil`,
    user_code: `AB${ESC}[2JCD${RLO}-EF`,
  });
  const stderr = await terminalLogin(base);
  assert.ok(!stderr.includes(ESC), `no escape reaches the terminal: ${JSON.stringify(stderr)}`);
  assert.ok(!stderr.includes(RLO), "no bidi override reaches the terminal");
  assert.match(stderr, /open\n\n {2}https:\/\/idp\.example\/dev/);
  assert.match(stderr, /and enter the code\n\n {2}AB/);
});

test("[ACP-provider-hostile-device-prompt] an unusable verification URL is refused with a typed message, not printed", async () => {
  const base = await hostileDeviceServer({
    verification_uri: "not a url at all",
    user_code: "ABCD-EFGH",
  });
  const stderr = await terminalLogin(base);
  assert.doesNotMatch(stderr, /not a url at all/);
  assert.match(stderr, /unusable verification URL/);
});
