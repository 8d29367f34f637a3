/**
 * Issue 11, the RAP tool's state on PostgreSQL in one process: the pending store's single use under concurrency
 * from two pools, expiry, hostile input; sealing at rest; the outbox's per-group order, claims and claim expiry; and
 * a tool server delivering through it in order. Plus the in-memory path's stable Idempotency-Key.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import pg from "pg";
import { Secret } from "../../src/core/secret.ts";
import type { PendingCallAuthorization } from "../../src/rap/tool/index.ts";
import { openPostgresToolState } from "../../src/rap/tool/index.ts";
import {
  generateVaultKey,
  Keyring,
  MemoryCredentialStore,
  parseVaultKey,
} from "../../src/vault/index.ts";
import { closedPort } from "../support/closed-port.ts";
import { CookieBrowser } from "../support/cookie-browser.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { keyedSink } from "./fixtures/keyed-sink.ts";
import { invocation, post, startTool } from "./tool-fixture.ts";
import {
  oauthOperations,
  person,
  providers,
  providerUrl,
  RAP_TOOL_CLIENT,
} from "./tool-oauth-fixture.ts";

const PG = await testPostgres();

const keyring = () => new Keyring(parseVaultKey(generateVaultKey()));

/**
 * Polls `ready` until it holds; fails after 20 s naming `what` (far beyond what any step here needs, even on a loaded
 * machine), so that a failure shows at once with a message instead of as a test that never ends.
 */
async function until(ready: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function pendingValue(verifier: string, callbackUrl: string): PendingCallAuthorization {
  return {
    authorization: {
      issuer: "https://as.example",
      clientId: "rap-tool",
      redirectUri: "https://tool.example/oauth/callback",
      codeVerifier: new Secret(verifier),
      scope: "read",
    },
    call: {
      attempt: "attempt-1",
      provider: "demo",
      operation: "whoami",
      arguments: { q: "private-argument" },
      callbackUrl,
      groupId: "thread_1",
      id: "call_1",
      callId: null,
      threadAncestors: [],
      userId: "u-carol",
    },
  };
}

async function sql(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return "accepted";
}

test("[PG-rap-tool-state-single-use] 20 concurrent consumes of one state from two instances' pools: exactly one gets it; the rest, a replay, a forged and an expired state get state_invalid", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const [one, two] = await Promise.all([
    openPostgresToolState({ url, keyring: ring }),
    openPostgresToolState({ url, keyring: ring }),
  ]);
  t.after(() => Promise.all([one.close(), two.close()]));
  const state = await one.pending.create(
    pendingValue("v".repeat(43), "https://rt.example/cb"),
    60_000,
  );
  assert.equal(await two.pending.size(), 1);
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      Promise.resolve((i % 2 ? one : two).pending.consume(state)).then(
        (value) => value.authorization.codeVerifier.reveal(),
        (error) => `refused:${error.code}`,
      ),
    ),
  );
  assert.equal(outcomes.filter((o) => o === "v".repeat(43)).length, 1, JSON.stringify(outcomes));
  assert.equal(outcomes.filter((o) => o === "refused:state_invalid").length, 19);
  assert.equal(
    await refusal(Promise.resolve(one.pending.consume(state))),
    "state_invalid",
    "replay",
  );
  assert.equal(
    await refusal(Promise.resolve(one.pending.consume("A".repeat(43)))),
    "state_invalid",
  );
  const short = await one.pending.create(pendingValue("w".repeat(43), "https://rt.example/cb"), 1);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(
    await refusal(Promise.resolve(two.pending.consume(short))),
    "state_invalid",
    "expired",
  );
  assert.equal(await one.pending.size(), 0);
});

