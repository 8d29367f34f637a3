/**
 * The embedded server's data folder (I/O around state-file.ts): keys made once and kept, the storage snapshot read
 * at start and written back debounced, 0600 and atomically (core/secret-file.ts), and flushed on close.
 */

import { randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { exportJWK, generateKeyPair, importJWK } from "jose";
import type { JWK } from "oidc-provider";
import type { Logger } from "../core/log.ts";
import { writeSecretFile } from "../core/secret-file.ts";
import type { StoredEntry } from "./memory-adapter.ts";
import {
  decodeKeys,
  decodeState,
  encodeKeys,
  encodeState,
  type IdpKeys,
  IdpStateError,
  type IdpStateSnapshot,
  KEYS_FILE,
  STATE_FILE,
  unreadable,
} from "./state-file.ts";

export const DEFAULT_SAVE_DELAY_MS = 200;

/** A fresh ES256 signing key and cookie key: what a server without a data folder uses for its lifetime. */
export async function generateKeys(): Promise<IdpKeys> {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const signingKey = {
    ...(await exportJWK(privateKey)),
    alg: "ES256",
    use: "sig",
    kid: randomBytes(8).toString("hex"),
  } as JWK;
  return { signingKeys: [signingKey], cookieKeys: [randomBytes(32).toString("base64url")] };
}

/** The keys in `dir`, made and saved on the first start. */
export async function loadOrCreateKeys(dir: string): Promise<IdpKeys> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
    throw new IdpStateError(
      dir,
      `The authorization server cannot use the data folder ${dir} (${code}). Choose another folder.`,
    );
  }
  const file = join(dir, KEYS_FILE);
  const text = await readIfExists(file);
  if (text === undefined) {
    const keys = await generateKeys();
    await writeSecretFile(file, encodeKeys(keys));
    return keys;
  }
  const keys = decodeKeys(text, file);
  for (const key of keys.signingKeys) {
    try {
      await importJWK(key as Parameters<typeof importJWK>[0], "ES256");
    } catch {
      throw unreadable(
        file,
        `signing key ${String(key.kid).slice(0, 64)} is not a valid ES256 key`,
      );
    }
  }
  await tighten(file);
  return keys;
}

/**
 * The storage entries saved in `dir`, or none on a first start. A snapshot made by another issuer (the port
 * changed) is dropped: its tokens and sessions name that issuer, so users sign in again.
 */
export async function loadState(
  dir: string,
  issuer: string,
  logger: Logger,
): Promise<StoredEntry[]> {
  const file = join(dir, STATE_FILE);
  const text = await readIfExists(file);
  if (text === undefined) return [];
  const snapshot = decodeState(text, file);
  await tighten(file);
  if (snapshot.issuer !== issuer) {
    logger.warn("idp.state_discarded", {
      reason: "saved by another issuer",
      saved: snapshot.issuer,
      issuer,
    });
    return [];
  }
  return snapshot.entries;
}

export interface StateWriter {
  /** A change happened: save within `delayMs` (many changes, one write). */
  schedule(): void;
  /** Save now if anything is unsaved, and wait for every write under way. */
  flush(): Promise<void>;
}

/** Writes `snapshot()` to `dir/idp-state.json`, debounced; one write at a time, failures logged, never thrown. */
export function stateWriter(options: {
  dir: string;
  snapshot: () => IdpStateSnapshot;
  logger: Logger;
  delayMs?: number;
}): StateWriter {
  const file = join(options.dir, STATE_FILE);
  const delayMs = options.delayMs ?? DEFAULT_SAVE_DELAY_MS;
  let timer: NodeJS.Timeout | undefined;
  let dirty = false;
  let writing: Promise<void> = Promise.resolve();

  const save = (): Promise<void> => {
    timer = undefined;
    if (!dirty) return writing;
    dirty = false;
    const text = encodeState(options.snapshot());
    writing = writing.then(() =>
      writeSecretFile(file, text).catch((error: NodeJS.ErrnoException) => {
        // The code only (EACCES, ENOSPC…): the error object is safe, but keep logs small and predictable.
        options.logger.error("idp.state_write_failed", { file, code: error.code ?? "unknown" });
      }),
    );
    return writing;
  };

  return {
    schedule() {
      dirty = true;
      if (timer) return;
      timer = setTimeout(save, delayMs);
      // A pending save must not keep a process alive; close() flushes it.
      timer.unref();
    },
    async flush() {
      if (timer) clearTimeout(timer);
      await save();
    },
  };
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw unreadable(file, `reading it failed: ${code ?? "unknown error"}`);
  }
}

/** A file someone else loosened (copied with cp, say) goes back to owner-only: it holds keys and tokens. */
async function tighten(file: string): Promise<void> {
  const { mode } = await stat(file);
  if (mode & 0o077) await chmod(file, 0o600);
}
