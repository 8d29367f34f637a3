/**
 * Issue 22 §6, a window the takeover did not cover: the tool acknowledges an invocation with 200 and records the call
 * in the shared ledger later. An instance killed in between leaves no row for another to end, and the runtime, which
 * saw the 200, waits for its call timeout (15 minutes by default). The call was recorded only when it left the work
 * queue, so with every slot busy the window lasted as long as the running calls. Real processes, a real PostgreSQL.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { generateVaultKey } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { startInstance } from "./fixtures/tool-instances.ts";
import { invocation, post } from "./tool-fixture.ts";
import { RAP_TOOL_CLIENT } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();
const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });

test("[RAP-tool-kill-queued] an instance killed with an acknowledged invocation still waiting in its work queue (every slot busy): another instance answers it (an error result), instead of leaving it to the runtime's timeout", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const key = generateVaultKey();
  const env = { DATABASE_URL: url, ISSUER: idp.issuer, AGENTAUTH_VAULT_KEY: key };
  const sink = await keyedSink();
  const [a, b] = [await startInstance(env), await startInstance(env)];
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  t.after(() => admin.end());
  // Every one of the work queue's 16 slots busy with a call that runs for ten minutes.
  for (let i = 0; i < 16; i++) {
    const slow = invocation(sink.url, { operation: "slow", arguments: {}, group_id: `busy-${i}` });
    assert.equal((await post(`${a.url}/invoke`, slow)).status, 200);
  }
  for (let tries = 0; ; tries++) {
    assert.ok(tries < 400, `the slow calls never all started\n${a.log()}`);
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM rap_tool_calls WHERE status = 'running'",
    );
    if (rows[0]?.n === 16) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const body = invocation(sink.url, { operation: "public_echo", arguments: { text: "queued" } });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  for (let tries = 0; !a.log().includes(String(body.id)); tries++) {
    assert.ok(tries < 400, "a took the invocation in");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await a.kill();
  // B ends the sixteen slow calls; the queued one must be answered too.
  const answer = await sink.waitFor((d) => d.message.id === body.id, 30_000);
  assert.equal(answer.message.type, "tool_result", b.log());
});
