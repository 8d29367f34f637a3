/**
 * §3.2, §3.6, §3.8: an agent that prints to stdout what is not JSON-RPC and reads stdin (gemini-cli's oauth-personal
 * prompt) receives nothing it did not ask for; its error detail is shown, sanitised; a login the agent merely
 * accepted is never reported as "Logged in".
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { connectAgent } from "../../src/acp/client/index.ts";
import { scripted } from "./fixtures/acp-cli-process.ts";
import {
  calls,
  cleanEnv,
  methods,
  runAcpCli,
  stateFolder,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 60_000 };

function stray(dir: string, ...flags: string[]): string[] {
  return scripted("stray", dir, ...flags);
}

test(
  "[ACP-stray-stdout-dropped] non-JSON-RPC stdout lines are dropped before the SDK: the agent reading stdin receives nothing it did not ask for",
  GUARD,
  async () => {
    const dir = stateFolder();
    const result = await runAcpCli(["login", ...stray(dir)]);
    assert.equal(result.code, 1);
    assert.ok(methods(dir).includes("authenticate"), calls(dir).join("\n"));
    assert.deepEqual(
      calls(dir).filter((line) => line.startsWith("unasked")),
      [],
      "no -32700 answers were written into the agent's stdin",
    );
  },
);

test(
  "[ACP-login-error-detail] the agent's error.data.details is shown, clipped and sanitised, with the stray output it printed",
  GUARD,
  async () => {
    const result = await runAcpCli(["login", ...stray(stateFolder())]);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /No authorization code was entered.{0,8}; set GEMINI_API_KEY instead/,
    );
    assert.match(result.stderr, /not JSON-RPC/);
    assert.match(result.stderr, /Enter the authorization code:/);
    assert.match(result.stderr, /\[acp_login_failed\]/);
    assert.ok(!result.stderr.includes("\u001b"), "no escape sequence reaches the terminal");
  },
);

test(
  "[ACP-stray-stdout-dropped] the library keeps the last few dropped lines, sanitised, as a diagnostic",
  GUARD,
  async (t) => {
    const [command = "", ...args] = stray(stateFolder(), "--accept").slice(1);
    const client = await connectAgent(command, args, { env: cleanEnv() });
    t.after(() => client.close());
    const diagnostic = client.strayOutput;
    assert.equal(diagnostic.count, 2);
    assert.deepEqual(diagnostic.last, ["Starting up...", "[2J [31mloading [0m config"]);
  },
);

test(
  '[ACP-login-false-success] an agent that accepts authenticate but reports no state: never "Logged in"; --json says accepted_unverified',
  GUARD,
  async () => {
    const text = await runAcpCli(["login", ...stray(stateFolder(), "--accept")]);
    assert.equal(text.code, 0, text.stderr);
    assert.doesNotMatch(text.stdout + text.stderr, /Logged in/);
    assert.match(
      text.stdout,
      /Stray Agent accepted the sign-in request but does not report its state; try a session to confirm\./,
    );
    const json = await runAcpCli(["login", "--json", ...stray(stateFolder(), "--accept")]);
    assert.equal(json.code, 0, json.stderr);
    const parsed = JSON.parse(json.stdout);
    assert.equal(parsed.outcome, "accepted_unverified");
    assert.equal(parsed.state, "unknown");
  },
);

test(
  "[ACP-login-waiting] a sign-in URL the agent prints on stdout (gemini's oauth-personal) is shown while the login waits",
  GUARD,
  async () => {
    const result = await runAcpCli(["login", ...stray(stateFolder())]);
    assert.match(
      result.stderr,
      /Waiting for Stray Agent to finish signing in… \(Ctrl-C cancels\)\nStray Agent printed a link: https:\/\/accounts\.example\.com\/o\/oauth2\/auth\?client_id=x\n/,
    );
  },
);
