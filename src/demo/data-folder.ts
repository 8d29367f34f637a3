/**
 * The demo's one folder (default `$AGENTAUTH_HOME/demo`): vault, keys, the IdP's state, the runtime's database,
 * ports.json. A marker file `demo.json` says the folder is the demo's, so `--fresh` never empties a folder that
 * holds someone else's files.
 */

import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { AgentAuthError } from "../core/errors.ts";
import { agentauthHome } from "../core/home.ts";

export const DEMO_MARKER_FILE = "demo.json";
/** Kept by `--fresh`: see lock.ts. */
const DEMO_LOCK_FILE = "demo.lock";
const MARKER_KIND = "agentauth-demo";

/** The folder cannot be used: someone else's non-empty folder, a file in the way, or unwritable. */
export class DemoFolderError extends AgentAuthError {}

export interface DataFolder {
  dir: string;
  /** True when the folder was just created or emptied (nothing from an earlier run). */
  created: boolean;
}

/** `$AGENTAUTH_HOME/demo` (the platform data directory when AGENTAUTH_HOME is unset). */
export function defaultDemoDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentauthHome(env), "demo");
}

/** Pure: does this marker text name an agentauth demo folder? */
export function isDemoMarker(text: string): boolean {
  try {
    const value = JSON.parse(text) as { kind?: unknown };
    return typeof value === "object" && value !== null && value.kind === MARKER_KIND;
  } catch {
    return false;
  }
}

/**
 * Makes `dir` the demo's folder (owner-only): creates it, or reuses one holding the marker; with `fresh`, empties a
 * marked folder first. A non-empty folder without the marker is refused (`demo_folder_foreign`), fresh or not.
 */
export function prepareDataFolder(dir: string, options: { fresh?: boolean } = {}): DataFolder {
  const path = resolve(dir);
  if (!existsSync(path)) {
    try {
      mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw unwritable(path, error);
    }
    writeMarker(path);
    return { dir: path, created: true };
  }
  if (!statSync(path).isDirectory()) {
    throw new DemoFolderError(
      "demo_folder_not_a_directory",
      `${path} is a file, not a folder; pass another --data-dir.`,
    );
  }
  const entries = readdirSync(path);
  if (entries.length === 0) {
    writeMarker(path);
    return { dir: path, created: true };
  }
  if (!entries.includes(DEMO_MARKER_FILE) || !isDemoMarker(readMarker(path))) {
    throw new DemoFolderError(
      "demo_folder_foreign",
      `${path} is not empty and is not an agentauth demo folder (no ${DEMO_MARKER_FILE}); nothing was changed. Pass an empty or new folder with --data-dir.`,
    );
  }
  try {
    chmodSync(path, 0o700);
  } catch (error) {
    throw unwritable(path, error);
  }
  if (!options.fresh) return { dir: path, created: false };
  // The lock (lock.ts) is the running start's own, taken before the folder is emptied.
  for (const entry of entries) {
    if (entry !== DEMO_LOCK_FILE) rmSync(join(path, entry), { recursive: true, force: true });
  }
  writeMarker(path);
  return { dir: path, created: true };
}

/** True when `dir` is a folder marked as the demo's (so its lock may be taken before anything else). */
export function isDemoFolder(dir: string): boolean {
  try {
    return statSync(dir).isDirectory() && isDemoMarker(readMarker(dir));
  } catch {
    return false;
  }
}

function readMarker(dir: string): string {
  try {
    return readFileSync(join(dir, DEMO_MARKER_FILE), "utf8");
  } catch {
    return "";
  }
}

function writeMarker(dir: string): void {
  try {
    writeFileSync(
      join(dir, DEMO_MARKER_FILE),
      `${JSON.stringify({ kind: MARKER_KIND, version: 1, createdAt: new Date().toISOString() })}\n`,
      { mode: 0o600 },
    );
  } catch (error) {
    throw unwritable(dir, error);
  }
}

function unwritable(dir: string, error: unknown): DemoFolderError {
  const code = (error as NodeJS.ErrnoException).code ?? "unknown error";
  return new DemoFolderError(
    "demo_folder_unwritable",
    `The demo folder ${dir} could not be prepared (${code}); check its permissions or pass another --data-dir.`,
  );
}
