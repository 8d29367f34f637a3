/**
 * The one way agentauth writes a file that holds a secret: the data goes to a fresh temporary file beside it, created
 * owner-only (0600: O_EXCL, then fchmod, since the umask can only take bits away), written whole and synced, and only
 * then given its name. A reader sees no file, the old one or the new one, never half of one. Two ways to give it
 * the name:
 *
 * - **Replace** (`writeSecretFileSync`, `writeSecretFile`): renamed over the target, for a file rewritten at each
 *   start or save (the runtime's control token, the embedded server's keys and state). The old file, its mode and
 *   anything else that held the name (a symlink is replaced, not followed) are gone: `writeFileSync(path, data,
 *   { mode })` applies the mode to a new file only, so a file left 0644 (by hand, a backup restore, an older release)
 *   kept its mode and received the new secret (issue 20 §1.5).
 * - **Create** (`createSecretFileSync`, `createSecretFile`): hard-linked into place, for a file made once and then
 *   only read (the vault key, the RAP callback key, the invocation secret). link(2) fails if the name exists, so
 *   processes starting at once agree on the one file that won (false: another writer's, or an older one, is there
 *   and left alone); callers check or set 0600 where they read it.
 *
 * Node's errors are thrown as they are; callers say what the file was for. SQLite databases (the vault, the runtime's
 * store, the replay ledger) are written by SQLite itself: core/sqlite.ts creates them 0600 before opening them.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  linkSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { link, open, rename, rm } from "node:fs/promises";

export const SECRET_FILE_MODE = 0o600;

/** Writes `data` to `path` as an owner-only file, replacing whatever was there. */
export function writeSecretFileSync(path: string, data: string): void {
  const temp = writeTempSync(path, data);
  try {
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Creates `path` with `data`, owner-only, unless it exists: true when this call created it. */
export function createSecretFileSync(path: string, data: string): boolean {
  const temp = writeTempSync(path, data);
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** `writeSecretFileSync` off the event loop (the embedded server's state, saved while it serves). */
export async function writeSecretFile(path: string, data: string): Promise<void> {
  const temp = await writeTemp(path, data);
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** `createSecretFileSync` off the event loop. */
export async function createSecretFile(path: string, data: string): Promise<boolean> {
  const temp = await writeTemp(path, data);
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
}

/** A private temporary name in the target's folder (rename and link stay on one filesystem). */
function tempName(path: string): string {
  return `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
}

/** The temporary file, 0600, written and synced; removed again if any step fails. */
function writeTempSync(path: string, data: string): string {
  const temp = tempName(path);
  let fd: number | undefined;
  try {
    fd = openSync(temp, "wx", SECRET_FILE_MODE);
    fchmodSync(fd, SECRET_FILE_MODE);
    writeSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    return temp;
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
}

async function writeTemp(path: string, data: string): Promise<string> {
  const temp = tempName(path);
  try {
    const handle = await open(temp, "wx", SECRET_FILE_MODE);
    try {
      await handle.chmod(SECRET_FILE_MODE);
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    return temp;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
