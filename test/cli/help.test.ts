import assert from "node:assert/strict";
import { test } from "node:test";
import { type CliResult, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const home = tempDir();
const env = { AGENTAUTH_HOME: home };
const STACK_FRAME = /^\s+at /m;

/** A usage error: exit 2, one short message naming the problem, the --help hint, no stack trace, nothing on stdout. */
function assertUsageError(result: CliResult, mentions: string): void {
  assert.equal(result.code, 2, `stderr: ${result.stderr}`);
  assert.equal(result.stdout, "");
  assert.ok(result.stderr.startsWith("agentauth: "), result.stderr);
  assert.ok(result.stderr.includes(mentions), result.stderr);
  assert.ok(result.stderr.endsWith("Run 'agentauth --help' for usage.\n"), result.stderr);
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

test("[CLI-help] a command's --help exits 0 with the usage", async () => {
  const result = await runCli(["login", "--help"], env);
  assert.equal(result.code, 0);
  assert.ok(result.stdout.includes("agentauth login --issuer URL"));
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
    "agentauth: unknown command 'bogus'\nRun 'agentauth --help' for usage.\n",
  );
});

test("[CLI-help] an unknown flag exits 2 with a message, not a stack trace", async () => {
  assertUsageError(await runCli(["login", "--bogus"], env), "--bogus");
});

test("[CLI-help] login without --issuer exits 2", async () => {
  assertUsageError(await runCli(["login", "--device"], env), "--issuer");
});

test("[CLI-help] login with both --device and --browser exits 2", async () => {
  assertUsageError(
    await runCli(["login", "--issuer", "http://127.0.0.1:9", "--device", "--browser"], env),
    "--device",
  );
});

test("[CLI-help] vault revoke without an id exits 2", async () => {
  assertUsageError(await runCli(["vault", "revoke"], env), "vault revoke needs exactly one <id>");
});

test("[CLI-help] an unknown vault command exits 2", async () => {
  assertUsageError(await runCli(["vault", "bogus"], env), "unknown vault command 'bogus'");
});

test("[CLI-help] idp serve --port abc exits 2", async () => {
  assertUsageError(
    await runCli(["idp", "serve", "--port", "abc"], env),
    "--port must be an integer",
  );
});

test("[CLI-help] idp serve --port 70000 exits 2", async () => {
  assertUsageError(
    await runCli(["idp", "serve", "--port", "70000"], env),
    "--port must be an integer",
  );
});

test("[CLI-help] idp without serve exits 2", async () => {
  assertUsageError(await runCli(["idp"], env), "unknown idp command");
});

test("[CLI-help] AGENTAUTH_LOG_LEVEL=debug adds the structured error line the hint promises", async () => {
  const result = await runCli(["bogus"], { ...env, AGENTAUTH_LOG_LEVEL: "debug" });
  assert.equal(result.code, 2);
  const [logLine] = result.stderr.split("\n");
  const record = JSON.parse(logLine ?? "");
  assert.equal(record.event, "cli.error");
  assert.deepEqual(record.error, {
    name: "UsageError",
    message: "unknown command 'bogus'",
    code: "usage",
  });
});
