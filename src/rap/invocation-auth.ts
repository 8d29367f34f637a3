/**
 * How a RAP runtime proves to a tool that a request (POST /invoke, /close_thread, /cancel_tool_call) is its own.
 *
 * RAP leaves invocation authentication "implementation-specific" (spec/basic/transport; research note §2.6), so a
 * tool that listens without it runs whatever any local process, or a web page reaching it by DNS rebinding, asks.
 * Two schemes, one shared secret:
 * - `bearer`: `Authorization: Bearer <secret>` (RFC 6750 §2.1). Simple; the secret travels with every request.
 * - `hmac-sha256` (the default of `rap tool serve`): `x-rap-timestamp: <unix seconds>` and
 *   `x-rap-signature: v2=<hex HMAC-SHA256(secret, "v2\n" + timestamp + "\n" + METHOD + "\n" + host + "\n" +
 *   path + "\n" + hex(SHA-256(body)))>`. The secret never travels; a captured request is refused outside the
 *   replay window ("stale") and a second time inside it ("replayed"). `host` (lower-cased `host[:port]` the
 *   request is sent to, as in a URL: default port omitted) binds a signature to one tool server, so a tool that
 *   shares the runtime's secret cannot replay the runtime's requests to it at another tool (v1 had no host).
 *
 * The HMAC key is the secret's UTF-8 text exactly as written in the secret file (not its base64url decoding), so
 * any language can sign with one line. `path` is the request target as sent: pathname plus query string.
 */

import {
  createHash,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";
import { mkdir, readFile, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { AgentAuthError } from "../core/errors.ts";
import { Secret } from "../core/secret.ts";
import { createSecretFile } from "../core/secret-file.ts";

export type InvocationAuth =
  | { scheme: "bearer"; secret: Secret }
  | { scheme: "hmac-sha256"; secret: Secret; replayWindowSeconds?: number };

export type InvocationAuthFailure =
  | "missing"
  | "malformed"
  | "bad_signature"
  | "stale"
  | "replayed";

export const DEFAULT_INVOCATION_SECRET_FILE = "rap-invocation.secret";
export const DEFAULT_REPLAY_WINDOW_SECONDS = 300;
export const DEFAULT_REPLAY_CACHE_ENTRIES = 100_000;
export const TIMESTAMP_HEADER = "x-rap-timestamp";
export const SIGNATURE_HEADER = "x-rap-signature";

const SIGNATURE_VERSION = "v2";
const SIGNATURE_PATTERN = /^v2=([0-9a-fA-F]{64})$/;
const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;
// A real header is far shorter; anything longer is refused before any hashing work.
const MAX_HEADER_LENGTH = 1024;
const MIN_SECRET_BYTES = 32;
// How long a reader waits for an empty secret file to be written by the starter that created it.
const EMPTY_WAIT_MS = 2000;
const EMPTY_RETRY_MS = 20;

/**
 * Remembers the signatures accepted inside the replay window. Bounded: when full it first drops expired entries,
 * then the oldest live ones, and raises a floor so that nothing at or before a dropped entry's timestamp is
 * accepted again (an evicted signature can never be replayed; under such a flood some honest requests are refused
 * as stale and retried by the runtime with a fresh timestamp).
 */
export interface ReplayCache {
  /** Records `key` (seen at unix second `timestamp`) unless already present or at/below the floor. */
  remember(
    key: string,
    timestamp: number,
    nowSeconds: number,
    windowSeconds: number,
  ): "ok" | "replayed" | "stale";
  readonly size: number;
}

export function createReplayCache(options: { maxEntries?: number } = {}): ReplayCache {
  const maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_REPLAY_CACHE_ENTRIES);
  // key → [timestamp, expiresAt]; Map keeps insertion order, which is close to timestamp order.
  const entries = new Map<string, [number, number]>();
  let floor = -1;
  const sweep = (nowSeconds: number) => {
    for (const [key, [, expiresAt]] of entries) {
      if (expiresAt < nowSeconds) entries.delete(key);
    }
  };
  return {
    remember(key, timestamp, nowSeconds, windowSeconds) {
      if (timestamp <= floor) return "stale";
      const known = entries.get(key);
      if (known !== undefined && known[1] >= nowSeconds) return "replayed";
      if (entries.size >= maxEntries) sweep(nowSeconds);
      while (entries.size >= maxEntries) {
        const oldest = entries.entries().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest[0]);
        floor = Math.max(floor, oldest[1][0]);
      }
      if (timestamp <= floor) return "stale";
      entries.set(key, [timestamp, timestamp + windowSeconds]);
      return "ok";
    },
    get size() {
      return entries.size;
    },
  };
}

