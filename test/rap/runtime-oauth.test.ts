import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { testRuntime } from "../support/rap-runtime.ts";
import { eventually, standInTool } from "../support/rap-tool-stand-in.ts";

const ghTool = {
  name: "list_repos",
  description: "Lists repositories.",
  inputSchema: { type: "object" },
  annotations: { requiresAuth: "github" },
};
const AUTH_URL =
  "https://github.example/login/oauth/authorize?client_id=abc&state=Zq1-unique-state-7f3a9c&redirect_uri=https%3A%2F%2Ftool.example%2Fcb";

test("[RAP-runtime-oauth-pending][RAP-runtime-oauth-user] oauth keeps the call pending, surfaces auth_url once, adds a status entry, never re-invokes", async () => {
  const tool = await standInTool({ name: "github-tools", tools: [ghTool] });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  await runtime.invoke({
    groupId: "t",
    id: "c1",
    userId: "u1",
    operation: "list_repos",
    arguments: {},
  });
  const inv = tool.invocation("c1");
  const oauth = { type: "oauth", group_id: "t", id: "c1", call_id: null, auth_url: AUTH_URL };
  assert.deepEqual(await tool.deliver(inv, oauth), { status: 200, body: { ok: true } });
  assert.equal((await runtime.getCall("t", "c1"))?.status, "authorizing");
  assert.deepEqual(recorded.authorizations, [
    {
      groupId: "t",
      id: "c1",
      operation: "list_repos",
      toolset: "github-tools",
      provider: "github",
      userId: "u1",
      authUrl: AUTH_URL,
    },
  ]);
  const entries = (await runtime.thread("t")).entries;
  assert.equal(entries.length, 1);
  assert.equal(entries[0]?.kind, "status");
  assert.match((entries[0] as { text: string }).text, /^Authorization in progress for github/);
  assert.equal(recorded.statuses.length, 1);
  // A retried delivery of the same message is not shown again; a re-issued URL is shown, without a second status.
  assert.equal((await tool.deliver(inv, oauth)).body.duplicate, true);
  const reissued = `${AUTH_URL}&again=1`;
  assert.equal((await tool.deliver(inv, { ...oauth, auth_url: reissued })).status, 200);
  assert.deepEqual(
    recorded.authorizations.map((a) => a.authUrl),
    [AUTH_URL, reissued],
  );
  assert.equal((await runtime.thread("t")).entries.length, 1);
  assert.equal(tool.attempts.get("c1"), 1, "the runtime never retries the invocation");
  assert.equal(recorded.results.length, 0, "no result yet");
  // The tool finishes after the user authorized.
  assert.equal(
    (await tool.deliver(inv, { type: "tool_result", group_id: "t", id: "c1", text: '["repo"]' }))
      .status,
    200,
  );
  const settled = await runtime.waitForResult("t", "c1");
  assert.equal(settled.status, "completed");
  assert.equal(settled.result.text, '["repo"]');
  assert.equal(tool.attempts.get("c1"), 1);
});

test("[RAP-runtime-auth-url-not-stored] after an oauth message the SQLite files hold no trace of auth_url", async () => {
  const tool = await standInTool({ name: "github-tools", tools: [ghTool] });
  const { runtime, recorded, dbPath } = await testRuntime({
    toolsetUrls: [tool.origin],
    sqlite: true,
  });
  await runtime.invoke({ groupId: "t", id: "c1", operation: "list_repos", arguments: {} });
  const inv = tool.invocation("c1");
  assert.equal(
    (await tool.deliver(inv, { type: "oauth", group_id: "t", id: "c1", auth_url: AUTH_URL }))
      .status,
    200,
  );
  assert.equal(recorded.authorizations.length, 1);
  assert.equal((await runtime.getCall("t", "c1"))?.status, "authorizing");
  // The status line is committed after the reply (hooks and status run after it): wait for it before reading files.
  await eventually(() => recorded.statuses.length === 1, "the status line");
  const dir = dirname(dbPath as string);
  const files = readdirSync(dir).filter((f) => f.startsWith("rap-runtime.db"));
  assert.ok(
    files.includes("rap-runtime.db") && files.includes("rap-runtime.db-wal"),
    files.join(","),
  );
  for (const needle of [AUTH_URL, "Zq1-unique-state-7f3a9c", "github.example"]) {
    for (const file of files) {
      const bytes = readFileSync(join(dir, file));
      assert.equal(bytes.includes(Buffer.from(needle)), false, `${needle} found in ${file}`);
    }
  }
  // Positive control: what is stored is findable this way.
  const all = Buffer.concat(files.map((f) => readFileSync(join(dir, f))));
  assert.ok(all.includes(Buffer.from("Authorization in progress for github")));
  await runtime.close();
  const afterClose = Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith("rap-runtime.db"))
      .map((f) => readFileSync(join(dir, f))),
  );
  assert.equal(afterClose.includes(Buffer.from("Zq1-unique-state-7f3a9c")), false);
});

test("[RAP-runtime-oauth-pending] an oauth after the result is acknowledged as a duplicate; nothing is surfaced", async () => {
  const tool = await standInTool({ tools: [ghTool] });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [tool.origin] });
  await runtime.invoke({ groupId: "t", id: "c1", operation: "list_repos", arguments: {} });
  await tool.deliver(tool.invocation("c1"), {
    type: "tool_result",
    group_id: "t",
    id: "c1",
    text: "ok",
  });
  const late = await tool.deliver(tool.invocation("c1"), {
    type: "oauth",
    group_id: "t",
    id: "c1",
    auth_url: AUTH_URL,
  });
  assert.equal(late.body.duplicate, true);
  assert.equal(recorded.authorizations.length, 0);
});
