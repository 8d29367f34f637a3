import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { type CliResult, REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const home = tempDir();
const env = { AGENTAUTH_HOME: home };
const STACK_FRAME = /^\s+at /m;
// biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

/**
 * A usage error: exit 2, one short message naming the problem, the --help hint of the command it belongs to
 * (`command`: "vault list" → `agentauth vault list --help`), no stack trace, nothing on stdout.
 */
function assertUsageError(result: CliResult, mentions: string, command = ""): void {
  assert.equal(result.code, 2, `stderr: ${result.stderr}`);
  assert.equal(result.stdout, "");
  assert.ok(result.stderr.startsWith("agentauth: "), result.stderr);
  assert.ok(result.stderr.includes(mentions), result.stderr);
  const hint = `Run 'agentauth ${command ? `${command} ` : ""}--help' for usage.\n`;
  assert.ok(result.stderr.endsWith(hint), result.stderr);
  assert.doesNotMatch(result.stderr, STACK_FRAME);
}

test("[CLI-help] --help prints the usage of every command on stdout and exits 0", async () => {
  const result = await runCli(["--help"], env);
  assert.equal(result.code, 0);
  assert.equal(result.stderr, "");
  assert.match(result.stdout, /^agentauth: /);
  for (const usage of [
    "agentauth demo",
    "agentauth login --issuer URL",
    "agentauth vault list",
    "agentauth vault revoke <id>",
    "agentauth vault delete <id>",
    "agentauth idp serve",
  ]) {
    assert.ok(result.stdout.includes(usage), `usage lacks ${usage}`);
  }
  assert.match(result.stdout, /Exit codes: 0 success, 1 failure, 2 usage error/);
});

test("[CLI-help] a command's --help exits 0 with that command's usage only", async () => {
  const result = await runCli(["login", "--help"], env);
  assert.equal(result.code, 0);
  assert.ok(result.stdout.startsWith("agentauth login --issuer URL"), result.stdout);
  assert.ok(!result.stdout.includes("agentauth vault"), "not the global help");
  for (const flag of [
    "--issuer",
    "--client-id",
    "--scope",
    "--resource",
    "--device",
    "--browser",
    "--subject",
    "--json",
  ]) {
    assert.match(result.stdout, new RegExp(`^ +${flag}\\b`, "m"), `login --help lists ${flag}`);
  }
  assert.match(result.stdout, /Example:/);
});

/** Every `agentauth <area> <sub>` line of the global help, e.g. ["rap", "tool"], ["vault", "list"], ["login"]. */
async function commandsInGlobalHelp(): Promise<string[][]> {
  const { stdout } = await runCli(["--help"], env);
  const seen = new Map<string, string[]>();
  for (const match of stdout.matchAll(/^agentauth ([a-z]+)(?: ([a-z][a-z-]*))?(?: ([a-z]+))?/gm)) {
    const words = match.slice(1).filter((w): w is string => Boolean(w));
    seen.set(words.join(" "), words);
  }
  return [...seen.values()];
}

test("[CLI-help-per-command] every subcommand's --help prints its own usage, never the global help", {
  timeout: 300_000,
}, async () => {
  const global = await runCli(["--help"], env);
  const commands = await commandsInGlobalHelp();
  assert.ok(commands.length >= 12, `found ${commands.length} commands`);
  // Three at a time: each is a whole CLI start.
  const results: CliResult[] = [];
  for (let i = 0; i < commands.length; i += 3) {
    const batch = commands.slice(i, i + 3).map((words) => runCli([...words, "--help"], env));
    results.push(...(await Promise.all(batch)));
  }
  for (const [i, words] of commands.entries()) {
    const result = results[i] as CliResult;
    assert.equal(result.code, 0, `${words.join(" ")} --help: ${result.stderr}`);
    assert.notEqual(
      result.stdout,
      global.stdout,
      `${words.join(" ")} --help printed the global help`,
    );
    assert.ok(
      result.stdout.startsWith(`agentauth ${words[0]}`) ||
        result.stdout.includes(`agentauth ${words.join(" ")}`),
      `${words.join(" ")} --help: ${result.stdout.slice(0, 200)}`,
    );
    assert.ok(
      !result.stdout.includes("Exit codes:"),
      `${words.join(" ")} --help is not the global help`,
    );
  }
});

test("[CLI-help-per-command] `agentauth help <command…>` is the same as `<command…> --help`", async () => {
  const viaHelp = await runCli(["help", "vault", "list"], env);
  const viaFlag = await runCli(["vault", "list", "--help"], env);
  assert.equal(viaHelp.code, 0);
  assert.equal(viaHelp.stdout, viaFlag.stdout);
  assert.match(viaFlag.stdout, /^agentauth vault list/);
});

test("[CLI-help-per-command] --help after `--` belongs to the agent command, not to agentauth", async () => {
  // `acp status -- agent --help`: agentauth must not answer with help; it runs the (missing) agent and fails.
  const result = await runCli(["acp", "status", "--", "/nonexistent/agent-binary", "--help"], env);
  assert.notEqual(result.code, 0);
  assert.ok(!result.stdout.includes("agentauth acp status"), result.stdout);
});

test("[CLI-version] --version prints the package version and exits 0", async () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
  const result = await runCli(["--version"], env);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `${pkg.version}\n`);
  assert.equal(result.stderr, "");
});

