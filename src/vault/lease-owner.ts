/**
 * Lease owner ids that say which process holds a lease, so a contender on the same host can tell a holder that
 * was killed (kill -9 never runs `releaseLease`) from one that is still working, and take the lease at once
 * instead of waiting out its expiry.
 *
 * Format: `<hostname>/<boot id>/<pid namespace>/<pid>/<start>/<random>`. The boot id
 * (/proc/sys/kernel/random/boot_id) and the pid namespace inode (readlink /proc/self/ns/pid) prove that the holder's
 * pid means the same process to us: two containers sharing a hostname (--network host, same `hostname:`) see each
 * other's pids as ESRCH, so hostname alone would let one take over the other's live lease. `start` is the process
 * start time in clock ticks since boot (/proc/<pid>/stat field 22, proc(5)); it tells a dead holder from a new
 * process that was given the same pid. Any part that cannot be read is empty, which makes the holder uncertain
 * (= alive). Hostnames cannot contain "/"; the older 4-part format parses as foreign (uncertain).
 */

import { randomBytes } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/** A fresh owner id for this process: unique per call (the random part), recognisable as ours. */
export function leaseOwnerId(): string {
  const start = processStartTime(process.pid) ?? "";
  return `${hostname()}/${bootId() ?? ""}/${pidNamespace() ?? ""}/${process.pid}/${start}/${randomBytes(6).toString("hex")}`;
}

interface ParsedOwner {
  host: string;
  bootId: string;
  pidNs: string;
  pid: number;
  start: string;
}

/** Undefined for ids in any other format (tests, older agentauth): those are treated as alive. */
export function parseLeaseOwner(owner: string): ParsedOwner | undefined {
  const parts = owner.split("/");
  if (parts.length !== 6) return undefined;
  const [host, boot, pidNs, pidText, start, random] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (host === "" || random === "") return undefined;
  if (!/^(?:[0-9a-f-]{36})?$/.test(boot) || !/^[0-9]{0,20}$/.test(pidNs)) return undefined;
  if (!/^[1-9][0-9]{0,9}$/.test(pidText) || !/^[0-9]{0,20}$/.test(start)) return undefined;
  return { host, bootId: boot, pidNs, pid: Number(pidText), start };
}

/**
 * True only when the owner is provably gone: it names this host, this boot and this pid namespace, and its pid no
 * longer exists (ESRCH), or the pid now belongs to a process that started at another time. Anything uncertain
 * (another host, boot or pid namespace, either side unable to read them, a foreign id format) answers false, and the
 * lease then only frees itself by expiring.
 */
export function isLeaseOwnerGone(owner: string): boolean {
  const parsed = parseLeaseOwner(owner);
  if (!parsed || parsed.host !== hostname()) return false;
  const boot = bootId();
  const pidNs = pidNamespace();
  if (boot === undefined || pidNs === undefined) return false;
  if (parsed.bootId !== boot || parsed.pidNs !== pidNs) return false;
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

/** This kernel boot's id (random per boot), or undefined off Linux. */
function bootId(): string | undefined {
  try {
    const id = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    return /^[0-9a-f-]{36}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The inode of this process's pid namespace (`pid:[4026531836]` → "4026531836"), or undefined off Linux. */
function pidNamespace(): string | undefined {
  try {
    return /^pid:\[([0-9]{1,20})\]$/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
  } catch {
    return undefined;
  }
}
