/**
 * The control API of `rap runtime serve`, for whoever plays the model: `GET /tools`, `POST /calls {operation,
 * arguments, group_id, user_id?, toolset?}` (an optional `Idempotency-Key` header, scoped to the thread: the same
 * key gives the same call), `GET /threads/<group_id>`. Every request needs
 * `Authorization: Bearer <token>` (the token is in a 0600 file named in the ready line). Errors are JSON
 * `{error, message}` (or a typed error's `{name, code, message}`), 4xx for anything the caller sent.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { AgentAuthError } from "../../core/errors.ts";
import { isTemporarilyUnavailable } from "../../db/index.ts";
import type { CallRecord, RapRuntime } from "../../rap/runtime/index.ts";
import { MAX_BODY_BYTES } from "../../rap/wire.ts";

const CallRequestSchema = z.object({
  operation: z.string().min(1).max(128),
  arguments: z.record(z.string(), z.unknown()).default({}),
  group_id: z.string().min(1).max(512),
  user_id: z.string().min(1).max(512).nullish(),
  toolset: z.string().max(128).optional(),
});

/** RFC 9110 token-ish: what a client library puts in Idempotency-Key (UUIDs, hashes), nothing invisible. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

type CallRequest = z.infer<typeof CallRequestSchema>;

/** The call id an Idempotency-Key stands for: a digest, so the key's characters never reach a tool. */
function callIdFor(key: string): string {
  return `call_k${createHash("sha256").update(key).digest("base64url").slice(0, 32)}`;
}

/**
 * A request whose key already made a call: 200 with that call's id when it asks for the same thing (the 202's
 * body again, `accepted` false only if the call already failed to reach its tool), 422 when the key is reused for
 * another request (the client's bug: retrying cannot help).
 */
function replay(res: ServerResponse, call: CallRecord, request: CallRequest): void {
  const same =
    call.operation === request.operation &&
    (call.userId ?? null) === (request.user_id ?? null) &&
    (request.toolset === undefined || request.toolset === call.toolset) &&
    isDeepStrictEqual(call.arguments, request.arguments);
  if (!same) {
    send(res, 422, {
      error: "idempotency_key_reused",
      message: `This Idempotency-Key already made call ${call.id} in thread ${JSON.stringify(call.groupId)} with another operation, arguments or user. Use a new key for a new call.`,
    });
    return;
  }
  send(res, 200, {
    groupId: call.groupId,
    id: call.id,
    accepted: call.status !== "failed",
    ...(call.requiresAuth ? { requiresAuth: call.requiresAuth } : {}),
  });
}

export async function handleControl(
  runtime: RapRuntime,
  token: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const presented = Buffer.from(String(req.headers.authorization ?? "").replace(/^Bearer /, ""));
  const expected = Buffer.from(token);
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    return send(
      res,
      401,
      {
        error: "unauthorized",
        message: "Send Authorization: Bearer <the token in controlTokenFile>.",
      },
      { "www-authenticate": 'Bearer realm="agentauth-rap-runtime"' },
    );
  }
  const path = requestPath(req.url);
  if (path === undefined) return badRequest(res, "The request target is not a valid path.");
  if (req.method === "GET" && path === "/tools") return send(res, 200, runtime.listTools());
  if (req.method === "GET" && path.startsWith("/threads/")) {
    let groupId: string;
    try {
      groupId = decodeURIComponent(path.slice("/threads/".length));
    } catch {
      return badRequest(res, "The thread id in the path is not valid percent-encoding.");
    }
    return send(res, 200, await runtime.thread(groupId));
  }
  if (req.method === "POST" && path === "/calls") {
    const body = await readJson(req);
    if (body === TOO_LARGE) {
      return send(res, 413, {
        error: "too_large",
        message: `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`,
      });
    }
    const parsed = CallRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return badRequest(
        res,
        `Not a call request: ${issue?.path.join(".") || "(body)"}: ${issue?.message ?? "invalid"}.`,
      );
    }
    const key = req.headers["idempotency-key"];
    if (key !== undefined && (typeof key !== "string" || !IDEMPOTENCY_KEY.test(key))) {
      return badRequest(
        res,
        "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice).",
      );
    }
    const request = parsed.data;
    // The key names the call (within its thread): a retry after a lost 202 finds the call the first one made.
    const id = key === undefined ? undefined : callIdFor(key);
    try {
      if (id !== undefined) {
        const earlier = await runtime.getCall(request.group_id, id);
        if (earlier) return replay(res, earlier, request);
      }
      const outcome = await runtime.invoke({
        operation: request.operation,
        arguments: request.arguments,
        groupId: request.group_id,
        userId: request.user_id ?? null,
        toolset: request.toolset,
        ...(id === undefined ? {} : { id }),
      });
      return send(res, 202, outcome);
    } catch (error) {
      if (isTemporarilyUnavailable(error)) return unavailable(res);
      if (id !== undefined && (error as { code?: unknown }).code === "rap_call_exists") {
        // The same key in flight at once: the other request made the call.
        const earlier = await runtime.getCall(request.group_id, id).catch(() => undefined);
        if (earlier) return replay(res, earlier, request);
      }
      if (error instanceof AgentAuthError) return send(res, 400, error.toJSON());
      throw error;
    }
  }
  send(res, 404, {
    error: "not_found",
    message: "Try GET /tools, POST /calls or GET /threads/<group_id>.",
  });
}

/** The path of a request target, or undefined when it does not parse (absolute-form garbage, `http://[`). */
function requestPath(target: string | undefined): string | undefined {
  try {
    return new URL(target ?? "/", "http://127.0.0.1").pathname;
  } catch {
    return undefined;
  }
}

const TOO_LARGE = Symbol("too large");

/**
 * The JSON body (undefined when it is not JSON), or TOO_LARGE past MAX_BODY_BYTES. An oversized body is read on
 * (not kept) so the client sees the 413 rather than a reset, up to a limit past which the connection is cut.
 */
async function readJson(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 8 * MAX_BODY_BYTES) return TOO_LARGE;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY_BYTES) return TOO_LARGE;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

function badRequest(res: ServerResponse, message: string): void {
  send(res, 400, { error: "invalid_request", message });
}

/**
 * The answer to a request that failed inside: 503 with Retry-After while the database is down or saturated (a
 * temporary state: retry), else 500. Never 400, which tells the client that retrying cannot help (issue 22 §3).
 */
export function sendFailure(res: ServerResponse, error: unknown): void {
  if (isTemporarilyUnavailable(error)) unavailable(res);
  else send(res, 500, { error: "internal_error", message: "Retry later." });
}

function unavailable(res: ServerResponse): void {
  send(
    res,
    503,
    {
      error: "database_unavailable",
      message:
        "The runtime's database is not answering right now; nothing was changed. Retry in a moment.",
    },
    { "retry-after": "1" },
  );
}

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
}
