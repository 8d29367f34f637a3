/**
 * `agentauth mcp example-server --issuer URL` says ready only for an issuer it can use: an authorization server that
 * does not answer, or a server that is not one, is a plain error (exit 1, no ready line) instead of a server whose
 * every call then fails. An authorization server started a moment later (`idp serve & mcp example-server &`, as
 * docs/mcp.md does) is waited for, within --issuer-wait.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { startIdp } from "../../src/idp/index.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { tempDir } from "../support/tmp.ts";

function env() {
  return { AGENTAUTH_HOME: tempDir() };
}

function jsonError(result: CliResult): { code: string; message: string } {
  return (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
}

/** A real HTTP server that is not an authorization server: every path answers 404. */
const notAnAs = createServer((_req, res) => {
  res.writeHead(404, { "content-type": "text/plain" }).end("not here");
});
await new Promise<void>((resolve) => notAnAs.listen(0, "127.0.0.1", resolve));
after(() => new Promise((resolve) => notAnAs.close(resolve)));
const notAnAsUrl = `http://127.0.0.1:${(notAnAs.address() as AddressInfo).port}`;

test("[CLI-mcp-example-server-issuer] an issuer where nothing listens: exit 1 once --issuer-wait is over, no ready line, says the authorization server does not answer and how to start one; text and JSON", {
  timeout: 60_000,
}, async () => {
  const issuer = `http://127.0.0.1:${await closedPort()}`;
  const text = await runCli(
    ["mcp", "example-server", "--issuer", issuer, "--issuer-wait", "1"],
    env(),
  );
  assert.equal(text.code, 1, text.stderr);
  assert.equal(text.stdout, "", "no ready line");
  assert.match(text.stderr, /waiting for the authorization server/);
  assert.match(text.stderr, /\[issuer_unreachable\]\n$/);
  assert.ok(text.stderr.includes(issuer), text.stderr);
  assert.match(text.stderr, /agentauth idp serve/);

  const json = await runCli(
    ["mcp", "example-server", "--issuer", issuer, "--issuer-wait", "0", "--json"],
    env(),
  );
  assert.equal(json.code, 1, json.stderr);
  assert.doesNotMatch(json.stderr, /waiting/, "--issuer-wait 0 checks once");
  const error = jsonError(json);
  assert.equal(error.code, "issuer_unreachable");
  assert.ok(error.message.includes(issuer), error.message);
});

test("[CLI-mcp-example-server-issuer] an issuer that answers but is not an authorization server: exit 1 at once, no ready line, code issuer_not_authorization_server; text and JSON", {
  timeout: 60_000,
}, async () => {
  const text = await runCli(["mcp", "example-server", "--issuer", notAnAsUrl], env());
  assert.equal(text.code, 1, text.stderr);
  assert.equal(text.stdout, "", "no ready line");
  assert.match(text.stderr, /\[issuer_not_authorization_server\]\n$/);
  assert.match(text.stderr, /not an OAuth authorization server/);
  assert.doesNotMatch(text.stderr, /waiting/, "a server that answers is not waited for");
  assert.equal(
    text.stderr.split("path included").length - 1,
    1,
    `the advice is said once: ${text.stderr}`,
  );

  const json = await runCli(["mcp", "example-server", "--issuer", notAnAsUrl, "--json"], env());
  assert.equal(json.code, 1);
  assert.equal(jsonError(json).code, "issuer_not_authorization_server");
});

test("[CLI-mcp-example-server-issuer] an authorization server that comes up while it waits (idp serve started after it): it then says ready, serves, and ends on SIGTERM", {
  timeout: 90_000,
}, async (t) => {
  const port = await closedPort();
  const issuer = `http://127.0.0.1:${port}`;
  const cli = startCli(["mcp", "example-server", "--issuer", issuer, "--issuer-wait", "60"], env());
  await cli.waitFor("stderr", /waiting for the authorization server/);
  const idp = await startIdp({ port });
  t.after(() => idp.close());
  assert.equal(idp.issuer, issuer);
  const [line] = await cli.waitFor("stdout", /^\{.*\}\n/);
  const ready = JSON.parse(line) as { event: string; url: string; issuer: string };
  assert.equal(ready.event, "ready");
  assert.equal(ready.issuer, issuer);
  const metadata = await fetch(
    new URL("/.well-known/oauth-protected-resource/mcp", ready.url),
  ).then((r) => r.json());
  assert.deepEqual(metadata.authorization_servers, [issuer]);
  cli.kill("SIGTERM");
  const end = await cli.exited;
  assert.equal(end.code, 0, end.stderr);
});

test("[CLI-mcp-example-server-issuer] --issuer-wait takes whole seconds from 0 to 600: anything else is a usage error (exit 2)", {
  timeout: 60_000,
}, async () => {
  for (const value of ["-1", "abc", "601", "1.5", ""]) {
    const result = await runCli(
      ["mcp", "example-server", "--issuer", notAnAsUrl, `--issuer-wait=${value}`],
      env(),
    );
    assert.equal(result.code, 2, `${value}: ${result.stderr}`);
    assert.match(result.stderr, /--issuer-wait must be/);
  }
});
