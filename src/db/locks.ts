/**
 * Advisory locks by name. PostgreSQL's advisory locks take a 64-bit key; ours is derived from a namespaced name
 * with SHA-256 (first 8 bytes, signed), computed here rather than with hashtext() so that it is stable across
 * server versions. A 64-bit collision between two names is possible in principle and harmless: two unrelated
 * operations would wait for each other, never run together where they should not.
 */

import { createHash } from "node:crypto";

/** The bigint key for `name` in `namespace`, as a decimal string (what pg binds to a bigint parameter). */
export function advisoryKey(namespace: string, name: string): string {
  const digest = createHash("sha256").update(`agentauth\0${namespace}\0${name}`).digest();
  return digest.readBigInt64BE(0).toString();
}
