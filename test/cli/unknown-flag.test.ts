/**
 * A typo'd flag, on every command: the real CLI as a child process names the flag, the command's options, the
 * closest one when there is one and the command's --help, in text and as a JSON error with a stable code. Hostile
 * flag names (terminal escapes, control characters, 10 KB) come back sanitised and bounded.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { type CliResult, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

interface Case {
  /** The command line before the bogus flag. */
  args: string[];
  /** The command words its --help hint names. */
  help: string;
  /** Arguments after the flag (the agent command of `acp status`). */
  tail?: string[];
  /** Where a --json error goes: `token` keeps stdout for the token alone. */
  jsonTo?: "stdout" | "stderr";
}

const COMMANDS: Case[] = [
  { args: ["demo"], help: "demo" },
  { args: ["console"], help: "console" },
  { args: ["login"], help: "login" },
  { args: ["providers"], help: "providers" },
  { args: ["token", "some-id"], help: "token", jsonTo: "stderr" },
  { args: ["vault", "list"], help: "vault list" },
  { args: ["vault", "revoke", "some-id"], help: "vault revoke" },
  { args: ["vault", "delete", "some-id"], help: "vault delete" },
  { args: ["vault", "reencrypt"], help: "vault reencrypt" },
  { args: ["acp", "status"], help: "acp status", tail: ["--", "true"] },
  { args: ["acp", "login"], help: "acp login", tail: ["--", "true"] },
  { args: ["acp", "logout"], help: "acp logout", tail: ["--", "true"] },
  { args: ["acp", "example-agent"], help: "acp example-agent" },
  { args: ["ahp", "status"], help: "ahp status" },
  { args: ["ahp", "login"], help: "ahp login" },
  { args: ["ahp", "host", "serve"], help: "ahp host serve" },
  { args: ["rap", "tool", "serve"], help: "rap tool serve" },
  { args: ["rap", "runtime", "serve"], help: "rap runtime serve" },
  { args: ["rap", "inspect"], help: "rap inspect" },
  { args: ["mcp", "login"], help: "mcp login" },
  { args: ["mcp", "status"], help: "mcp status" },
  { args: ["mcp", "logout"], help: "mcp logout" },
  { args: ["mcp", "example-server"], help: "mcp example-server" },
  { args: ["idp", "serve"], help: "idp serve" },
];

function run(c: Case, flag: string, json = false): Promise<CliResult> {
  const args = [...c.args, flag, ...(json ? ["--json"] : []), ...(c.tail ?? [])];
  return runCli(args, { AGENTAUTH_HOME: tempDir(), AGENTAUTH_VAULT_KEY: "" });
}

function jsonError(c: Case, result: CliResult): { code: string; message: string } {
  const out = c.jsonTo === "stderr" ? result.stderr : result.stdout;
  const other = c.jsonTo === "stderr" ? result.stdout : result.stderr;
  assert.equal(other, "", `the JSON error is on ${c.jsonTo ?? "stdout"} only`);
  return (JSON.parse(out) as { error: { code: string; message: string } }).error;
}

/** Nothing a terminal would act on: no control character but the line ends. */
function assertPrintable(text: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point.
  assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/, JSON.stringify(text));
}

for (const c of COMMANDS) {
  const name = `agentauth ${c.args.join(" ")}`;
  test(`[CLI-unknown-flag] ${name} --bogus: exit 2, names the flag, the options and '${c.help} --help'; --json gives the usage code`, {
    timeout: 60_000,
  }, async () => {
    const text = await run(c, "--bogus");
    assert.equal(text.code, 2, text.stderr);
    assert.equal(text.stdout, "");
    assert.ok(text.stderr.includes("unknown option '--bogus'"), text.stderr);
    assert.ok(text.stderr.includes(`for 'agentauth ${c.help}'`), text.stderr);
    assert.match(text.stderr, /its options are --[a-z]/);
    assert.ok(text.stderr.includes(`agentauth ${c.help} --help`), text.stderr);
    assert.doesNotMatch(text.stderr, /positional argument/, "not node:util's message");

    const json = await run(c, "--bogus", true);
    assert.equal(json.code, 2);
    const error = jsonError(c, json);
    assert.equal(error.code, "usage");
    assert.ok(error.message.includes("'--bogus'"), error.message);
    assert.ok(error.message.includes(`agentauth ${c.help} --help`), error.message);
  });
}

const TYPOS: Array<{ c: Case; typed: string; meant: string }> = [
  { c: { args: ["vault", "list"], help: "vault list" }, typed: "--jsn", meant: "--json" },
  {
    c: { args: ["mcp", "login", "http://127.0.0.1:9/mcp"], help: "mcp login" },
    typed: "--scpoe",
    meant: "--scope",
  },
  { c: { args: ["login"], help: "login" }, typed: "--isuer=http://x", meant: "--issuer" },
  { c: { args: ["idp", "serve"], help: "idp serve" }, typed: "--prot", meant: "--port" },
  {
    c: { args: ["rap", "inspect", "http://127.0.0.1:9"], help: "rap inspect" },
    typed: "--tool-atuh",
    meant: "--tool-auth",
  },
  {
    c: { args: ["token", "some-id"], help: "token", jsonTo: "stderr" },
    typed: "--josn",
    meant: "--json",
  },
];

for (const { c, typed, meant } of TYPOS) {
  test(`[CLI-unknown-flag] agentauth ${c.args[0]} … ${typed}: suggests ${meant}, in text and JSON`, {
    timeout: 60_000,
  }, async () => {
    const shown = typed.split("=")[0];
    const text = await run(c, typed);
    assert.equal(text.code, 2, text.stderr);
    assert.ok(text.stderr.includes(`unknown option '${shown}'`), text.stderr);
    assert.ok(text.stderr.includes(`did you mean ${meant}?`), text.stderr);
    assert.ok(!text.stderr.includes("http://x"), "the value given with = is not echoed");
    if (meant === "--json") return; // `--json` is the meant flag, not given: no JSON variant to run
    const error = jsonError(c, await run(c, typed, true));
    assert.equal(error.code, "usage");
    assert.ok(error.message.includes(`did you mean ${meant}?`), error.message);
  });
}

test("[CLI-unknown-flag] hostile flag names (terminal escapes, control characters, 10 KB) are shown sanitised and bounded, text and JSON", {
  timeout: 60_000,
}, async () => {
  const c: Case = { args: ["vault", "list"], help: "vault list" };
  const hostile = [
    "--\u001b[2J\u001b]0;owned\u0007title",
    "--a\u0008\u0008\u007fb\u009bc\r\ndone",
    `--${"x".repeat(10_240)}`,
    "--\u202eevil\u200b",
  ];
  for (const flag of hostile) {
    const text = await run(c, flag);
    assert.equal(text.code, 2, text.stderr);
    assert.match(text.stderr, /unknown option '--/);
    assertPrintable(text.stderr);
    assert.doesNotMatch(text.stderr, /[\u202e\u200b]/u);
    assert.ok(text.stderr.length < 600, `bounded: ${text.stderr.length} characters`);
    const error = jsonError(c, await run(c, flag, true));
    assert.equal(error.code, "usage");
    assertPrintable(error.message);
    assert.ok(error.message.length < 600, `bounded: ${error.message.length} characters`);
  }
});
