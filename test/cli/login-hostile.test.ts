import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { asMetadata, type Route, scriptedServer } from "../support/scripted-server.ts";
import { tempDir } from "../support/tmp.ts";

// Every terminal escape sequence starts with a C0/C1 control character; bidi overrides reorder what a person reads.
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const ESC = "\u001b";

/** A scripted authorization server whose device authorization response is `device`; the token endpoint denies. */
async function hostileServer(device: Record<string, unknown>) {
  const metadata: Route = (_req, _body, origin) => ({ body: asMetadata(origin) });
  return scriptedServer({
    "/.well-known/oauth-authorization-server": metadata,
    "/device/auth": () => ({
      body: { device_code: "dc-secret-value", expires_in: 600, interval: 1, ...device },
    }),
    "/token": () => ({ status: 400, body: { error: "access_denied" } }),
  });
}

test("[CLI-login-peer-text] escape sequences in verification_uri, verification_uri_complete and user_code never reach the terminal", {
  timeout: 30_000,
}, async () => {
  const server = await hostileServer({
    verification_uri: `http://127.0.0.1/device${ESC}]8;;http://evil.test${ESC}\\`,
    verification_uri_complete: `http://127.0.0.1/device?user_code=AB${ESC}[2J${ESC}[H\u202eevil`,
    user_code: `WDJB${ESC}[31m-MJHT\u0007\u202e${ESC}]0;pwned\u0007`,
  });
  const result = await runCli(["login", "--issuer", server.origin, "--device"], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1, result.stderr);
  const printed = result.stdout + result.stderr;
  assert.doesNotMatch(printed, UNSAFE, JSON.stringify(printed));
  assert.match(result.stderr, /To sign in, open\n\n {2}http:\/\/127\.0\.0\.1\/device/);
  assert.match(result.stderr, /\n {2}WDJB \[31m-MJHT/, "the code is shown, its controls removed");
  assert.match(result.stderr, /sign-in was denied/);
  assert.ok(!printed.includes("dc-secret-value"), "the device code is never printed");
});

test("[CLI-login-peer-text] an unparseable verification_uri ends the login with a clear error, not a printed string", {
  timeout: 30_000,
}, async () => {
  const server = await hostileServer({
    verification_uri: `not a url ${ESC}[2J`,
    user_code: "ABCD-EFGH",
  });
  const result = await runCli(["login", "--issuer", server.origin, "--device"], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1, result.stderr);
  assert.doesNotMatch(result.stdout + result.stderr, UNSAFE);
  assert.match(result.stderr, /unusable verification URL/);
  assert.ok(!result.stderr.includes("not a url"), "the unusable text itself is not echoed");
});

test("[CLI-login-peer-text] an oversized user_code is clipped", { timeout: 30_000 }, async () => {
  const server = await hostileServer({
    verification_uri: "http://127.0.0.1/device",
    user_code: "A".repeat(100_000),
  });
  const result = await runCli(["login", "--issuer", server.origin, "--device"], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1, result.stderr);
  assert.ok(result.stderr.length < 5_000, `stderr is ${result.stderr.length} characters`);
});