test("[PG-rap-tool-state-hostile] malformed states, a sealed value moved to another row, a foreign key and bad URLs are typed refusals", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const store = await openPostgresToolState({ url, keyring: ring });
  t.after(() => store.close());
  for (const hostile of [null, undefined, "", "x".repeat(513), 42, { state: 1 }]) {
    assert.equal(
      await refusal(Promise.resolve(store.pending.consume(hostile as string))),
      "state_invalid",
    );
  }
  const s1 = await store.pending.create(
    pendingValue("a".repeat(43), "https://rt.example/1"),
    60_000,
  );
  const s2 = await store.pending.create(
    pendingValue("b".repeat(43), "https://rt.example/2"),
    60_000,
  );
  // Someone with write access swaps row 1's sealed value into row 2: it must not open there.
  const rows = await sql(url, "SELECT digest, sealed FROM rap_tool_pending");
  await sql(url, "UPDATE rap_tool_pending SET sealed = $1 WHERE digest = $2", [
    rows[0]?.sealed,
    rows[1]?.digest,
  ]);
  const codes = [
    await refusal(Promise.resolve(store.pending.consume(s1))),
    await refusal(Promise.resolve(store.pending.consume(s2))),
  ];
  assert.ok(codes.includes("vault_decrypt_failed"), codes.join());
  const s3 = await store.pending.create(
    pendingValue("c".repeat(43), "https://rt.example/3"),
    60_000,
  );
  const stranger = await openPostgresToolState({ url, keyring: keyring() });
  t.after(() => stranger.close());
  assert.equal(await refusal(Promise.resolve(stranger.pending.consume(s3))), "vault_key_unknown");

  assert.equal(
    await refusal(openPostgresToolState({ url: "mysql://u:p@127.0.0.1/x", keyring: ring })),
    "database_url_invalid",
  );
  const port = await closedPort();
  const password = "pw-0123456789-secret";
  try {
    await openPostgresToolState({
      url: `postgres://u:${password}@127.0.0.1:${port}/x`,
      keyring: ring,
    });
    assert.fail("opened a database on a closed port");
  } catch (error) {
    assert.equal((error as { code?: string }).code, "database_unavailable");
    assert.ok(!String((error as Error).message).includes(password), "no password in the message");
  }
});

test("[PG-rap-tool-at-rest] no verifier, callback URL, argument or message text in any table: all sealed", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const store = await openPostgresToolState({ url, keyring: keyring() });
  t.after(() => store.close());
  const verifier = "verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
  const callbackUrl = "https://runtime.example/callback/capability-9f8e7d6c5b4a";
  const state = await store.pending.create(pendingValue(verifier, callbackUrl), 60_000);
  await store.outbox.add({
    groupId: "thread_1",
    callId: "call_1",
    callbackUrl,
    body: { type: "tool_result", text: "token-like-result-text-1234567890" },
  });
  const link = await store.consents(60_000).create({
    toolName: "t",
    operation: "whoami",
    provider: "demo",
    providerName: "Demo",
    providerHost: "as.example",
    scopes: ["read"],
    userId: "u-carol",
    authorizationUrl: new URL(`https://as.example/auth?state=${state}&code_challenge=c`),
    state,
    groupId: "thread_1",
    id: "call_1",
    attempt: "attempt-1",
  });
  const tables = await sql(
    url,
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
  );
  let all = "";
  for (const { table_name } of tables) {
    all += (await sql(url, `SELECT t::text AS row FROM "${table_name}" t`))
      .map((r) => r.row)
      .join("\n");
  }
  assert.ok(all.includes("thread_1"), "the dump did read the outbox");
  for (const secret of [
    verifier,
    callbackUrl,
    "capability-9f8e7d6c5b4a",
    state,
    "private-argument",
    "u-carol",
    "token-like-result",
    link,
  ]) {
    assert.ok(!all.includes(secret), `${secret} is not at rest in clear`);
  }
});

