/** Lease owner ids: which holders count as provably gone (pure checks against this very process and host). */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
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
  const own = parseLeaseOwner(leaseOwnerId());
  if (!own?.bootId || !own.pidNs)
    return t.skip("no boot id or pid namespace: every holder is uncertain");
  const reused = `${hostname()}/${own.bootId}/${own.pidNs}/${process.pid}/${Number(start) + 1}/abcdef`;
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

/** The pid of a process that has exited (ESRCH now), so only the namespace checks decide. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid as number;
}

test("[VAULT-lease-owner-namespace] the owner id carries the boot id and pid namespace; a dead pid counts as gone only when both match ours", (t) => {
  const own = parseLeaseOwner(leaseOwnerId());
  if (!own || own.bootId === "" || own.pidNs === "")
    return t.skip("no /proc boot id or pid namespace: every holder is uncertain");
  assert.match(own.bootId, /^[0-9a-f-]{36}$/);
  assert.match(own.pidNs, /^[0-9]+$/);
  const pid = deadPid();
  const id = (boot: string, ns: string) => `${hostname()}/${boot}/${ns}/${pid}//abcdef`;
  assert.equal(
    isLeaseOwnerGone(id(own.bootId, own.pidNs)),
    true,
    "same boot, same pid namespace, pid gone",
  );
  // Another container with the same hostname: its pids are invisible (ESRCH) to us, yet it may be alive.
  assert.equal(isLeaseOwnerGone(id(own.bootId, `${own.pidNs}1`)), false, "other pid namespace");
  assert.equal(
    isLeaseOwnerGone(id("00000000-0000-0000-0000-000000000000", own.pidNs)),
    false,
    "other boot",
  );
  assert.equal(isLeaseOwnerGone(id("", own.pidNs)), false, "boot id unknown to the holder");
  assert.equal(isLeaseOwnerGone(id(own.bootId, "")), false, "pid namespace unknown to the holder");
  // The old format (host/pid/start/random) cannot say which namespace it came from: uncertain, never taken over.
  assert.equal(isLeaseOwnerGone(`${hostname()}/${pid}//abcdef`), false, "old-format id");
  assert.equal(parseLeaseOwner(`${hostname()}/${pid}/1/abcdef`), undefined);
});
