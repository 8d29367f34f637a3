/**
 * The callback receiver: a node:http handler for `POST {publicBaseUrl}/callback/{token}`. In order: route (404),
 * method (405), capability (403 forged or malformed, 410 expired), content type (415), size (413 above
 * MAX_BODY_BYTES), JSON, nesting depth (MAX_JSON_DEPTH) and CallbackMessageSchema (400), binding of the message's
 * ids to the capability (403), the optional Idempotency-Key header (400), then the thread's serial queue. Nothing here logs the URL or the token: log lines name the call.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import { isTemporarilyUnavailable } from "../../db/index.ts";
import {
  type CallbackMessage,
  CallbackMessageSchema,
  MAX_BODY_BYTES,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
} from "../wire.ts";
import type { Reply } from "./callbacks.ts";
import { CALLBACK_PATH_PREFIX, type CallClaims, verifyCallToken } from "./capability.ts";
import { ThreadBusyError } from "./errors.ts";
import { callDeliveryKey, IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from "./idempotency-key.ts";

// A body far beyond the limit is not drained to the end: past this, the connection is cut.
const DRAIN_LIMIT_BYTES = 8 * MAX_BODY_BYTES;

export interface CallbackReceiverOptions {
  key: Uint8Array;
  /** The path of the public base URL ("" or e.g. "/rap"): callbacks are under `${basePath}/callback/`. */
  basePath(): string;
  now(): number;
  logger: Logger;
  /**
   * Applies an authenticated message; calls `respond` once the change is committed. `deliveryKey`: the request's
   * Idempotency-Key scoped to the call of the capability (`callDeliveryKey`), when it had one (a key already
   * applied for that call is answered as a duplicate).
   */
  process(
    message: CallbackMessage,
    respond: (reply: Reply) => void,
    deliveryKey?: string,
  ): Promise<void>;
}

/** Pure: does the message name the same thread and call as the capability it came with? */
export function bindingProblem(message: CallbackMessage, claims: CallClaims): string | undefined {
  if (message.group_id !== claims.groupId) return "group_id does not match the callback URL";
  const id =
    message.type === "subscription_event"
      ? message.tool_call_id
      : message.type === "view_update"
        ? claims.id
        : message.id;
  if (id !== claims.id) {
    return `${message.type === "subscription_event" ? "tool_call_id" : "id"} does not match the callback URL`;
  }
  return undefined;
}

export function createCallbackHandler(
  options: CallbackReceiverOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(options, req, res).catch((error) => {
      options.logger.error("rap.callback.failed", { error });
      send(res, { status: 500, body: { error: "internal_error", message: "Retry later." } });
    });
  };
}