test("[PG-rap-tool-outbox-order] only the oldest message of a group is claimable, one instance at a time; a lapsed claim comes back", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const [one, two] = await Promise.all([
    openPostgresToolState({ url, keyring: ring }),
    openPostgresToolState({ url, keyring: ring }),
  ]);
  t.after(() => Promise.all([one.close(), two.close()]));
  const add = (groupId: string, n: number) =>
    one.outbox.add({
      groupId,
      callId: `call_${n}`,
      callbackUrl: "http://127.0.0.1:9/cb",
      body: { n },
    });
  const g1a = String(await add("g1", 1));
  const g1b = String(await add("g1", 2));
  const g2a = String(await add("g2", 3));
  const first = await one.outbox.claim(10, 60_000);
  assert.deepEqual(first.map((m) => m.id).sort(), [g1a, g2a].sort(), "one per group, the oldest");
  assert.deepEqual(
    await two.outbox.claim(10, 60_000),
    [],
    "claimed messages are not handed out twice",
  );
  await one.outbox.remove(g1a);
  const next = await two.outbox.claim(10, 60_000);
  assert.deepEqual(
    next.map((m) => m.id),
    [g1b],
    "the group's next message once the first is gone",
  );
  assert.deepEqual(next[0]?.body, { n: 2 });
  // A claim that lapses (its instance died) is due again, attempts counted.
  await two.outbox.retryLater(g1b, 0);
  const short = await one.outbox.claim(10, 30);
  assert.deepEqual(
    short.map((m) => m.id),
    [g1b],
  );
  await new Promise((resolve) => setTimeout(resolve, 80));
  const again = await two.outbox.claim(10, 60_000);
  assert.deepEqual(
    again.map((m) => m.id),
    [g1b],
  );
  assert.equal(again[0]?.attempts, 3);
});

test("[PG-rap-tool-outbox-order] a tool server on the outbox delivers a thread's results in the order written, none overtaking a first one refused with 503", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const state = await openPostgresToolState({ url, keyring: keyring() });
  const sink = await keyedSink();
  const { tool, url: toolUrl } = await startTool({
    operations: [
      {
        name: "echo",
        description: "echo",
        inputSchema: { type: "object" },
        handler: ({ arguments: args }) => String(args.text),
      },
    ],
    state,
    delivery: { baseDelayMs: 20, maxDelayMs: 50, maxTotalMs: 30_000 },
    outboxTuning: { pollMs: 20 },
  });
  t.after(async () => {
    tool.shutdown();
    await state.close();
  });
  sink.down = true;
  const bodies = [1, 2, 3].map((n) =>
    invocation(sink.url, { arguments: { text: `m${n}` }, group_id: "thread_order" }),
  );
  // One after another, each written before the next call: the written order is the invocation order.
  for (const [i, body] of bodies.entries()) {
    assert.equal((await post(`${toolUrl}/invoke`, body)).status, 200);
    await until(
      async () =>
        (await sql(url, "SELECT count(*)::int AS n FROM rap_tool_outbox"))[0]?.n === i + 1,
      `message ${i + 1} written to the outbox`,
    );
  }
  await until(() => sink.deliveries.length >= 3, "three attempts at the down runtime");
  assert.deepEqual(
    [...new Set(sink.deliveries.map((d) => d.message.text))],
    ["m1"],
    "while the first is refused, the later ones wait",
  );
  sink.down = false;
  await sink.waitFor((d) => d.message.id === bodies[2]?.id);
  const accepted = sink.deliveries.filter((d) => d.status < 300).map((d) => d.message.text);
  assert.deepEqual(accepted, ["m1", "m2", "m3"]);
  const keys = sink.deliveries.filter((d) => d.message.id === bodies[0]?.id).map((d) => d.key);
  assert.ok(keys.length >= 4, "refusals, then the delivery");
  assert.equal(new Set(keys).size, 1, "one key for every attempt");
});