/** Headers the runtime adds to a request to the tool. `now` is in milliseconds (Date.now()). */
export function invocationAuthHeaders(
  auth: InvocationAuth,
  request: { method: string; host: string; path: string; body: string | Uint8Array; now?: number },
): Record<string, string> {
  if (auth.scheme === "bearer") return { authorization: `Bearer ${auth.secret.reveal()}` };
  const timestamp = String(Math.floor((request.now ?? Date.now()) / 1000));
  const signature = sign(
    auth.secret,
    timestamp,
    request.method,
    request.host,
    request.path,
    bodyHash(request.body),
  );
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: `${SIGNATURE_VERSION}=${signature}` };
}

/** What the tool side checks: the request as received. `now` is in milliseconds. */
export interface SignedRequest {
  method: string;
  /**
   * The host the request was sent to, as the tool knows itself; several when more than one name is its own
   * (the tool server passes the request's Host when it is one of its names, and its public host: see signedHosts).
   */
  host: string | readonly string[];
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  now?: number;
}

/** An HMAC signature that verified and is fresh: what a replay cache or ledger must remember. */
export interface AcceptedSignature {
  /** Lower-case hex HMAC: unique per (timestamp, method, host, path, body). */
  signature: string;
  /** The request's `x-rap-timestamp` (unix seconds). */
  timestamp: number;
  /** The tool's clock when it checked (unix seconds). */
  nowSeconds: number;
  /** How long a signature stays acceptable either side of its timestamp. */
  windowSeconds: number;
}

/**
 * The tool side's check: pure apart from the replay cache it is given. `now` is in milliseconds. Every comparison
 * with the secret (or a value derived from it) is constant-time.
 */
export function verifyInvocationAuth(
  auth: InvocationAuth,
  request: SignedRequest,
  seen: ReplayCache,
): { ok: true } | { ok: false; reason: InvocationAuthFailure } {
  const verdict = verifyInvocationSignature(auth, request);
  if (!verdict.ok || verdict.accepted === undefined) return verdict.ok ? { ok: true } : verdict;
  const { signature, timestamp, nowSeconds, windowSeconds } = verdict.accepted;
  const outcome = seen.remember(signature, timestamp, nowSeconds, windowSeconds);
  return outcome === "ok" ? { ok: true } : fail(outcome);
}

/**
 * The check without the replay part, pure: the credentials verify and, for HMAC, the timestamp is inside the window.
 * An accepted HMAC request comes back with its signature (`accepted`), which the caller must then record in its
 * replay cache or ledger (a durable one survives restarts and is shared by instances: src/rap/tool/replay-ledger.ts)
 * and refuse when already recorded. Bearer requests carry no signature: nothing to record.
 */
export function verifyInvocationSignature(
  auth: InvocationAuth,
  request: SignedRequest,
): { ok: true; accepted?: AcceptedSignature } | { ok: false; reason: InvocationAuthFailure } {
  if (auth.scheme === "bearer") return verifyBearer(auth.secret, request.headers.authorization);
  const timestampHeader = request.headers[TIMESTAMP_HEADER];
  const signatureHeader = request.headers[SIGNATURE_HEADER];
  if (timestampHeader === undefined && signatureHeader === undefined) return fail("missing");
  if (typeof timestampHeader !== "string" || typeof signatureHeader !== "string")
    return fail("malformed");
  if (timestampHeader.length > MAX_HEADER_LENGTH || signatureHeader.length > MAX_HEADER_LENGTH) {
    return fail("malformed");
  }
  if (!TIMESTAMP_PATTERN.test(timestampHeader)) return fail("malformed");
  const match = SIGNATURE_PATTERN.exec(signatureHeader.trim());
  if (match === null) return fail("malformed");
  const given = (match[1] as string).toLowerCase();
  const givenBytes = Buffer.from(given, "hex");
  const hash = bodyHash(request.body);
  let matched = false;
  for (const host of typeof request.host === "string" ? [request.host] : request.host) {
    const expected = mac(auth.secret, timestampHeader, request.method, host, request.path, hash);
    // Every candidate is compared (no early exit), so the time taken does not say which name matched.
    if (timingSafeEqual(givenBytes, expected)) matched = true;
  }
  if (!matched) return fail("bad_signature");
  // Freshness is judged only after the signature holds, so an unauthenticated caller learns nothing about the clock.
  const windowSeconds = auth.replayWindowSeconds ?? DEFAULT_REPLAY_WINDOW_SECONDS;
  const nowSeconds = Math.floor((request.now ?? Date.now()) / 1000);
  const timestamp = Number(timestampHeader);
  if (Math.abs(nowSeconds - timestamp) > windowSeconds) return fail("stale");
  return { ok: true, accepted: { signature: given, timestamp, nowSeconds, windowSeconds } };
}

/** The `WWW-Authenticate` challenge naming the scheme a tool expects (RFC 9110 §11.6.1). */
export function invocationAuthChallenge(auth: InvocationAuth): string {
  return auth.scheme === "bearer"
    ? 'Bearer realm="rap-tool"'
    : `RAP-HMAC-SHA256 realm="rap-tool", headers="${TIMESTAMP_HEADER} ${SIGNATURE_HEADER}"`;
}

/** The shared secret file could not be read, created, or holds something unusable. */
export class InvocationSecretError extends AgentAuthError {}

