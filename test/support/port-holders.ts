/**
 * Test support: which processes listen on a TCP port now (Linux, from /proc).
 *
 * "Is the port free again?" (bind it and see) is the wrong question after a close when test files run in parallel:
 * the port a test's server had came from the kernel's ephemeral range (or a fixed preferred one), and another test
 * process may be handed the same number a moment after the close (a server, or an outgoing connection's local
 * port). The bind then fails although our server closed. What a test means is "none of OUR processes listens there
 * any more": that is what `listeners` lets it check, whoever else holds the port meanwhile.
 */

import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { isPortFree } from "../../src/demo/ports.ts";

export interface PortListener {
  pid: number;
  /** argv joined with spaces. */
  command: string;
  /** The environment as `NAME=value` lines ("" when unreadable). */
  environ: string;
}

/** TCP state "LISTEN" in /proc/net/tcp{,6}. */
const LISTEN = "0A";

/** The inodes of the listening sockets on `port` (any address, IPv4 and IPv6). */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = fields[1] ?? "";
      const localPort = Number.parseInt(local.slice(local.lastIndexOf(":") + 1), 16);
      if (localPort === port && fields[3] === LISTEN) inodes.add(fields[9] ?? "");
    }
  }
  return inodes;
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8").replaceAll("\0", "\n");
  } catch {
    return "";
  }
}

/**
 * The processes listening on `port` right now; undefined where /proc cannot tell (not Linux): the caller then
 * falls back to a bind check.
 */
export function listeners(port: number): PortListener[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
    readFileSync("/proc/net/tcp", "utf8");
  } catch {
    return undefined;
  }
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return [];
  const found: PortListener[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // Gone meanwhile, or not ours to read.
    }
    const holds = fds.some((fd) => {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        return target.startsWith("socket:[") && inodes.has(target.slice(8, -1));
      } catch {
        return false;
      }
    });
    if (holds) {
      found.push({
        pid: Number(entry),
        command: readText(`/proc/${entry}/cmdline`).trim().replaceAll("\n", " "),
        environ: readText(`/proc/${entry}/environ`),
      });
    }
  }
  return found;
}

/**
 * True when none of the processes listening on `port` is ours (`ours` tells), whoever else listens there now.
 * Where /proc cannot tell, falls back to "the port can be bound" (which another process may falsely deny).
 */
export async function releasedBy(
  port: number,
  ours: (listener: PortListener) => boolean,
): Promise<boolean> {
  const now = listeners(port);
  if (now === undefined) return isPortFree(port);
  return !now.some(ours);
}

/** Whether this test process itself listens on `port` (a server started in-process and not closed). */
export const thisProcess = (listener: PortListener): boolean => listener.pid === process.pid;