test("[CLI-usage-area] an area without its subcommand prints that area's commands and exits 2", async () => {
  for (const [area, subs] of [
    ["vault", ["list", "revoke", "delete"]],
    ["idp", ["serve"]],
    ["rap", ["tool", "runtime", "inspect"]],
    ["ahp", ["status", "login", "host"]],
    ["acp", ["status", "login", "logout"]],
  ] as const) {
    const result = await runCli([area], env);
    assert.equal(result.code, 2, `${area}: ${result.stderr}`);
    assert.equal(result.stdout, "");
    assert.ok(!result.stderr.includes("command ''"), result.stderr);
    assert.ok(
      result.stderr.startsWith(`agentauth: 'agentauth ${area}' needs a subcommand: `),
      result.stderr,
    );
    for (const sub of subs)
      assert.ok(result.stderr.includes(`agentauth ${area} ${sub}`), `${area} usage names ${sub}`);
    assert.ok(!result.stderr.includes("agentauth demo"), "only the area's usage");
    assert.doesNotMatch(result.stderr, STACK_FRAME);
  }
});

test("[CLI-usage-area] an unknown subcommand names the valid ones", async () => {
  assertUsageError(
    await runCli(["rap", "bogus"], env),
    "unknown rap command 'bogus'; the rap commands are tool, runtime, inspect",
    "rap",
  );
});

test("[CLI-usage-area] two-word commands: a missing or unknown second word names the valid ones", async () => {
  assertUsageError(
    await runCli(["ahp", "host"], env),
    "'agentauth ahp host' needs a subcommand: serve.",
    "ahp",
  );
  const result = await runCli(["rap", "tool", "bogus"], env);
  assertUsageError(
    result,
    "unknown rap tool command 'bogus'; the rap tool commands are serve",
    "rap",
  );
  assert.ok(!result.stderr.includes("command ''"));
});

test("[CLI-json-errors] with --json a usage error is JSON on stdout, exit 2, nothing on stderr", async () => {
  const result = await runCli(["login", "--json", "--bogus"], env);
  assert.equal(result.code, 2);
  assert.equal(result.stderr, "");
  const parsed = JSON.parse(result.stdout);
  assert.equal(parsed.error.code, "usage");
  assert.match(parsed.error.message, /--bogus/);
  assert.deepEqual(Object.keys(parsed), ["error"]);
});

test("[CLI-json-errors] with --json a failure is JSON on stdout with the error's code, exit 1", async () => {
  for (const args of [
    ["login", "--json", "--issuer", "http://127.0.0.1:1"],
    ["login", "--json", "--issuer", "not a url"],
    ["vault", "list", "--json"],
  ]) {
    const home = tempDir();
    if (args[0] === "vault") writeFileSync(join(home, "vault.db"), "this is not a SQLite database");
    const result = await runCli(args, { AGENTAUTH_HOME: home });
    assert.equal(result.code, 1, `${args.join(" ")}: ${result.stdout} ${result.stderr}`);
    const parsed = JSON.parse(result.stdout);
    assert.equal(typeof parsed.error.code, "string", result.stdout);
    assert.ok(parsed.error.code.length > 0);
    assert.equal(typeof parsed.error.message, "string");
    assert.doesNotMatch(result.stderr, STACK_FRAME);
  }
});