async function handle(
  options: CallbackReceiverOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { logger } = options;
  const prefix = `${options.basePath().replace(/\/+$/, "")}${CALLBACK_PATH_PREFIX}`;
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  const token = path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
  if (!token || token.includes("/")) {
    return reject(req, res, 404, "not_found", "No such endpoint.");
  }
  if (req.method !== "POST") {
    res.setHeader("allow", "POST");
    return reject(req, res, 405, "method_not_allowed", "Callbacks are POSTed.");
  }
  const check = verifyCallToken(options.key, token, options.now());
  if (!check.ok) {
    // An expired capability is ours (the MAC verified): 410 tells the tool to stop retrying. Anything else is a
    // forgery or garbage: 403, with nothing that helps a guesser.
    if (check.reason === "expired") {
      logger.warn("rap.callback.expired", { groupId: check.claims?.groupId, id: check.claims?.id });
      return reject(req, res, 410, "callback_expired", "This callback URL has expired.");
    }
    logger.warn("rap.callback.forbidden", { reason: check.reason });
    return reject(req, res, 403, "forbidden", "This callback URL is not valid.");
  }
  const claims = check.claims;
  const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json") {
    return reject(req, res, 415, "unsupported_media_type", "Send Content-Type: application/json.");
  }
  const body = await readBody(req);
  if (body === "too_large") {
    logger.warn("rap.callback.too_large", { groupId: claims.groupId, id: claims.id });
    return reject(
      req,
      res,
      413,
      "too_large",
      `Callback bodies are limited to ${MAX_BODY_BYTES} bytes.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    return reject(req, res, 400, "malformed_json", "The body is not JSON.");
  }
  // Invalid input, not a storage failure: a 4xx makes the tool stop retrying (RAP §Transport), a 500 would not.
  if (nestedDeeperThan(json, MAX_JSON_DEPTH)) {
    logger.warn("rap.callback.too_deep", { groupId: claims.groupId, id: claims.id });
    return reject(
      req,
      res,
      400,
      "too_deep",
      `The message is nested more than ${MAX_JSON_DEPTH} levels deep; flatten it and send it again.`,
    );
  }
  const parsed = CallbackMessageSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    logger.warn("rap.callback.invalid", { groupId: claims.groupId, id: claims.id });
    return reject(
      req,
      res,
      400,
      "invalid_message",
      `Not a RAP callback message: ${issue?.path.join(".") || "(body)"}: ${issue?.message ?? "invalid"}.`,
    );
  }
  const message = parsed.data;
  const mismatch = bindingProblem(message, claims);
  if (mismatch) {
    logger.warn("rap.callback.capability_mismatch", { groupId: claims.groupId, id: claims.id });
    return reject(req, res, 403, "capability_mismatch", `${mismatch}.`);
  }
  const delivery = parseIdempotencyKey(req.headers[IDEMPOTENCY_KEY_HEADER]);
  if (!delivery.ok) {
    logger.warn("rap.callback.idempotency_key_invalid", { groupId: claims.groupId, id: claims.id });
    return reject(
      req,
      res,
      400,
      "invalid_idempotency_key",
      `${delivery.problem}; fix it and send again.`,
    );
  }
  let replied = false;
  const respond = (reply: Reply) => {
    if (replied) return;
    replied = true;
    send(res, reply);
  };
  try {
    await options.process(
      message,
      respond,
      delivery.key === undefined ? undefined : callDeliveryKey(claims.id, delivery.key),
    );
  } catch (error) {
    if (error instanceof ThreadBusyError) {
      // The thread's lock stayed held elsewhere past the bounded wait; nothing ran. 503 + Retry-After: the tool
      // retries shortly (its delivery retries 503) instead of this instance waiting with a connection held.
      logger.warn("rap.callback.thread_busy", { groupId: claims.groupId, id: claims.id });
      respond({
        status: 503,
        headers: { "retry-after": "1" },
        body: {
          error: "thread_busy",
          message:
            "This thread is busy on another runtime instance; nothing was applied. Retry in a moment.",
        },
      });
      return;
    }
    // Nothing was committed (or the reply already went): a 5xx makes the tool retry, which RAP expects. A database
    // that is down says so with 503 + Retry-After (issue 22 §3); anything else is a 500.
    logger.error("rap.callback.failed", { groupId: claims.groupId, id: claims.id, error });
    if (isTemporarilyUnavailable(error)) {
      respond({
        status: 503,
        headers: { "retry-after": "1" },
        body: {
          error: "database_unavailable",
          message:
            "The runtime's database is not answering; nothing was applied. Retry in a moment.",
        },
      });
      return;
    }
    respond({ status: 500, body: { error: "internal_error", message: "Retry later." } });
    return;
  }
  respond({ status: 200, body: { ok: true } });
}

/** The body, or "too_large" once past MAX_BODY_BYTES (declared or counted); the rest is left to `discard`. */
function readBody(req: IncomingMessage): Promise<Buffer | "too_large"> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? Number.NaN);
    if (declared > MAX_BODY_BYTES) return resolve("too_large");
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      // Not a for-await loop: leaving one destroys the socket before the 413 can be written.
      req.off("data", onData);
      req.off("end", onEnd);
      resolve("too_large");
    };
    const onEnd = () => resolve(Buffer.concat(chunks));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", reject);
  });
}

function reject(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  error: string,
  message: string,
): void {
  send(res, { status, body: { error, message } });
  discard(req);
}

/**
 * Reads and drops what is left of a refused request so the client can read our answer instead of seeing a reset;
 * a body far past the limit gets its connection cut instead.
 */
function discard(req: IncomingMessage): void {
  if (req.readableEnded) return;
  let seen = 0;
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DRAIN_LIMIT_BYTES) req.socket.destroy();
  });
  req.on("error", () => {});
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent) return;
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...reply.headers,
  });
  res.end(text);
}
