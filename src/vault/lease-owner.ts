/**
 * Lease owner ids that say which process holds a lease, so a contender on the same host can tell a holder that
 * was killed (kill -9 never runs `releaseLease`) from one that is still working, and take the lease at once
 * instead of waiting out its expiry.
 *
 * Format: `<hostname>/<pid>/<start>/<random>`. `start` is the process start time in clock ticks since boot
 * (/proc/<pid>/stat field 22, proc(5)), empty where /proc does not exist; it tells a dead holder from a new
 * process that was given the same pid. Hostnames cannot contain "/".
 */

import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/** A fresh owner id for this process: unique per call (the random part), recognisable as ours (host, pid, start). */
export function leaseOwnerId(): string {
  return `${hostname()}/${process.pid}/${processStartTime(process.pid) ?? ""}/${randomBytes(6).toString("hex")}`;
}

interface ParsedOwner {
  host: string;
  pid: number;
  start: string;
}

/** Undefined for ids in any other format (tests, older agentauth): those are treated as alive. */
export function parseLeaseOwner(owner: string): ParsedOwner | undefined {
  const parts = owner.split("/");
  if (parts.length < 4) return undefined;
  const [pidText, start, random] = parts.slice(-3) as [string, string, string];
  const host = parts.slice(0, -3).join("/");
  if (host === "" || !/^[1-9][0-9]{0,9}$/.test(pidText) || !/^[0-9]*$/.test(start))
    return undefined;
  if (random === "") return undefined;
  return { host, pid: Number(pidText), start };
}

/**
 * True only when the owner is provably gone: it names this host and its pid no longer exists (ESRCH), or the pid
 * now belongs to a process that started at another time. Anything uncertain (another host, a foreign id format,
 * no /proc) answers false, and the lease then only frees itself by expiring.
 */
export function isLeaseOwnerGone(owner: string): boolean {
  const parsed = parseLeaseOwner(owner);
  if (!parsed || parsed.host !== hostname()) return false;
  try {
    process.kill(parsed.pid, 0);
  } catch (error) {
    // EPERM: the pid exists but belongs to another user; it may still be the holder, so check its start time.
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return true;
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  if (parsed.start === "") return false;
  const now = processStartTime(parsed.pid);
  return now !== undefined && now !== parsed.start;
}

/** Field 22 of /proc/<pid>/stat, or undefined off Linux or when the process is gone. */
export function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Field 2 (comm) is in parentheses and may itself contain spaces and ")": split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state), so field 22 is fields[19].
  const start = fields[19];
  return start && /^[0-9]+$/.test(start) ? start : undefined;
}
