/** The pending board and the runtime hooks that feed it (our own functions, called with the hook events). */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ActivityLog, hooksFor, PendingBoard, safeLink } from "../../src/console/index.ts";
import type { CallRecord } from "../../src/rap/runtime/store.ts";

const AUTH_URL = "http://127.0.0.1:9/rap/consent?link=secret-link-value";

function call(overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    groupId: "demo-alice",
    id: "call-1",
    callId: null,
    operation: "whoami",
    arguments: {},
    userId: "alice",
    toolset: "example",
    baseUrl: "http://127.0.0.1:9/",
    requiresAuth: "demo",
    status: "completed",
    subscription: "none",
    result: null,
    createdAt: 1,
    updatedAt: 2,
    deadline: 3,
    ...overrides,
  } as CallRecord;
}

test("[CONSOLE-pending-hooks] onAuthorizationRequired shows the call with its link; onToolResult drops the link and keeps the result", async () => {
  const board = new PendingBoard();
  const activity = new ActivityLog();
  let changes = 0;
  board.onChange(() => changes++);
  const hooks = hooksFor(board, activity);
  await hooks.onAuthorizationRequired?.({
    groupId: "demo-alice",
    id: "call-1",
    operation: "whoami",
    toolset: "example",
    provider: "demo",
    userId: "alice",
    authUrl: AUTH_URL,
  });
  const [waiting] = board.list();
  assert.equal(waiting?.status, "authorizing");
  assert.equal(waiting?.authUrl, AUTH_URL);
  assert.equal(board.authUrlOf("demo-alice", "call-1"), AUTH_URL);
  assert.equal(activity.list()[0]?.kind, "authorization_requested");
  assert.ok(
    !JSON.stringify(activity.list()).includes("secret-link-value"),
    "the link is never in the activity log",
  );

  await hooks.onToolResult?.({
    groupId: "demo-alice",
    id: "call-1",
    call: call(),
    result: { text: "You are alice", isError: false, synthetic: false },
  });
  const [done] = board.list();
  assert.equal(done?.status, "completed");
  assert.equal(done?.authUrl, null, "the link is dropped when the call ends");
  assert.equal(done?.result, "You are alice");
  assert.equal(board.authUrlOf("demo-alice", "call-1"), null);
  assert.deepEqual(
    activity.list().map((e) => e.kind),
    ["authorization_requested", "authorization_completed", "result"],
  );
  assert.equal(changes, 2);
  assert.ok(
    !JSON.stringify({ board: board.list(), activity: activity.list() }).includes(
      "secret-link-value",
    ),
  );
});

test("[CONSOLE-pending-hooks] a failing call shows failed; a call that never needed authorization adds only activity", async () => {
  const board = new PendingBoard();
  const activity = new ActivityLog();
  const hooks = hooksFor(board, activity);
  await hooks.onAuthorizationRequired?.({
    groupId: "g",
    id: "c",
    operation: "echo",
    toolset: "example",
    provider: null,
    userId: "alice",
    authUrl: AUTH_URL,
  });
  await hooks.onToolResult?.({
    groupId: "g",
    id: "c",
    call: call({ groupId: "g", id: "c", operation: "echo", status: "failed" }),
    result: { text: "Error: denied", isError: true, synthetic: false },
  });
  assert.equal(board.list()[0]?.status, "failed");
  assert.equal(board.list()[0]?.isError, true);
  await hooks.onToolResult?.({
    groupId: "g",
    id: "other",
    call: call({ groupId: "g", id: "other" }),
    result: { text: "fine", isError: false, synthetic: false },
  });
  assert.equal(board.list().length, 1);
  assert.equal(activity.list().at(-1)?.kind, "result");
});

test("[CONSOLE-pending-chain] the embedder's own hooks still run, after ours, for every hook either side defines", async () => {
  const board = new PendingBoard();
  const activity = new ActivityLog();
  const seen: string[] = [];
  const hooks = hooksFor(board, activity, {
    onAuthorizationRequired: (event) => {
      seen.push(`auth:${event.id}:${board.list().length}`);
    },
    onToolResult: (event) => {
      seen.push(`result:${event.id}`);
    },
    onStatus: (event) => {
      seen.push(`status:${event.text}`);
    },
  });
  await hooks.onAuthorizationRequired?.({
    groupId: "g",
    id: "c",
    operation: "echo",
    toolset: "t",
    provider: null,
    userId: "alice",
    authUrl: AUTH_URL,
  });
  await hooks.onToolResult?.({
    groupId: "g",
    id: "c",
    call: call({ groupId: "g", id: "c" }),
    result: { text: "ok", isError: false, synthetic: false },
  });
  await hooks.onStatus?.({
    groupId: "g",
    id: "c",
    text: "hello",
    entry: { seq: 1, at: 1, kind: "status", id: "c", text: "hello" },
  });
  assert.deepEqual(seen, ["auth:c:1", "result:c", "status:hello"]);
});

test("[CONSOLE-pending-hostile] a javascript:, data: or unparsable link is never shown; peer text is cleaned; the board is bounded", async () => {
  assert.equal(safeLink("javascript:alert(1)"), null);
  assert.equal(safeLink("data:text/html,<script>alert(1)</script>"), null);
  assert.equal(safeLink("not a url"), null);
  assert.equal(safeLink(42), null);
  assert.equal(safeLink("https://idp.example/auth?x=1"), "https://idp.example/auth?x=1");
  const board = new PendingBoard({ maxEntries: 2 });
  const hooks = hooksFor(board, new ActivityLog());
  for (const id of ["a", "b", "c"]) {
    await hooks.onAuthorizationRequired?.({
      groupId: "g",
      id,
      operation: "op\u001b[2J\u202e",
      toolset: "t",
      provider: null,
      userId: "alice",
      authUrl: "javascript:alert(document.cookie)",
    });
  }
  const list = board.list();
  assert.deepEqual(
    list.map((v) => v.id),
    ["b", "c"],
  );
  assert.equal(list[0]?.authUrl, null);
  const operation = list[0]?.operation ?? "";
  assert.ok(!operation.includes("\u001b") && !operation.includes("\u202e"), operation);
});

test("[CONSOLE-pending-keep] finished calls are dropped after the keep time; waiting ones stay", async () => {
  let now = 0;
  const board = new PendingBoard({ keepFinishedMs: 1000, now: () => now });
  board.add({
    groupId: "g",
    id: "done",
    toolset: "t",
    operation: "o",
    provider: null,
    userId: null,
    authUrl: AUTH_URL,
  });
  board.add({
    groupId: "g",
    id: "wait",
    toolset: "t",
    operation: "o",
    provider: null,
    userId: null,
    authUrl: AUTH_URL,
  });
  board.resolve("g", "done", { result: "ok", isError: false });
  now = 5000;
  assert.deepEqual(
    board.list().map((v) => v.id),
    ["wait"],
  );
});
