import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { eventually, standInTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "rap-runtime-process.ts");

interface Child {
  process: ChildProcessWithoutNullStreams;
  lines: Record<string, unknown>[];
  send(command: unknown): void;
  find(
    predicate: (line: Record<string, unknown>) => boolean,
    what: string,
  ): Promise<Record<string, unknown>>;
}

function startRuntime(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ["--no-warnings", FIXTURE], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = "";
  child.stdout.on("data", (data) => {
    buffer += data;
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf("\n");
    }
  });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return {
    process: child,
    lines,
    send: (command) => child.stdin.write(`${JSON.stringify(command)}\n`),
    find: (predicate, what) =>
      eventually(
        () => {
          if (child.exitCode !== null)
            throw new Error(`runtime exited ${child.exitCode}: ${stderr}`);
          return lines.find(predicate);
        },
        what,
        15_000,
      ),
  };
}

test("[RAP-runtime-durable-kill9] kill -9 with calls pending; restarted on the same file, key and port, every later callback is matched", async () => {
  const tool = await standInTool({
    tools: [
      { name: "echo", description: "", inputSchema: { type: "object" } },
      {
        name: "list_repos",
        description: "",
        inputSchema: { type: "object" },
        annotations: { requiresAuth: "github" },
      },
    ],
  });
  const dir = tempDir();
  const env = { DB_PATH: join(dir, "rap-runtime.db"), TOOLSET_URL: tool.origin };
  const first = startRuntime(env);
  const ready = await first.find((l) => l.ready === true, "first ready line");
  const calls = [
    { groupId: "g1", id: "c1", operation: "echo" },
    { groupId: "g1", id: "c2", operation: "echo" },
    { groupId: "g2", id: "c3", operation: "echo" },
    { groupId: "g2", id: "c4", operation: "list_repos" },
  ];
  for (const call of calls) first.send({ cmd: "invoke", request: { ...call, arguments: {} } });
  for (const call of calls) {
    const invoked = await first.find(
      (l) => l.event === "invoked" && l.id === call.id,
      `invoked ${call.id}`,
    );
    assert.equal(invoked.accepted, true);
  }
  // Before the crash: c1 completes, c4 goes through the OAuth detour.
  assert.equal(
    (
      await tool.deliver(tool.invocation("c1"), {
        type: "tool_result",
        group_id: "g1",
        id: "c1",
        text: "one",
      })
    ).status,
    200,
  );
  await first.find((l) => l.event === "result" && l.id === "c1", "c1 result");
  assert.equal(
    (
      await tool.deliver(tool.invocation("c4"), {
        type: "oauth",
        group_id: "g2",
        id: "c4",
        auth_url: "https://idp.example/authorize?x=1",
      })
    ).status,
    200,
  );
  await first.find((l) => l.event === "authorization" && l.id === "c4", "c4 authorization");

  first.process.kill("SIGKILL");
  await new Promise((resolve) => first.process.once("exit", resolve));
  assert.equal(first.process.signalCode, "SIGKILL");

  // While it is down, a tool's delivery fails at the network level (the tool would retry later).
  await assert.rejects(
    tool.deliver(tool.invocation("c2"), {
      type: "tool_result",
      group_id: "g1",
      id: "c2",
      text: "two",
    }),
  );

  const second = startRuntime({ ...env, PORT: String(ready.port) });
  const again = await second.find((l) => l.ready === true, "second ready line");
  assert.equal(again.url, ready.url);
  const answers = [
    await tool.deliver(tool.invocation("c2"), {
      type: "tool_result",
      group_id: "g1",
      id: "c2",
      text: "two",
    }),
    await tool.deliver(tool.invocation("c3"), {
      type: "tool_result",
      group_id: "g2",
      id: "c3",
      text: "three",
    }),
    await tool.deliver(tool.invocation("c4"), {
      type: "tool_result",
      group_id: "g2",
      id: "c4",
      text: "four",
    }),
    await tool.deliver(tool.invocation("c1"), {
      type: "tool_result",
      group_id: "g1",
      id: "c1",
      text: "one again",
    }),
  ];
  assert.deepEqual(
    answers.map((a) => [a.status, a.body.duplicate ?? false]),
    [
      [200, false],
      [200, false],
      [200, false],
      [200, true],
    ],
  );
  for (const [id, text] of [
    ["c2", "two"],
    ["c3", "three"],
    ["c4", "four"],
  ]) {
    const line = await second.find(
      (l) => l.event === "result" && l.id === id,
      `${id} result after restart`,
    );
    assert.equal(line.text, text);
    assert.equal(line.status, "completed");
  }
  second.send({ cmd: "thread", groupId: "g1" });
  second.send({ cmd: "thread", groupId: "g2" });
  const g1 = await second.find((l) => l.event === "thread" && l.groupId === "g1", "g1 thread");
  const g2 = await second.find((l) => l.event === "thread" && l.groupId === "g2", "g2 thread");
  assert.deepEqual(g1.calls, [
    { id: "c1", status: "completed", text: "one" },
    { id: "c2", status: "completed", text: "two" },
  ]);
  assert.deepEqual(g2.calls, [
    { id: "c3", status: "completed", text: "three" },
    { id: "c4", status: "completed", text: "four" },
  ]);
  assert.deepEqual(g2.entries, ["status"], "the authorization status line survived");
  assert.equal(tool.attempts.get("c4"), 1, "nothing was re-invoked after the restart");
  second.process.stdin.end();
  await new Promise((resolve) => second.process.once("exit", resolve));
  assert.equal(second.process.exitCode, 0);
});
