/** The pure core of unknown-flag messages (src/cli/flags.ts): which flag is named, what is suggested, how much. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { parseFlags, UnknownOptionError, unknownOptionMessage } from "../../src/cli/flags.ts";
import { UsageError } from "../../src/cli/io.ts";

const OPTIONS = {
  json: { type: "boolean" },
  scope: { type: "string" },
  "step-up-scope": { type: "string" },
} as const;

function refused(args: string[]): UnknownOptionError {
  try {
    parseFlags({ args, options: OPTIONS, strict: true, allowPositionals: true });
  } catch (error) {
    assert.ok(error instanceof UnknownOptionError, String(error));
    assert.ok(error instanceof UsageError, "a usage error: exit 2");
    assert.equal(error.code, "usage");
    return error;
  }
  assert.fail(`${args.join(" ")} was accepted`);
}

test("[CLI-unknown-flag] parseFlags names the flag without its =value, lists the options, and parses known flags as node:util does", () => {
  const error = refused(["x", "--scpoe=secret-value", "--json"]);
  assert.equal(error.flag, "--scpoe");
  assert.deepEqual(error.options, ["--json", "--scope", "--step-up-scope"]);
  assert.ok(!error.message.includes("secret-value"), error.message);
  assert.match(error.message, /did you mean --scope\?/);
  const ok = parseFlags({
    args: ["x", "--json", "--scope", "a b"],
    options: OPTIONS,
    allowPositionals: true,
  });
  assert.deepEqual(ok.positionals, ["x"]);
  assert.equal(ok.values.json, true);
  assert.equal(ok.values.scope, "a b");
});

test("[CLI-unknown-flag] a letter of a short group is named alone; flags after -- are not flags", () => {
  assert.equal(refused(["-jx"]).flag, "-j");
  const after = parseFlags({ args: ["--", "--bogus"], options: OPTIONS, allowPositionals: true });
  assert.deepEqual(after.positionals, ["--bogus"]);
});

test("[CLI-unknown-flag] suggestions: within two edits (a swap counts as one), the closest wins, none when nothing is near", () => {
  assert.match(unknownOptionMessage("--josn", ["--json"]), /did you mean --json\?/);
  assert.match(
    unknownOptionMessage("--step-up-scop", ["--scope", "--step-up-scope"]),
    /--step-up-scope\?/,
  );
  assert.doesNotMatch(unknownOptionMessage("--bogus", ["--json", "--scope"]), /did you mean/);
  assert.doesNotMatch(unknownOptionMessage("--x", []), /its options/);
  assert.match(
    unknownOptionMessage("--x", ["--json"], "vault list"),
    /^unknown option '--x' for 'agentauth vault list'; its options are --json$/,
  );
});

test("[CLI-unknown-flag] a hostile flag is shown without control characters and bounded", () => {
  const flag = refused([`--\u001b[31m${"a".repeat(10_000)}`]).flag;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point.
  assert.doesNotMatch(flag, /[\u0000-\u001f\u007f-\u009f]/);
  assert.ok(flag.length <= 41, `40 characters and an ellipsis at most: ${flag.length}`);
  assert.ok(flag.endsWith("…"), "a cut name says it was cut");
});