/**
 * Reads (or, with `create: true`, creates with mode 0600) a shared secret file: 32 random bytes, base64url, one
 * line. A file other users can read is refused, as ssh refuses such a key.
 */
export async function loadInvocationSecret(
  path: string,
  options: { create?: boolean } = {},
): Promise<Secret> {
  if (options.create) await createInvocationSecretFile(path);
  let text: string;
  try {
    // An empty file is one another starter has created and not yet written (a version that wrote in place, or
    // a hand-made `touch`): wait briefly for its content before calling it invalid.
    for (let waited = 0; ; waited += EMPTY_RETRY_MS) {
      const info = await stat(path);
      if (process.platform !== "win32" && (info.mode & 0o077) !== 0) {
        throw new InvocationSecretError(
          "invocation_secret_exposed",
          `The invocation secret file ${path} can be read by other users. Run \`chmod 600 ${path}\` and start again.`,
        );
      }
      if (info.size > 4096) throw notASecret(path);
      text = await readFile(path, "utf8");
      if (text.trim() !== "" || waited >= EMPTY_WAIT_MS) break;
      await new Promise((resolve) => setTimeout(resolve, EMPTY_RETRY_MS));
    }
  } catch (error) {
    if (error instanceof InvocationSecretError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvocationSecretError(
      code === "ENOENT" ? "invocation_secret_missing" : "invocation_secret_unreadable",
      code === "ENOENT"
        ? `The invocation secret file ${path} does not exist. Start the tool first (it creates the file), or pass the path the tool uses.`
        : `The invocation secret file ${path} could not be read (${code ?? "unknown error"}). Check its owner and permissions.`,
    );
  }
  const value = text.trim();
  if (
    !/^[A-Za-z0-9_-]+$/.test(value) ||
    Buffer.from(value, "base64url").length < MIN_SECRET_BYTES
  ) {
    throw notASecret(path);
  }
  return new Secret(value);
}

/**
 * Creates the secret file unless it exists, whole or not at all (core/secret-file.ts): a second starter never reads
 * it half-written, and when another starter won, the loser reads the winner's secret. A file already there is left
 * alone.
 */
async function createInvocationSecretFile(path: string): Promise<void> {
  if (await exists(path)) return;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await createSecretFile(path, `${randomBytes(MIN_SECRET_BYTES).toString("base64url")}\n`);
  } catch (error) {
    throw new InvocationSecretError(
      "invocation_secret_unwritable",
      `The invocation secret file ${path} could not be created (${(error as NodeJS.ErrnoException).code ?? "unknown error"}). Check that its folder is writable.`,
    );
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function notASecret(path: string): InvocationSecretError {
  return new InvocationSecretError(
    "invocation_secret_invalid",
    `The invocation secret file ${path} does not hold a secret (one line of base64url, at least ${MIN_SECRET_BYTES} bytes). Delete it to have a new one created.`,
  );
}

function verifyBearer(
  expected: Secret,
  header: string | string[] | undefined,
): { ok: true } | { ok: false; reason: InvocationAuthFailure } {
  if (header === undefined || header === "") return fail("missing");
  if (typeof header !== "string" || header.length > MAX_HEADER_LENGTH) return fail("malformed");
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (match === null) return fail("malformed");
  // Hash both sides first: timingSafeEqual needs equal lengths, and the length of the secret must not leak either.
  const given = createHash("sha256")
    .update(match[1] as string)
    .digest();
  const wanted = createHash("sha256").update(expected.reveal()).digest();
  return timingSafeEqual(given, wanted) ? { ok: true } : fail("bad_signature");
}

function sign(
  secret: Secret,
  timestamp: string,
  method: string,
  host: string,
  path: string,
  bodySha256Hex: string,
): string {
  return mac(secret, timestamp, method, host, path, bodySha256Hex).toString("hex");
}

function mac(
  secret: Secret,
  timestamp: string,
  method: string,
  host: string,
  path: string,
  bodySha256Hex: string,
): Buffer {
  return createHmac("sha256", hmacKey(secret))
    .update(
      `${SIGNATURE_VERSION}\n${timestamp}\n${method.toUpperCase()}\n${host.toLowerCase()}\n${path}\n${bodySha256Hex}`,
    )
    .digest();
}

/**
 * The secret as a KeyObject, made once per Secret: createHmac with a string key imports the key on every call, which
 * was about a third of a verification's time on the tool's hot path (two candidate hosts per request).
 */
const HMAC_KEYS = new WeakMap<Secret, KeyObject>();
function hmacKey(secret: Secret): KeyObject {
  let key = HMAC_KEYS.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret.reveal(), "utf8"));
    HMAC_KEYS.set(secret, key);
  }
  return key;
}

function bodyHash(body: string | Uint8Array): string {
  return createHash("sha256").update(body).digest("hex");
}

function fail(reason: InvocationAuthFailure): { ok: false; reason: InvocationAuthFailure } {
  return { ok: false, reason };
}
