import assert from "node:assert/strict";
import { test } from "node:test";
import { WorkQueue } from "../../src/rap/tool/work-queue.ts";

test("[RAP-tool-work-bounded] accepted calls run at most `concurrency` at once, in arrival order, and every one runs", async () => {
  const queue = new WorkQueue(3);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  for (let i = 0; i < 20; i++) {
    queue.enqueue(async () => {
      running++;
      peak = Math.max(peak, running);
      order.push(i);
      await new Promise((r) => setTimeout(r, 2));
      running--;
      if (order.length === 20 && running === 0) finish();
      if (i === 5) throw new Error("a failing task does not stop the queue");
    });
  }
  await done;
  assert.equal(peak, 3);
  assert.deepEqual(
    order,
    Array.from({ length: 20 }, (_, i) => i),
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(queue.pending, 0);
});
