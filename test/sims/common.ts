/** Shared plumbing for the provider simulators: a loopback listener, a capped body reader, parsers, random tokens. */

// The simulators share NO code with src/ (they are the protocol peers under test): node: modules only.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Request bodies larger than this are refused with 413 and not read further (bounded memory). */
export const MAX_BODY_BYTES = 64 * 1024;

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export interface Listening {
  server: Server;
  /** "http://127.0.0.1:PORT" */
  url: string;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 on a free port. A handler that throws answers 500 text (never crashes the process), so a
 * simulator bug shows up as a failed request in the test that met it.
 */
export async function listen(handler: Handler): Promise<Listening> {
  const server = createServer((req, res) => {
    Promise.resolve()
      .then(() => handler(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`simulator error: ${error instanceof Error ? error.message : String(error)}`);
        } else res.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The body, or "too_large" once it passes MAX_BODY_BYTES (the rest is discarded, not buffered). */
export async function readBody(req: IncomingMessage): Promise<Buffer | "too_large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  return tooLarge ? "too_large" : Buffer.concat(chunks);
}

/** Parses a form or JSON body into string parameters; non-string JSON values are dropped. Never throws. */
export function parseParams(
  body: Buffer,
  contentType: string | undefined,
): Record<string, string> | null {
  const text = body.toString("utf8");
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json") {
    const value = parseJson(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(value)) if (typeof v === "string") out[k] = v;
    return out;
  }
  return Object.fromEntries(new URLSearchParams(text));
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** RFC 7617 Basic credentials (RFC 6749 §2.3.1 form-decodes each half), or null. */
export function parseBasic(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  const un = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, " "));
    } catch {
      return s;
    }
  };
  return { user: un(decoded.slice(0, colon)), password: un(decoded.slice(colon + 1)) };
}

/** The token from `Authorization: Bearer x` (or GitHub's older `token x`), or null. */
export function bearerToken(header: string | undefined, schemes = ["bearer"]): string | null {
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header ?? "");
  if (!match || !schemes.includes(match[1]!.toLowerCase())) return null;
  return match[2]!;
}

const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `prefix` + `length` random base-62 characters (the shape of GitHub's gho_/ghu_/ghr_ tokens). */
export function randomToken(prefix: string, length = 36): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const b of bytes) out += BASE62[b % 62];
  return out;
}

export function randomDigits(length: number): string {
  let out = "";
  for (const b of randomBytes(length)) out += String(b % 10);
  return out;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

/** RFC 7636 §4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

export function sameSecret(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** A Map that forgets its oldest entries beyond `cap` (simulators must not grow without bound). */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly cap: number;
  constructor(cap: number) {
    super();
    this.cap = cap;
  }
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.cap) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(text);
}

export function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": contentType, ...headers });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location, "content-type": "text/html; charset=utf-8" });
  res.end(
    `<html><body>You are being <a href="${location.replace(/"/g, "&quot;")}">redirected</a>.</body></html>`,
  );
}

/** A clock tests can move forward (expiry without waiting): `now()` is wall time plus the offset. */
export class SimClock {
  #offsetMs = 0;
  now(): number {
    return Date.now() + this.#offsetMs;
  }
  advance(seconds: number): void {
    this.#offsetMs += seconds * 1000;
  }
}

/** Names of parameters whose values are secrets: `lastTokenRequest()` reports them as "[redacted]". */
export const SECRET_PARAMS = new Set([
  "client_secret",
  "code",
  "code_verifier",
  "refresh_token",
  "device_code",
  "access_token",
  "token",
]);

export function redactParams(params: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) out[k] = SECRET_PARAMS.has(k) ? "[redacted]" : v;
  return out;
}
