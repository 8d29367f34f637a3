/** Small shared helpers for helper B's provider simulators (Google, Microsoft, GitLab, Atlassian, Linear, Notion): a loopback HTTP server with a 64 KB body cap and no crash on handler errors, body and client-auth parsing, the redacted last-token-request record, bounded maps, a fault queue and a simulated clock; crypto helpers are re-exported from sim-crypto-b.ts. node: modules only; nothing from src/. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** Bodies above this answer 413 (sims.md: "ignore bodies > 64 KB with 413"). */
export const MAX_BODY_BYTES = 64 * 1024;
/** Maps of codes, grants and tokens never grow past this (oldest entries are dropped first). */
export const MAP_CAP = 10_000;

export interface SimRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (req: SimRequest, res: ServerResponse) => void | Promise<void>;

export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Starts an HTTP server on 127.0.0.1:0. A thrown handler error answers a generic 500 and never crashes the process. */
export async function listen(handler: Handler): Promise<Listening> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on("error", () => res.destroy());
    req.on("end", () => {
      if (tooLarge) {
        sendJson(res, 413, {
          error: "invalid_request",
          error_description: "Request body too large",
        });
        return;
      }
      const u = new URL(req.url ?? "/", "http://127.0.0.1");
      const simReq: SimRequest = {
        method: req.method ?? "GET",
        path: u.pathname,
        query: u.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      Promise.resolve()
        .then(() => handler(simReq, res))
        .catch(() => {
          if (!res.headersSent) sendJson(res, 500, { error: "server_error" });
          else res.end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    ...headers,
  });
  res.end(JSON.stringify(body));
}

export function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = "text/html; charset=utf-8",
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": contentType, ...headers });
  res.end(body);
}

export function redirect(res: ServerResponse, to: string): void {
  res.writeHead(302, { location: to });
  res.end();
}

/** Appends query parameters to a redirect URI, keeping any it already has (RFC 6749 §3.1.2). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

export function mediaType(headers: IncomingHttpHeaders): string {
  return (headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * Reads a token-style request body: form (RFC 6749 §4.1.3) and, when `allowJson`, a JSON object whose values are
 * strings (Atlassian and Notion document JSON bodies). Returns null for anything else (malformed, nested, wrong type).
 */
export function readParams(req: SimRequest, allowJson: boolean): Record<string, string> | null {
  const type = mediaType(req.headers);
  if (type === "application/x-www-form-urlencoded") {
    const out: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(req.body)) {
      if (k in out) return null; // RFC 6749 §3.2: parameters MUST NOT be included more than once
      out[k] = v;
    }
    return out;
  }
  if (allowJson && type === "application/json") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body);
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v === "string") out[k] = v;
      else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v);
      else return null;
    }
    return out;
  }
  return null;
}

export type ClientAuthMethod = "basic" | "post" | "none";
export interface ClientAuth {
  method: ClientAuthMethod;
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** Both Basic and body credentials, or an unparseable Basic header (RFC 6749 §2.3.1: use only one method). */
  malformed: boolean;
}

/** Client authentication per RFC 6749 §2.3.1: HTTP Basic (form-urlencoded id and secret) or the request body. */
export function readClientAuth(
  headers: IncomingHttpHeaders,
  params: Record<string, string>,
): ClientAuth {
  const h = headers.authorization;
  if (h?.toLowerCase().startsWith("basic ")) {
    const decoded = Buffer.from(h.slice(6).trim(), "base64").toString("utf8");
    const i = decoded.indexOf(":");
    if (i < 0 || params.client_secret !== undefined) {
      return { method: "basic", clientId: undefined, clientSecret: undefined, malformed: true };
    }
    const dec = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, " "));
      } catch {
        return s;
      }
    };
    return {
      method: "basic",
      clientId: dec(decoded.slice(0, i)),
      clientSecret: dec(decoded.slice(i + 1)),
      malformed: false,
    };
  }
  if (params.client_secret !== undefined) {
    return {
      method: "post",
      clientId: params.client_id,
      clientSecret: params.client_secret,
      malformed: false,
    };
  }
  return { method: "none", clientId: params.client_id, clientSecret: undefined, malformed: false };
}

/** Parameters whose values are secrets: recorded as "[redacted]" so tests can see they were sent, never what. */
const SECRET_PARAMS = new Set([
  "client_secret",
  "code",
  "code_verifier",
  "refresh_token",
  "device_code",
  "token",
  "access_token",
  "assertion",
  "client_assertion",
]);

export interface TokenRequestRecord {
  path: string;
  contentType: string;
  accept: string;
  auth: ClientAuthMethod;
  grantType: string | undefined;
  params: Record<string, string>;
}

export function recordTokenRequest(
  req: SimRequest,
  params: Record<string, string>,
  auth: ClientAuth,
): TokenRequestRecord {
  const safe: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) safe[k] = SECRET_PARAMS.has(k) ? "[redacted]" : v;
  return {
    path: req.path,
    contentType: mediaType(req.headers),
    accept: req.headers.accept ?? "",
    auth: auth.method,
    grantType: params.grant_type,
    params: safe,
  };
}

export function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (!h || !/^bearer /i.test(h)) return undefined;
  const t = h.slice(7).trim();
  return t.length > 0 && t.length <= 4096 ? t : undefined;
}

/** A Map that drops its oldest entries past `cap`, so a hostile client cannot grow a simulator without bound. */
export class BoundedMap<K, V> extends Map<K, V> {
  private readonly cap: number;
  constructor(cap = MAP_CAP) {
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

/** Fault kinds every simulator injects into its next token-endpoint answer(s) (sims.md). */
export type FaultKind = "html" | "no_token" | "rate_limit" | "server_error";

export class FaultQueue {
  private queue: FaultKind[] = [];
  push(kind: FaultKind, count = 1): void {
    for (let i = 0; i < count; i++) this.queue.push(kind);
  }
  take(): FaultKind | undefined {
    return this.queue.shift();
  }
}

/** Simulated time in seconds: real time plus an offset tests move with `advance()`, so expiry needs no waiting. */
export class SimClock {
  private offset = 0;
  now(): number {
    return Math.floor(Date.now() / 1000) + this.offset;
  }
  advance(seconds: number): void {
    this.offset += seconds;
  }
}

export * from "./sim-crypto-b.ts";
