/**
 * Issue 21, trap 2: an ACP agent that exits during `initialize` says why on its stderr; the error shows its last
 * lines (sanitised: no escape sequence or bidi override reaches the terminal), in words and under --json.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const AGENT = [
  process.execPath,
  join(import.meta.dirname, "fixtures", "agent-dies-on-initialize.ts"),
];

test("[ACP-client-agent-stderr] an agent that exits during initialize: the error quotes the last lines of its stderr, sanitised", {
  timeout: 60_000,
}, async () => {
  const home = tempDir();
  const result = await runCli(["acp", "status", "--", ...AGENT], { AGENTAUTH_HOME: home });
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /exited with code 1 during initialize/);
  assert.match(result.stderr, /OPENAI_API_KEY is not set\./, "the agent's own reason is shown");
  assert.match(result.stderr, /my-agent login/);
  assert.doesNotMatch(result.stderr, /loading plugin 0\b/, "only the last lines");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that nothing of the kind passes is the point.
  assert.doesNotMatch(result.stderr, /[\u001b\u0007\u202e]/, "no escape, bell or bidi override");

  const json = await runCli(["acp", "status", "--json", "--", ...AGENT], { AGENTAUTH_HOME: home });
  assert.equal(json.code, 1);
  const error = JSON.parse(json.stdout) as { error: { code: string; message: string } };
  assert.match(error.error.message, /OPENAI_API_KEY is not set\./);
  assert.ok(!/\\u001b|\\u202e/i.test(json.stdout), "nothing escaped was left to escape");
});
