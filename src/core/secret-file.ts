/**
 * The one way agentauth writes a file that holds a secret and may already exist (a token rewritten at each start):
 * owner-only (0600) on every write, not only when the file is created. `writeFileSync(path, data, { mode })` applies
 * the mode to a new file only, so a file left 0644 (by hand, a backup restore, an older release) kept its mode and
 * received the new secret (issue 20 §1.5). Here the data goes to a fresh temporary file created 0600 (O_EXCL, then
 * fchmod, since the umask can only take bits away), synced, and renamed over the target: the old file, its mode and
 * anything else that held the name (a symlink is replaced, not followed) are gone, and a reader sees the old secret
 * or the new one, never half of one.
 *
 * Files created only when missing and never rewritten (the vault key, the RAP callback key, the invocation secret)
 * are created the same way (private temporary file, then link) and checked or set to 0600 where they are read.
 */

import { randomBytes } from "node:crypto";
import { closeSync, fchmodSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";

export const SECRET_FILE_MODE = 0o600;

/** Writes `data` to `path` as an owner-only file, replacing whatever was there; throws Node's error as is. */
export function writeSecretFileSync(path: string, data: string): void {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(temp, "wx", SECRET_FILE_MODE);
    fchmodSync(fd, SECRET_FILE_MODE);
    writeSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
}
