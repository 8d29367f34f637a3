/**
 * Issue 22 §7: a call the runtime stored but had not yet handed to the tool when it was killed is sent after the
 * restart (by the restarted instance, or any instance on the same PostgreSQL once the database says the sender is
 * gone); and `POST /calls` takes an `Idempotency-Key`, so a client retrying after a lost 202 gets the same call, not a
 * second one. Real processes (`rap runtime serve`, `rap tool serve --example`), a real PostgreSQL.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { type CliProcess, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";

const PG = await testPostgres();
const idp = await useIdp();

interface Runtime {
  cli: CliProcess;
  url: string;
  token: string;
}

async function startRuntime(toolset: string, env: Record<string, string>): Promise<Runtime> {
  const cli = startCli(
    ["rap", "runtime", "serve", "--toolset", toolset, "--tool-secret-file", env.SECRET as string],
    env,
  );
  const ready = JSON.parse((await cli.waitFor("stdout", /^\{"event":"ready".*\}$/m))[0]) as {
    url: string;
    controlTokenFile: string;
  };
  return { cli, url: ready.url, token: readFileSync(ready.controlTokenFile, "utf8").trim() };
}

async function startTool(env: Record<string, string>, args: string[] = []) {
  const cli = startCli(
    [
      "rap",
      "tool",
      "serve",
      "--example",
      "--issuer",
      idp.issuer,
      "--invocation-secret-file",
      env.SECRET as string,
      ...args,
    ],
    env,
  );
  const ready = JSON.parse((await cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]) as {
    url: string;
    listen: string;
  };
  return { cli, url: ready.url, port: Number(new URL(ready.listen).port) };
}

async function control(
  runtime: Runtime,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${runtime.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${runtime.token}`,
      "content-type": "application/json",
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

type ThreadCall = { id: string; status: string; result: { text: string } | null };

async function calls(runtime: Runtime, groupId: string): Promise<ThreadCall[]> {
  return (await control(runtime, `/threads/${groupId}`)).body.calls as ThreadCall[];
}

/** The call once it has a result (bounded by a number of polls, not a duration). */
async function settled(runtime: Runtime, groupId: string, id: string): Promise<ThreadCall> {
  for (let tries = 0; tries < 400; tries++) {
    const call = (await calls(runtime, groupId)).find((c) => c.id === id);
    if (call?.result) return call;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`call ${id} never settled`);
}

/**
 * A gate in front of the tool: forwards everything (Host kept), except that while `holding` an invocation is
 * neither forwarded nor answered, as if the runtime were killed right after storing the call.
 */
async function gate(port: number) {
  const held: Socket[] = [];
  let arrived: () => void = () => {};
  const state = {
    holding: false,
    url: "",
    held: new Promise<void>((resolve) => {
      arrived = resolve;
    }),
  };
  const server = createServer((req, res) => {
    if (state.holding && req.url === "/invoke") {
      held.push(req.socket);
      arrived();
      return;
    }
    const upstream = request(
      { host: "127.0.0.1", port, method: req.method, path: req.url, headers: req.headers },
      (reply) => {
        res.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of held) socket.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test("[RAP-runtime-resend-unsent] a call stored but not yet sent when the runtime was killed (-9) is sent after its restart, once, and gets its result", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const database = await PG.freshDatabase();
  const secret = join(tempDir(), "rap-invocation.secret");
  const toolEnv = { AGENTAUTH_HOME: tempDir(), SECRET: secret };
  // The tool's first start tells us its port; the gate then fronts it under the public URL the toolset names.
  const probe = await startTool(toolEnv);
  probe.cli.kill("SIGTERM");
  await probe.cli.exited;
  const front = await gate(probe.port);
  t.after(() => front.close());
  const tool = await startTool(toolEnv, [
    "--port",
    String(probe.port),
    "--public-url",
    front.state.url,
  ]);
  t.after(() => tool.cli.kill("SIGKILL"));
  const runtimeEnv = {
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_DATABASE_URL: database,
    SECRET: secret,
  };
  const first = await startRuntime(front.state.url, runtimeEnv);

  front.state.holding = true;
  // The control request waits for the tool's acknowledgement, which never comes: the call is stored, not sent.
  const pending = control(first, "/calls", {
    operation: "echo",
    arguments: { text: "stored" },
    group_id: "g-resend",
  }).catch(() => undefined);
  await front.state.held;
  const [stored] = await calls(first, "g-resend");
  assert.ok(stored, "the call is stored before it is sent");
  first.cli.kill("SIGKILL");
  await first.cli.exited;
  await pending;
  front.state.holding = false;

  const second = await startRuntime(front.state.url, runtimeEnv);
  t.after(() => second.cli.kill("SIGKILL"));
  const done = await settled(second, "g-resend", stored.id);
  assert.equal(done.result?.text, "echo: stored");
  assert.equal(done.status, "completed");
  assert.equal((await calls(second, "g-resend")).length, 1);
  second.cli.kill("SIGTERM");
  assert.equal((await second.cli.exited).code, 0);
});

test("[RAP-runtime-control-idempotency-key] POST /calls with an Idempotency-Key: a retry gets the same call (200, same id), concurrent ones too; the same key with another body is 422 idempotency_key_reused; a malformed key is 400", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const database = await PG.freshDatabase();
  const secret = join(tempDir(), "rap-invocation.secret");
  const tool = await startTool({ AGENTAUTH_HOME: tempDir(), SECRET: secret });
  t.after(() => tool.cli.kill("SIGKILL"));
  const runtime = await startRuntime(tool.url, {
    AGENTAUTH_HOME: tempDir(),
    AGENTAUTH_DATABASE_URL: database,
    SECRET: secret,
  });
  t.after(() => runtime.cli.kill("SIGKILL"));
  const body = { operation: "echo", arguments: { text: "once" }, group_id: "g-key" };
  const key = { "idempotency-key": "client-retry-1" };

  const first = await control(runtime, "/calls", body, key);
  assert.equal(first.status, 202, JSON.stringify(first.body));
  const again = await control(runtime, "/calls", body, key);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.id, first.body.id);
  assert.equal(again.body.accepted, true);

  const racing = await Promise.all(
    [1, 2, 3, 4].map(() =>
      control(
        runtime,
        "/calls",
        { ...body, arguments: { text: "race" } },
        {
          "idempotency-key": "client-race",
        },
      ),
    ),
  );
  assert.equal(new Set(racing.map((r) => r.body.id)).size, 1, JSON.stringify(racing));
  assert.deepEqual(racing.map((r) => r.status).sort(), [200, 200, 200, 202]);

  const reused = await control(runtime, "/calls", { ...body, arguments: { text: "other" } }, key);
  assert.equal(reused.status, 422);
  assert.equal(reused.body.error, "idempotency_key_reused");
  const bad = await control(runtime, "/calls", body, { "idempotency-key": "x".repeat(300) });
  assert.equal(bad.status, 400);

  const thread = await calls(runtime, "g-key");
  assert.equal(thread.length, 2, "one call per key");
  assert.equal((await settled(runtime, "g-key", String(first.body.id))).result?.text, "echo: once");
  runtime.cli.kill("SIGTERM");
  assert.equal((await runtime.cli.exited).code, 0);
});
