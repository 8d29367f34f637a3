/**
 * Issue 20 §1.3: replay protection of HMAC-signed invocations must hold across a tool restart and across instances.
 * The red team captured a signed POST /invoke, restarted the tool (or sent it to another instance) and replayed it
 * inside the 300 s window: the operation ran twice, because the accepted signatures lived in one process's memory.
 * Here the tool remembers them in a durable ledger: a SQLite file (`openSqliteReplayLedger`, what `rap tool serve`
 * uses without a database) or PostgreSQL (shared state).
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { type InvocationAuth, invocationAuthHeaders } from "../../src/rap/invocation-auth.ts";
import {
  createToolServer,
  openPostgresToolState,
  openSqliteReplayLedger,
  type ToolServerOptions,
} from "../../src/rap/tool/index.ts";
import { generateVaultKey, Keyring, parseVaultKey } from "../../src/vault/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { ECHO, FAST_DELIVERY, invocation } from "./tool-fixture.ts";

const PG = await testPostgres();
const secret = new Secret("tool-replay-secret-tool-replay-secret-0123456789");
const hmac: InvocationAuth = { scheme: "hmac-sha256", secret };
const sink = await callbackSink();
let runs = 0;
const COUNTED = {
  ...ECHO,
  handler: async (ctx: { arguments: Record<string, unknown> }) => {
    runs++;
    return ECHO.handler(ctx);
  },
};

/** The public name every instance is reached by (a load balancer); the runtime signs for it. */
const PUBLIC = "tools.test:8700";

/**
 * An instance of the tool behind the public name, served from its own port (as behind a proxy); `url` is where this
 * instance listens. Closed when the test ends or by `close()` (a restart is a close and a new instance).
 */
async function instance(
  t: TestContext,
  options: Partial<ToolServerOptions>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const tool = createToolServer({
    toolset: { name: "replay-test" },
    operations: [COUNTED],
    invocationAuth: hmac,
    delivery: FAST_DELIVERY,
    publicBaseUrl: `http://${PUBLIC}`,
    ...options,
  });
  const server = createServer(tool.handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await tool.settled();
    tool.shutdown();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  t.after(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

/** One signed POST /invoke, captured as it went over the wire: the same bytes can be sent again. */
function capturedInvoke(): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(invocation(sink.url, { id: `call_${randomUUID()}` }));
  const headers = invocationAuthHeaders(hmac, {
    method: "POST",
    host: PUBLIC,
    path: "/invoke",
    body,
  });
  return { body, headers: { ...headers, "content-type": "application/json" } };
}

const idOf = (request: { body: string }): string => JSON.parse(request.body).id;

async function send(
  url: string,
  request: { body: string; headers: Record<string, string> },
): Promise<{ status: number; reason?: string }> {
  const response = await fetch(`${url}/invoke`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  const text = await response.text();
  return { status: response.status, ...(text ? { reason: JSON.parse(text).reason } : {}) };
}

test("[RAP-invocation-replay-durable] sqlite ledger: a signed /invoke accepted before a restart is refused as replayed after it, and the operation ran once", async (t) => {
  const path = join(tempDir(), "rap-tool-replay.db");
  const first = await instance(t, { replay: openSqliteReplayLedger(path) });
  const captured = capturedInvoke();
  const before = runs;
  assert.deepEqual(await send(first.url, captured), { status: 200 });
  await sink.waitFor((m) => m.id === idOf(captured));
  assert.equal(runs, before + 1);
  assert.deepEqual(await send(first.url, captured), { status: 401, reason: "replayed" });
  await first.close();

  // A new process's worth of state: only the ledger's file is the same.
  const second = await instance(t, { replay: openSqliteReplayLedger(path) });
  assert.deepEqual(await send(second.url, captured), { status: 401, reason: "replayed" });
  // A fresh request is served as ever.
  const fresh = capturedInvoke();
  assert.deepEqual(await send(second.url, fresh), { status: 200 });
  await sink.waitFor((m) => m.id === idOf(fresh));
  await second.close();
  assert.equal(runs, before + 2, "the replayed invocation never ran again");
  assert.equal(sink.forCall(idOf(captured)).length, 1, "one result for it");
});

test("[RAP-invocation-replay-durable] postgres state: a signed /invoke accepted at instance A is refused at instance B, and at A after a restart", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const keyring = new Keyring(parseVaultKey(generateVaultKey()));
  const shared = async () => {
    const state = await openPostgresToolState({ url, keyring });
    t.after(() => state.close());
    return instance(t, { state });
  };
  const a = await shared();
  const b = await shared();
  const captured = capturedInvoke();
  const before = runs;
  assert.deepEqual(await send(a.url, captured), { status: 200 });
  await sink.waitFor((m) => m.id === idOf(captured));
  assert.deepEqual(await send(b.url, captured), { status: 401, reason: "replayed" });
  await a.close();
  const restarted = await shared();
  assert.deepEqual(await send(restarted.url, captured), { status: 401, reason: "replayed" });
  await Promise.all([b.close(), restarted.close()]);
  assert.equal(runs, before + 1, "the operation ran once");
  assert.equal(sink.forCall(idOf(captured)).length, 1, "one result for it");
});

test("[RAP-invocation-replay-unavailable] a replay ledger that does not answer refuses the signed request with 503 (retryable) and nothing runs", async (t) => {
  const ledger = openSqliteReplayLedger(join(tempDir(), "rap-tool-replay.db"));
  await ledger.close(); // the file's database is gone: every record fails, as a broken disk would
  const broken = await instance(t, { replay: ledger });
  const before = runs;
  const request = capturedInvoke();
  const response = await fetch(`${broken.url}/invoke`, {
    method: "POST",
    headers: request.headers,
    body: request.body,
  });
  assert.equal(response.status, 503);
  assert.equal(response.headers.get("retry-after"), "1");
  const body = (await response.json()) as { error: string; message: string };
  assert.equal(body.error, "replay_check_unavailable");
  assert.match(body.message, /nothing ran.*Retry/);
  await broken.close();
  assert.equal(runs, before);
  assert.equal(sink.forCall(idOf(request)).length, 0);
});
