/**
 * The proxy's sign-in as MCP clients meet it (issue 19): while no token exists the client gets an answer naming
 * what to open, not a silent hang; a client restarting the proxy during a browser sign-in joins it instead of
 * starting another; a revoked grant leads to one sign-in prompt, not a loop. `$BROWSER` records the URL it is given
 * and, with FETCH_BROWSER_HOLD=1, leaves the person not done yet; the test then finishes the sign-in itself.
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { signInLeaseName } from "../../src/mcp/proxy/index.ts";
import { discoverAuthorizationServer, revokeTokens } from "../../src/oauth/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { runCli } from "../support/cli.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  connectThroughProxy,
  endBackgroundSignIn,
  FETCH_BROWSER,
} from "./fixtures/proxy-client.ts";
import { startStatefulMcpServer } from "./fixtures/stateful-mcp-server.ts";

const idp = await useIdp();

function browserLog(home: string): string[] {
  const file = join(home, "browser.log");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean) : [];
}

/** The person is slow: `$BROWSER` notes the URL and does not open it. One second of patience per request. */
function slowPersonEnv(home: string): Record<string, string> {
  return {
    AGENTAUTH_HOME: home,
    BROWSER: FETCH_BROWSER,
    FETCH_BROWSER_LOG: join(home, "browser.log"),
    FETCH_BROWSER_HOLD: "1",
  };
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test("[MCP-proxy-sign-in-answer] with no token, the client's request is answered with the URL to open and the command, not a hang; a client restarting the proxy joins the same sign-in; once the person is done, the next start works and the background sign-in has ended", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const env = slowPersonEnv(home);
  const first = await connectThroughProxy(mcp.url, env, ["--sign-in-wait", "1"]).catch(
    (e: Error) => e,
  );
  assert.ok(first instanceof Error, "the first start cannot finish without a sign-in");
  const [url] = await waitFor("the browser to be asked", () =>
    browserLog(home)[0] ? browserLog(home) : undefined,
  );
  assert.ok(url);
  assert.match(first.message, /Sign in to http:\/\/127\.0\.0\.1:\d+\/mcp to use it: open /);
  assert.ok(first.message.includes(url), "the answer names the URL the browser was given");
  assert.match(
    first.message,
    /npx agentauth mcp login http:\/\/127\.0\.0\.1:\d+\/mcp --subject default/,
  );

  // The client restarts the proxy: the same sign-in, the same URL, no second browser tab.
  const second = await connectThroughProxy(mcp.url, env, ["--sign-in-wait", "1"]).catch(
    (e: Error) => e,
  );
  assert.ok(second instanceof Error);
  assert.ok(second.message.includes(url));
  assert.equal(browserLog(home).length, 1, "one sign-in for both starts");

  // The person finishes in the browser; the background sign-in stores the credential and ends.
  await (await fetch(url)).arrayBuffer();
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const lease = signInLeaseName(mcp.url, "default");
    await waitFor("the background sign-in to end", async () =>
      (await vault.getLease?.(lease)) ? undefined : true,
    );
  } finally {
    await vault.close();
  }
  const third = await connectThroughProxy(mcp.url, env);
  assert.deepEqual((await third.client.callTool({ name: "whoami", arguments: {} })).content, [
    { type: "text", text: "hello alice" },
  ]);
  assert.equal(browserLog(home).length, 1);
  await third.close();
});

test("[MCP-proxy-revoked-one-prompt] a revoked grant leads to one sign-in prompt for every proxy and call, not a loop of authorization requests", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const signedIn = await connectThroughProxy(mcp.url, {
    AGENTAUTH_HOME: home,
    BROWSER: FETCH_BROWSER,
  });
  const others = await Promise.all(
    [1, 2].map(() => connectThroughProxy(mcp.url, slowPersonEnv(home), ["--sign-in-wait", "1"])),
  );
  // The grant is revoked at the authorization server, and the access token has run out.
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  const [summary] = (await vault.list()).filter((c) => c.resource.startsWith("http"));
  const record = summary && (await vault.getById(summary.id));
  assert.ok(record?.tokens.refreshToken);
  await revokeTokens({
    as: await discoverAuthorizationServer(idp.issuer),
    client: { clientId: record.clientId },
    refreshToken: record.tokens.refreshToken,
  });
  await expireAccessToken(vault, record);
  await vault.close();
  idp.resetStats();

  const calls = await Promise.all(
    [...others, ...others].map(({ client }) =>
      client.callTool({ name: "whoami", arguments: {} }).then(
        () => "ok",
        (e: Error) => e.message,
      ),
    ),
  );
  for (const answer of calls) assert.match(answer, /Sign in to .* to use it: open http/);
  // The note is published before the browser is started: wait for the browser, then count.
  await waitFor("the browser to be asked", () => (browserLog(home).length > 0 ? true : undefined));
  assert.equal(browserLog(home).length, 1, "one prompt");
  const started = others
    .flatMap((o) => o.stderr().split("\n"))
    .filter((line) => line.includes('"mcp.proxy.sign_in_started"'));
  assert.equal(started.length, 1, "one request starts the sign-in; the others join it");
  assert.ok(
    calls.every((answer) => answer.includes(browserLog(home)[0] as string)),
    "all name it",
  );
  assert.ok(
    (idp.stats.byGrant.refresh_token?.error ?? 0) <= 1,
    "the refused refresh token was not retried",
  );
  await signedIn.close();
  // The person never finishes here: end the background sign-in rather than leave it waiting out its 5 minutes.
  await endBackgroundSignIn(home, mcp.url);
});

test("[MCP-proxy-late-sign-in-none] a background sign-in that starts after another one finished signs nobody in again: the vault's credential is used", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const env = {
    AGENTAUTH_HOME: home,
    BROWSER: FETCH_BROWSER,
    FETCH_BROWSER_LOG: join(home, "browser.log"),
  };
  const signedIn = await connectThroughProxy(mcp.url, env);
  await signedIn.close();
  assert.equal(browserLog(home).length, 1, "the first sign-in");
  idp.resetStats();
  // What a proxy that saw the refusal late starts: the background sign-in, after the first one let its lease go.
  const late = await runCli(["mcp", "login", mcp.url, "--background"], env);
  assert.equal(late.code, 0, late.stderr);
  assert.equal(browserLog(home).length, 1, "no second browser sign-in");
  assert.equal(idp.stats.byGrant.authorization_code, undefined, "nobody signed in again");
});
