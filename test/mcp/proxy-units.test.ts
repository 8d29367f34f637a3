/**
 * The proxy's pure parts and small I/O (issue 19): --header parsing against malformed and hostile input, the
 * browser opener's command and environment, the shell words of the command the client is told to run.
 */

// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the proxy's own ${VAR} syntax is what these tests feed it

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { browserCommand, openBrowser, parseHeaders, shellWord } from "../../src/mcp/proxy/index.ts";
import { tempDir } from "../support/tmp.ts";

const refused = (specs: string[], env: Record<string, string> = {}) =>
  assert.throws(() => parseHeaders(specs, env), { code: "invalid_header" });

test("[MCP-proxy-header-parse] names, values from the environment, and what is refused", () => {
  assert.deepEqual(parseHeaders(["X-Team: ${TEAM}", "X-Plain:  a b "], { TEAM: "blue" }), {
    "X-Team": "blue",
    "X-Plain": "a b",
  });
  refused(["no colon"]);
  refused([": empty name"]);
  refused(["Bad Name: x"]);
  refused(["X-Crlf: ${V}"], { V: "a\r\nInjected: yes" });
  refused(["X-Nul: ${V}"], { V: "a\u0000b" });
  refused(["X-Wide: ${V}"], { V: "naïve ☃" });
  refused(["X-Long: ${V}"], { V: "x".repeat(100_000) });
  refused(["X-Unset: ${NOPE}"]);
  refused(["X-Empty: ${V}"], { V: "" });
  refused(["Mcp-Session-Id: x"]);
  refused(Array.from({ length: 1000 }, (_, i) => `X-H${i}: v`));
  // One pass: a value that looks like a reference is not expanded again.
  assert.deepEqual(parseHeaders(["X-Once: ${V}"], { V: "${SECRET}", SECRET: "s" }), {
    "X-Once": "${SECRET}",
  });
  // The message names the variable, never a value.
  assert.throws(
    () => parseHeaders(["X-Crlf: ${V}"], { V: "secret-value\n" }),
    (error: Error) => !error.message.includes("secret-value"),
  );
});

test("[MCP-proxy-browser-env] the browser gets the person's environment without agentauth's own variables", async () => {
  const dir = tempDir();
  const dump = join(dir, "env.json");
  const script = join(dir, "browser.mjs");
  writeFileSync(
    script,
    `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(dump)}, JSON.stringify({ env: process.env, argv: process.argv.slice(2) }));`,
  );
  const outcome = await openBrowser("https://auth.example/authorize?state=x", {
    BROWSER: `${process.execPath} ${script}`,
    AGENTAUTH_VAULT_KEY: "key-material",
    AGENTAUTH_DATABASE_URL: "postgres://u@h/db",
    KEEP_ME: "yes",
  });
  assert.equal(outcome, "opened");
  const seen = JSON.parse(readFileSync(dump, "utf8")) as {
    env: Record<string, string>;
    argv: string[];
  };
  assert.deepEqual(seen.argv, ["https://auth.example/authorize?state=x"]);
  assert.equal(seen.env.KEEP_ME, "yes");
  assert.equal(seen.env.AGENTAUTH_VAULT_KEY, undefined);
  assert.equal(seen.env.AGENTAUTH_DATABASE_URL, undefined);
  assert.deepEqual(browserCommand({}, "linux"), undefined, "no display, no browser");
  assert.deepEqual(browserCommand({ DISPLAY: ":0" }, "linux"), ["xdg-open"]);
  assert.deepEqual(browserCommand({}, "darwin"), ["open"]);
});

test("[MCP-proxy-shell-word] the command named to the person reads back as the same words", () => {
  assert.equal(shellWord("default"), "default");
  assert.equal(shellWord("alice@example.com"), "alice@example.com");
  assert.equal(shellWord("two words"), "'two words'");
  assert.equal(shellWord("it's"), "'it'\\''s'");
  assert.equal(shellWord("$(rm -rf ~)"), "'$(rm -rf ~)'");
});
