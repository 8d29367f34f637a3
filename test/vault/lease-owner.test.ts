/** Lease owner ids: which holders count as provably gone (pure checks against this very process and host). */

import assert from "node:assert/strict";
import { hostname } from "node:os";
import { test } from "node:test";
import { leaseOwnerId } from "../../src/vault/index.ts";
import {
  isLeaseOwnerGone,
  parseLeaseOwner,
  processStartTime,
} from "../../src/vault/lease-owner.ts";

test("[VAULT-lease-owner-id] an owner id names this host, pid and start time, and is unique per call", () => {
  const a = leaseOwnerId();
  assert.notEqual(a, leaseOwnerId());
  const parsed = parseLeaseOwner(a);
  assert.equal(parsed?.host, hostname());
  assert.equal(parsed?.pid, process.pid);
  assert.equal(parsed?.start, processStartTime(process.pid) ?? "");
  assert.equal(isLeaseOwnerGone(a), false, "this process is alive");
});

test("[VAULT-lease-owner-pid-reuse] the same pid with another start time is a different, new process: the holder is gone", (t) => {
  const start = processStartTime(process.pid);
  if (start === undefined) return t.skip("no /proc on this platform: pid liveness only");
  const reused = `${hostname()}/${process.pid}/${Number(start) + 1}/abcdef`;
  assert.equal(isLeaseOwnerGone(reused), true);
});

test("[VAULT-lease-owner-uncertain] other hosts, foreign formats and hostile ids are never taken over early", () => {
  for (const owner of [
    `other-host.example/${process.pid}/1/abcdef`,
    "crashed-process",
    "pid-123",
    `${hostname()}/0/1/abc`,
    `${hostname()}/-1//abc`,
    `${hostname()}/99999999999/1/abc`,
    `${hostname()}/1/x/abc`,
    `${hostname()}/1/1/`,
    "/".repeat(10_000),
    "",
  ]) {
    assert.equal(isLeaseOwnerGone(owner), false, owner.slice(0, 80));
  }
});
