/**
 * One demo per data folder: `demo.lock` says which process runs on the folder and where its console is. A second
 * start on the same folder finds it and refuses (`demo_already_running`), instead of starting a second demo on new
 * ports, rewriting ports.json and moving the folder's authorization server (every stored credential is keyed by its
 * issuer URL). A lock whose process is provably gone (kill -9, a crash) is taken over.
 */

import { readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { AgentAuthError } from "../core/errors.ts";
import { createSecretFileSync, writeSecretFileSync } from "../core/secret-file.ts";
import { shellCommand } from "../core/self-command.ts";
import { isLeaseOwnerGone, leaseOwnerId, parseLeaseOwner } from "../vault/lease-owner.ts";

export const DEMO_LOCK_FILE = "demo.lock";

/** A demo already runs on this folder. */
export class DemoRunningError extends AgentAuthError {}

interface LockContent {
  kind: "agentauth-demo-lock";
  owner: string;
  pid: number;
  startedAt: string;
  /** The running console's address, once it listens. */
  console?: string;
}

export interface DemoLock {
  /** Records the console's address, for the message a second start prints. */
  setConsole(url: string): void;
  /** Removes the lock if it is still this process's. */
  release(): void;
}

/** Pure: the lock file's content, or undefined when it is not one (then it is taken over). */
export function parseDemoLock(text: string): LockContent | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockContent>;
    if (value.kind !== "agentauth-demo-lock" || typeof value.owner !== "string") return undefined;
    if (typeof value.pid !== "number" || typeof value.startedAt !== "string") return undefined;
    return value as LockContent;
  } catch {
    return undefined;
  }
}

/**
 * Pure: what a second start says (the folder, who runs there, its console, how to stop it, how to run beside it).
 * `cli` is how this installation runs from a shell (core/self-command.ts), as in the demo's other commands.
 */
export function alreadyRunningMessage(
  dir: string,
  lock: LockContent,
  cli = "npm run agentauth --",
): string {
  const home = /^[A-Za-z0-9_./:@%+=,-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", `'\\''`)}'`;
  const where = lock.console
    ? `its console is ${lock.console} (to sign in from another browser or tab: \`AGENTAUTH_HOME=${home} ${cli} console --link\` prints a fresh link)`
    : "it is still starting (its console's address is not known yet)";
  return (
    `A demo is already running on ${dir} (process ${lock.pid}, started ${lock.startedAt}): ${where}. ` +
    `To stop it, press Ctrl-C in its terminal (or run \`kill -INT ${lock.pid}\`), then start again. ` +
    `To run a second demo beside it, give it a folder of its own: \`${cli} demo --data-dir <another folder>\`.`
  );
}

/** The lock's content when a live process holds it (nothing is changed). */
export function runningDemo(dir: string): LockContent | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, DEMO_LOCK_FILE), "utf8");
  } catch {
    return undefined;
  }
  const lock = parseDemoLock(text);
  return lock && !holderGone(lock) ? lock : undefined;
}

/**
 * The lease rule (same host, boot and pid namespace, and the pid gone or reused), else, where /proc cannot say
 * (macOS), a pid of this host that no longer exists: a crashed demo must not lock its folder for good.
 */
function holderGone(lock: LockContent): boolean {
  if (isLeaseOwnerGone(lock.owner)) return true;
  if (parseLeaseOwner(lock.owner)?.host !== hostname()) return false;
  try {
    process.kill(lock.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Takes the folder's lock, or throws `demo_already_running` naming the process that holds it. */
export function acquireDemoLock(dir: string): DemoLock {
  const path = join(dir, DEMO_LOCK_FILE);
  const content: LockContent = {
    kind: "agentauth-demo-lock",
    owner: leaseOwnerId(),
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createSecretFileSync(path, `${JSON.stringify(content)}\n`)) return held(path, content);
    const holder = runningDemo(dir);
    if (holder)
      throw new DemoRunningError(
        "demo_already_running",
        alreadyRunningMessage(dir, holder, shellCommand()),
      );
    // A stale lock (its process is gone, or the file is not a lock): take it over.
    rmSync(path, { force: true });
  }
  throw new DemoRunningError(
    "demo_already_running",
    `Another demo keeps taking ${dir} while this one starts; stop it, or pass another --data-dir.`,
  );
}

function held(path: string, content: LockContent): DemoLock {
  const ours = () => {
    try {
      return parseDemoLock(readFileSync(path, "utf8"))?.owner === content.owner;
    } catch {
      return false;
    }
  };
  return {
    setConsole(url) {
      if (!ours()) return;
      content.console = url;
      writeSecretFileSync(path, `${JSON.stringify(content)}\n`);
    },
    release() {
      if (ours()) rmSync(path, { force: true });
    },
  };
}
