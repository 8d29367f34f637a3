import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { deliverCallback } from "../../src/rap/tool/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { closedPort } from "../support/closed-port.ts";
import { ECHO, FAST_DELIVERY, invocation, post, startTool } from "./tool-fixture.ts";

const sink = await callbackSink();
const message = { type: "tool_result", group_id: "g", id: "i", text: "ok" };

test("[RAP-callback-retry-5xx] 503 twice, then 200: delivered once after 3 attempts", async () => {
  sink.reset();
  sink.failNext(2, 503);
  const outcome = await deliverCallback(sink.url, message, FAST_DELIVERY);
  assert.deepEqual(outcome, { delivered: true, attempts: 3, status: 200 });
  assert.deepEqual(
    sink.attempts.map((a) => a.status),
    [503, 503, 200],
  );
  assert.deepEqual(sink.messages, [message]);
});

test("[RAP-callback-no-retry-4xx] a 400 is final: exactly one attempt", async () => {
  sink.reset();
  sink.failNext(1, 400);
  const outcome = await deliverCallback(sink.url, message, FAST_DELIVERY);
  assert.deepEqual(outcome, { delivered: false, attempts: 1, status: 400, reason: "rejected" });
  assert.equal(sink.attempts.length, 1);
});

test("[RAP-callback-retry-bounded] persistent 5xx stops after the configured attempts", async () => {
  sink.reset();
  sink.failNext(10, 500);
  const outcome = await deliverCallback(sink.url, message, { ...FAST_DELIVERY, attempts: 3 });
  assert.deepEqual(outcome, { delivered: false, attempts: 3, status: 500, reason: "exhausted" });
  assert.equal(sink.attempts.length, 3);
  sink.reset();
});

test("[RAP-callback-retry-bounded] the total time bound stops retries even with attempts left", async () => {
  sink.reset();
  sink.failNext(5, 502);
  const outcome = await deliverCallback(sink.url, message, {
    attempts: 100,
    baseDelayMs: 50,
    maxDelayMs: 50,
    maxTotalMs: 1,
  });
  assert.equal(outcome.delivered, false);
  assert.equal(outcome.reason, "exhausted");
  assert.equal(outcome.attempts, 1, "the first wait would already pass the deadline");
  sink.reset();
});

test("[RAP-callback-retry-network] connection failures are retried, then given up", async () => {
  const port = await closedPort();
  const outcome = await deliverCallback(`http://127.0.0.1:${port}/cb`, message, FAST_DELIVERY);
  assert.deepEqual(outcome, {
    delivered: false,
    attempts: 4,
    status: undefined,
    reason: "exhausted",
  });
});

test("[RAP-callback-no-redirect] a 3xx is not followed (the callback URL is used as given) and not retried", async () => {
  const server = createServer((_req, res) => res.writeHead(307, { location: sink.url }).end());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  sink.reset();
  const outcome = await deliverCallback(`http://127.0.0.1:${port}/cb`, message, FAST_DELIVERY);
  assert.deepEqual(outcome, { delivered: false, attempts: 1, status: 307, reason: "rejected" });
  assert.equal(sink.attempts.length, 0);
  server.close();
});

test("[RAP-callback-headers] a headers hook can authenticate deliveries; cancellation stops retries", async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const controller = new AbortController();
  const outcome = await deliverCallback(`http://127.0.0.1:${port}/cb`, message, {
    ...FAST_DELIVERY,
    attempts: 50,
    headers: () => {
      if (seen.length === 2) controller.abort();
      return { authorization: "Bearer callback-credential" };
    },
    signal: controller.signal,
  });
  assert.equal(outcome.delivered, false);
  assert.equal(outcome.reason, "cancelled");
  assert.ok(seen.length <= 3);
  assert.equal(seen[0], "Bearer callback-credential");
  server.close();
});

test("[RAP-callback-retry-5xx] the tool server's result survives a runtime that answers 503 first", async () => {
  const { url } = await startTool({ operations: [ECHO] });
  sink.reset();
  sink.failNext(2, 503);
  const body = invocation(sink.url);
  await post(`${url}/invoke`, body);
  const result = await sink.waitFor((m) => m.id === body.id);
  assert.equal(result.text, "echo: hi");
  assert.deepEqual(
    sink.attempts.map((a) => a.status),
    [503, 503, 200],
  );
});
