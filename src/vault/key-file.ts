/** The on-disk key file, `<home>/vault.key`: JSON `{current: kid, keys: {kid: base64}}`, mode 0600. */

import { closeSync, fsyncSync, openSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { createSecretFileSync, writeSecretFileSync } from "../core/secret-file.ts";
import { VaultIoError, VaultKeyError } from "./errors.ts";
import { generateVaultKey, Keyring, keyId, parseVaultKey } from "./keyring.ts";

interface KeyFileContents {
  current: string;
  keys: Record<string, string>;
}

/** The keyring the file holds, or undefined when there is no file yet. */
export function readKeyFile(path: string): Keyring | undefined {
  const contents = readContents(path);
  return contents && toKeyring(contents, path);
}

/**
 * Creates the file with one fresh key, unless another process got there first, in which case
 * that process's key wins and is returned. The file is written whole under a temporary name and
 * hard-linked into place: link(2) fails if the name exists, so concurrent first runs agree on one
 * key and nobody ever reads a half-written file.
 */
export function createKeyFile(path: string): Keyring {
  const text = fileText(withNewKey({ current: "", keys: {} }));
  try {
    createSecretFileSync(path, text);
  } catch (error) {
    throw ioError(`Cannot create the vault key file ${path}; check the folder.`, error);
  }
  syncDir(path);
  const keyring = readKeyFile(path);
  if (!keyring) throw ioError(`The vault key file ${path} vanished while being created.`);
  return keyring;
}

/**
 * Adds a fresh key and makes it current; older keys stay so existing rows remain readable until
 * re-encrypted. Replaces the file atomically (write, fsync, rename). Two rotations racing each
 * other can lose one new key: rotation is an operator action, run it from one place.
 */
export function addKeyToFile(path: string): { kid: string; previous: string[] } {
  if (!readContents(path)) createKeyFile(path);
  const contents = readContents(path)!;
  const previous = toKeyring(contents, path).kids; // validates before building on it
  const next = withNewKey(contents);
  const text = fileText(next);
  try {
    writeSecretFileSync(path, text);
  } catch (error) {
    throw ioError(`Cannot replace the vault key file ${path}; check the folder.`, error);
  }
  syncDir(path);
  return { kid: next.current, previous };
}

function withNewKey(contents: KeyFileContents): KeyFileContents {
  const key = generateVaultKey();
  const kid = keyId(parseVaultKey(key, "the generated key"));
  return { current: kid, keys: { ...contents.keys, [kid]: key } };
}

function readContents(path: string): KeyFileContents | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw ioError(`Cannot read the vault key file ${path}; check its permissions.`, error);
  }
  const invalid = (why: string) =>
    new VaultKeyError(
      "vault_key_invalid",
      `The vault key file ${path} is malformed (${why}). Restore it from a backup; without its ` +
        "keys the stored tokens cannot be decrypted and every account needs a new login.",
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid("not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw invalid("not a JSON object");
  // Own properties only, copied into a null-prototype object: `"current": "toString"` or a `__proto__` key must
  // not find Object.prototype's members (that was an unexpected TypeError instead of this message).
  const current = ownValue(value, "current");
  const keys = ownValue(value, "keys");
  if (typeof current !== "string") throw invalid('"current" is not a string');
  if (typeof keys !== "object" || keys === null || Array.isArray(keys)) {
    throw invalid('"keys" is not an object');
  }
  const copy: Record<string, string> = Object.create(null);
  for (const [kid, text] of Object.entries(keys)) {
    if (typeof text !== "string") throw invalid(`the key "${kid.slice(0, 40)}" is not a string`);
    copy[kid] = text;
  }
  if (!Object.hasOwn(copy, current)) throw invalid('"current" names a key that is not in "keys"');
  return { current, keys: copy };
}

function ownValue(object: object, name: string): unknown {
  return Object.hasOwn(object, name) ? (object as Record<string, unknown>)[name] : undefined;
}

function toKeyring(contents: KeyFileContents, path: string): Keyring {
  const older: Buffer[] = [];
  let current: Buffer | undefined;
  for (const [kid, text] of Object.entries(contents.keys)) {
    const key = parseVaultKey(text, `The key "${kid}" in ${path}`);
    // Ids are derived from keys; a mismatch means a hand edit that would mislabel rows.
    if (keyId(key) !== kid) {
      throw new VaultKeyError(
        "vault_key_invalid",
        `The vault key file ${path} lists a key under the wrong id "${kid.slice(0, 40)}". Restore the ` +
          "file from a backup; without its keys the stored tokens cannot be decrypted.",
      );
    }
    if (kid === contents.current) current = key;
    else older.push(key);
  }
  return new Keyring(current!, older);
}

/** What the file holds: the contents as indented JSON, one final newline. */
function fileText(contents: KeyFileContents): string {
  return `${JSON.stringify(contents, null, 2)}\n`;
}

/** Makes the new directory entry durable too; best effort, some platforms cannot open a folder. */
function syncDir(path: string): void {
  try {
    const fd = openSync(dirname(path), "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Windows and some network filesystems refuse; the file itself was already synced.
  }
}

function ioError(message: string, cause?: unknown): VaultIoError {
  return new VaultIoError("vault_io", message, { cause });
}
