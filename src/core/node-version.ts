/**
 * The oldest Node.js agentauth runs on: 22.18 is the first 22.x where `node:sqlite` needs no flag and TypeScript
 * type stripping is on by default (package.json `engines`). Older versions fail with clear words instead of
 * `ERR_UNKNOWN_BUILTIN_MODULE` (issue 8 §4.9).
 */

import type * as Sqlite from "node:sqlite";
import { AgentAuthError } from "./errors.ts";

export const REQUIRED_NODE = "22.18.0";

/** True when `version` ("22.18.0" or "v24.1.0") is at least REQUIRED_NODE. */
export function nodeSupported(version: string, required = REQUIRED_NODE): boolean {
  const parse = (v: string) =>
    v
      .replace(/^v/, "")
      .split(".")
      .map((part) => Number.parseInt(part, 10) || 0);
  const have = parse(version);
  const need = parse(required);
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

export class NodeVersionError extends AgentAuthError {
  constructor(what: string, version = process.versions.node) {
    super(
      "node_too_old",
      `${what} needs Node.js ${REQUIRED_NODE} or newer (node:sqlite), and this is Node.js ${version}; ` +
        "install a current Node.js (https://nodejs.org) and run it again.",
    );
  }
}

/**
 * `node:sqlite`, loaded when a store is opened rather than when a module is imported: on an older Node the import
 * of `agentauth/vault` succeeds (the in-memory store works) and opening a file says which Node to install.
 */
export function loadSqlite(): typeof Sqlite {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const sqlite = nodeSupported(process.versions.node) && get ? get("node:sqlite") : undefined;
  if (!sqlite) throw new NodeVersionError("The agentauth SQLite stores (vault, RAP runtime)");
  return sqlite as typeof Sqlite;
}
