/**
 * Ending a child and everything it started. POSIX: the child leads its own process group (`detached: true`), and
 * the group is signalled as one (`kill(-pgid)`), because an npm shim's native child, or a terminal login's helper,
 * does not go away with its parent (issue 8 §3.1). A child that must stay in our group (a terminal login reading the
 * person's terminal) is signalled alone. Every live child is registered so `killAllGroups()` can end them when
 * agentauth itself is about to exit: on a second signal, and on the process "exit" event (process.exit, an uncaught
 * exception, the event loop running dry without close()).
 */

import type { ChildProcess } from "node:child_process";

const live = new Map<ChildProcess, boolean>();
let exitHookInstalled = false;

/** Registers a spawned child (`ownGroup`: it leads its own process group); returns the unregister function. */
export function trackGroup(
  child: ChildProcess,
  ownGroup = process.platform !== "win32",
): () => void {
  // A detached group does not die with us: a process.exit() or an uncaught exception that skips close() would leave
  // the agent running. "exit" handlers may only do synchronous work, and kill(2) is synchronous. Installed once.
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", killAllGroups);
  }
  live.set(child, ownGroup);
  return () => live.delete(child);
}

/**
 * Stops a child: end its stdin, wait up to `graceMs` for it to leave, SIGTERM (the group), wait, SIGKILL. A leader
 * that left on end of stdin may have left children behind, so the group is signalled even then, and the wait ends
 * only when no process of the group remains.
 */
export async function stopGroup(
  child: ChildProcess,
  exited: Promise<unknown>,
  graceMs: number,
  ownGroup = process.platform !== "win32",
): Promise<void> {
  child.stdin?.end();
  await Promise.race([exited, delay(graceMs)]);
  if (!alive(child, ownGroup)) return;
  signal(child, ownGroup, "SIGTERM");
  for (let waited = 0; waited < graceMs && alive(child, ownGroup); waited += POLL_MS)
    await delay(POLL_MS);
  if (!alive(child, ownGroup)) return;
  signal(child, ownGroup, "SIGKILL");
  // SIGKILL cannot be ignored; this only waits for the kernel to reap (bounded).
  for (let i = 0; i < 100 && alive(child, ownGroup); i++) await delay(POLL_MS);
}

/** Synchronous SIGKILL to every registered child (and its group): for a process about to exit. */
export function killAllGroups(): void {
  for (const [child, ownGroup] of live) signal(child, ownGroup, "SIGKILL");
  live.clear();
}

const POLL_MS = 20;

function signal(child: ChildProcess, ownGroup: boolean, name: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  try {
    if (ownGroup) process.kill(-pid, name);
    else child.kill(name);
  } catch {
    // ESRCH: already gone.
  }
}

function alive(child: ChildProcess, ownGroup: boolean): boolean {
  const pid = child.pid;
  if (pid === undefined) return false;
  if (!ownGroup) return child.exitCode === null && child.signalCode === null;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    // EPERM: a member we may not signal (it changed user) still exists.
    return (error as { code?: string }).code === "EPERM";
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