test("[RAP-tool-idempotency-key-memory] in memory, every delivery carries an Idempotency-Key, the same on each retry, another for each message", async () => {
  const sink = await keyedSink();
  const { url } = await startTool({
    operations: [
      {
        name: "echo",
        description: "echo",
        inputSchema: { type: "object" },
        handler: ({ arguments: args }) => String(args.text),
      },
    ],
  });
  sink.failNext(2, 503);
  const first = invocation(sink.url, { arguments: { text: "one" } });
  assert.equal((await post(`${url}/invoke`, first)).status, 200);
  await sink.waitFor((d) => d.message.id === first.id);
  const keys = sink.deliveries.map((d) => d.key);
  assert.equal(keys.length, 3);
  assert.match(String(keys[0]), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(new Set(keys).size, 1, "the same key on each retry");
  const second = invocation(sink.url, { arguments: { text: "two" } });
  assert.equal((await post(`${url}/invoke`, second)).status, 200);
  const other = await sink.waitFor((d) => d.message.id === second.id);
  assert.notEqual(other.key, keys[0]);
});

test("[PG-rap-tool-cancel-pending] a call cancelled while its person signs in (at this or another instance): the late redirect is refused at both, nothing runs, nothing more is sent", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const sink = await keyedSink();
  const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const state = await openPostgresToolState({ url, keyring: ring });
    const running = await startTool({
      operations: oauthOperations(idp),
      providers: providers(idp),
      store: new MemoryCredentialStore(),
      state,
      outboxTuning: { pollMs: 20 },
    });
    t.after(async () => {
      running.tool.shutdown();
      await state.close();
    });
    instances.push(running);
  }
  const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
  const codes = () => idp.stats.byGrant.authorization_code?.success ?? 0;
  for (const [where, cancelAt] of [
    ["the same instance", a],
    ["another instance", b],
  ] as const) {
    const body = invocation(sink.url, {
      operation: "whoami",
      arguments: {},
      user_id: "u-erin",
      group_id: `thread_cancel_${where.replace(/ /g, "_")}`,
    });
    assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
    const oauth = await sink.waitFor((d) => d.message.id === body.id);
    const toProvider = await providerUrl(String(oauth.message.auth_url));
    await post(`${cancelAt.url}/cancel_tool_call`, {
      thread_id: body.group_id,
      tool_call_id: body.id,
    });
    const before = codes();
    const answer = await fetch(toProvider, { redirect: "manual" });
    await answer.arrayBuffer();
    const redirect = new URL(answer.headers.get("location") ?? "", toProvider);
    for (const instance of [a, b]) {
      const landed = await person.fetch(
        new URL(`${redirect.pathname}${redirect.search}`, instance.url),
      );
      assert.equal(landed.status, 400, `${where}: ${await landed.text()}`);
    }
    await Promise.all([a.tool.settled(), b.tool.settled()]);
    assert.equal(codes(), before, `${where}: no code exchange for a cancelled call`);
    assert.equal(sink.accepted(String(body.id)).length, 1, `${where}: only the oauth message`);
  }
});

test("[PG-rap-tool-cancel-outbox] a call cancelled at another instance while its result waits for a runtime that is down: the result is dropped, never delivered", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const sink = await keyedSink();
  sink.down = true;
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const state = await openPostgresToolState({ url, keyring: ring });
    const running = await startTool({
      operations: [
        {
          name: "echo",
          description: "echo",
          inputSchema: { type: "object" },
          handler: () => "done",
        },
      ],
      state,
      delivery: { baseDelayMs: 20, maxDelayMs: 50, maxTotalMs: 30_000 },
      outboxTuning: { pollMs: 20 },
    });
    t.after(async () => {
      running.tool.shutdown();
      await state.close();
    });
    instances.push(running);
  }
  const body = invocation(sink.url, { group_id: "thread_cancel_outbox" });
  assert.equal((await post(`${instances[0]?.url}/invoke`, body)).status, 200);
  await until(() => sink.deliveries.length >= 2, "two attempts at the down runtime");
  await post(`${instances[1]?.url}/close_thread`, { thread_id: "thread_cancel_outbox" });
  const [row] = await sql(url, "SELECT count(*)::int AS n FROM rap_tool_outbox");
  assert.equal(row?.n, 0, "the undelivered result is gone");
  sink.down = false;
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(
    sink.accepted(String(body.id)).length,
    0,
    "nothing delivered after the cancellation",
  );
});

test("[PG-rap-tool-takeover-no-timeout] a sign-in started at A and finished at B: A does not time the call out afterwards (one final message)", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const sink = await keyedSink();
  const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const state = await openPostgresToolState({ url, keyring: ring });
    const running = await startTool({
      operations: oauthOperations(idp),
      providers: providers(idp),
      store: new MemoryCredentialStore(),
      state,
      // The whole sign-in (the oauth message, the provider, the redirect to B) must finish before A's timer; 1.5 s
      // was close to what a loaded machine needs for it. The test then waits for the timer, so not much longer.
      authorizationTimeoutMs: 5_000,
      outboxTuning: { pollMs: 20 },
    });
    t.after(async () => {
      running.tool.shutdown();
      await state.close();
    });
    instances.push(running);
  }
  const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-gus" });
  const invoked = Date.now();
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  const toProvider = await providerUrl(String(oauth.message.auth_url));
  const answer = await fetch(toProvider, { redirect: "manual" });
  await answer.arrayBuffer();
  const redirect = new URL(answer.headers.get("location") ?? "", toProvider);
  const landed = await person.fetch(new URL(`${redirect.pathname}${redirect.search}`, b.url));
  assert.equal(landed.status, 200, await landed.text());
  await sink.waitFor((d) => d.message.id === body.id && d.message.type === "tool_result");
  t.diagnostic(`signed in at B ${Date.now() - invoked} ms after the call reached A`);
  // A's own authorization timer fires after that: the call ledger refuses its timeout message (B holds the call).
  await until(
    () => a.logs.some((line) => line.includes('"rap.call.superseded"')),
    "A's timeout message to be refused when its authorization timer fires",
  );
  await a.tool.settled();
  const final = sink.accepted(String(body.id)).filter((d) => d.message.type === "tool_result");
  assert.equal(final.length, 1, JSON.stringify(final.map((d) => d.message.text)));
});

