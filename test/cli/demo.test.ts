import assert from "node:assert/strict";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

test("[CLI-npm-start] demo --auto-approve --port 0 signs in unattended and exits 0", {
  timeout: 60_000,
}, async () => {
  const env = { AGENTAUTH_HOME: tempDir() };
  const result = await runCli(["demo", "--auto-approve", "--port", "0"], env);
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /^Logged in as Alice Liddell <alice@example\.test> \(Wonderland Labs\) at http:\/\/127\.0\.0\.1:\d+; vault id \S+\.\n$/,
  );
  assert.match(
    result.stderr,
    /Embedded authorization server running at http:\/\/127\.0\.0\.1:\d+ \(auto-approving as alice\)/,
  );
  const list = await runCli(["vault", "list", "--json"], env);
  assert.equal(JSON.parse(list.stdout).length, 1, "the demo's credential is in the vault");
});