test("[CLI-help] no arguments prints the usage and exits 2", async () => {
  const result = await runCli([], env);
  assert.equal(result.code, 2);
  assert.ok(`${result.stdout}${result.stderr}`.includes("Usage:"));
});

test("[CLI-help] an unknown command exits 2 with only the message and the hint (no log lines)", async () => {
  const result = await runCli(["bogus"], env);
  assertUsageError(result, "unknown command 'bogus'");
  assert.equal(
    result.stderr,
    "agentauth: unknown command 'bogus'; the commands are demo, console, login, providers, token, vault, acp, ahp, rap, mcp, idp\n" +
      "Run 'agentauth --help' for usage.\n",
  );
});

test("[CLI-help] an unknown flag exits 2 with a message, not a stack trace", async () => {
  assertUsageError(await runCli(["login", "--bogus"], env), "--bogus", "login");
});

test("[CLI-help] login without --issuer exits 2", async () => {
  assertUsageError(await runCli(["login", "--device"], env), "--issuer", "login");
});

test("[CLI-help] login with both --device and --browser exits 2", async () => {
  assertUsageError(
    await runCli(["login", "--issuer", "http://127.0.0.1:9", "--device", "--browser"], env),
    "--device",
    "login",
  );
});

test("[CLI-help] vault revoke without an id exits 2", async () => {
  assertUsageError(
    await runCli(["vault", "revoke"], env),
    "vault revoke needs exactly one <id>",
    "vault revoke",
  );
});

test("[CLI-help] an unknown vault command exits 2", async () => {
  assertUsageError(
    await runCli(["vault", "bogus"], env),
    "unknown vault command 'bogus'; the vault commands are list, revoke, delete, reencrypt",
    "vault",
  );
});

test("[CLI-help] idp serve --port abc exits 2", async () => {
  assertUsageError(
    await runCli(["idp", "serve", "--port", "abc"], env),
    "--port must be an integer",
    "idp serve",
  );
});

test("[CLI-help] idp serve --port 70000 exits 2", async () => {
  assertUsageError(
    await runCli(["idp", "serve", "--port", "70000"], env),
    "--port must be an integer",
    "idp serve",
  );
});

test("[CLI-help] idp without serve exits 2", async () => {
  const result = await runCli(["idp"], env);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^agentauth: 'agentauth idp' needs a subcommand: serve\./);
});

test("[CLI-help] AGENTAUTH_LOG_LEVEL=debug adds the structured error line the hint promises", async () => {
  const result = await runCli(["bogus"], { ...env, AGENTAUTH_LOG_LEVEL: "debug" });
  assert.equal(result.code, 2);
  const [logLine] = result.stderr.split("\n");
  const record = JSON.parse(logLine ?? "");
  assert.equal(record.event, "cli.error");
  assert.deepEqual(record.error, {
    name: "UsageError",
    message:
      "unknown command 'bogus'; the commands are demo, console, login, providers, token, vault, acp, ahp, rap, mcp, idp",
    code: "usage",
  });
});

test("[CLI-usage-hostile] hostile and oversized arguments are echoed without control characters, clipped, exit 2", async () => {
  for (const args of [
    ["\u001b]0;pwned\u0007"],
    ["rap", "\u001b[2J\u202e", "--help"],
    ["vault", "x".repeat(100_000)],
    ["login", `--${"\u001b[31m"}`],
  ]) {
    const result = await runCli(args, env);
    assert.ok(
      result.code === 2 || result.code === 0,
      `${JSON.stringify(args).slice(0, 80)}: ${result.code}`,
    );
    assert.doesNotMatch(result.stdout + result.stderr, UNSAFE);
    assert.ok(result.stderr.length < 5_000, `stderr is ${result.stderr.length} characters`);
    assert.doesNotMatch(result.stderr, STACK_FRAME);
  }
});