test("[RAP-consent-browser-binding] postgres: Continue at A binds the sign-in to that browser at every instance: another browser is refused at B before any exchange, nothing is stored, the call ends with an error", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const ring = keyring();
  const sink = await keyedSink();
  const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
  const store = new MemoryCredentialStore();
  const instances = [];
  for (let i = 0; i < 2; i++) {
    const state = await openPostgresToolState({ url, keyring: ring });
    const running = await startTool({
      operations: oauthOperations(idp),
      providers: providers(idp),
      store,
      state,
      outboxTuning: { pollMs: 20 },
    });
    t.after(async () => {
      running.tool.shutdown();
      await state.close();
    });
    instances.push(running);
  }
  const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-mallory" });
  assert.equal((await post(`${a.url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((d) => d.message.id === body.id);
  // The attacker presses Continue at A in their own browser and sends the provider URL on.
  const toProvider = await providerUrl(String(oauth.message.auth_url), new CookieBrowser());
  const victim = new CookieBrowser();
  const answer = await victim.fetch(toProvider, { redirect: "manual" });
  await answer.arrayBuffer();
  const redirect = new URL(answer.headers.get("location") ?? "", toProvider);
  const codes = idp.stats.byGrant.authorization_code?.success ?? 0;
  const landed = await victim.fetch(new URL(`${redirect.pathname}${redirect.search}`, b.url));
  assert.equal(landed.status, 403, await landed.text());
  const result = await sink.waitFor(
    (d) => d.message.id === body.id && d.message.type === "tool_result",
  );
  assert.match(String(result.message.text), /^Error: .*another browser/);
  assert.equal(idp.stats.byGrant.authorization_code?.success ?? 0, codes, "no code exchange");
  assert.equal(
    await store.get({ subject: "u-mallory", issuer: idp.issuer, resource: "" }),
    undefined,
  );
  assert.ok(b.logs.some((line) => line.includes('"rap.oauth.browser_mismatch"')));
});

test("[PG-rap-tool-outbox-retry-after] a 503 with Retry-After: 60 reschedules the outbox message at least that far out, not at the short backoff", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const state = await openPostgresToolState({ url, keyring: keyring() });
  const sink = await keyedSink();
  sink.down = true;
  sink.retryAfter = "60";
  const { tool, url: toolUrl } = await startTool({
    operations: [
      { name: "echo", description: "echo", inputSchema: { type: "object" }, handler: () => "x" },
    ],
    state,
    delivery: { baseDelayMs: 20, maxDelayMs: 50, maxTotalMs: 600_000 },
    outboxTuning: { pollMs: 20 },
  });
  t.after(async () => {
    tool.shutdown();
    await state.close();
  });
  assert.equal((await post(`${toolUrl}/invoke`, invocation(sink.url))).status, 200);
  await until(async () => {
    const [row] = await sql(
      url,
      "SELECT attempts, extract(epoch FROM next_at - now()) AS wait FROM rap_tool_outbox WHERE claimed_until IS NULL",
    );
    if (!row || Number(row.attempts) < 1) return false;
    assert.ok(Number(row.wait) > 30, `rescheduled ${row.wait} s out`);
    return true;
  }, "the refused message to be rescheduled");
  assert.equal(sink.deliveries.length, 1, "no second attempt before the Retry-After");
});
