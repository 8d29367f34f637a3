/**
 * The three requests only the runtime sends (RAP §Invocation, §Closing threads, §Cancelling tool calls), behind
 * the invocation authentication gate: `POST /invoke` (acknowledged 200 at once, judged later), `/close_thread`
 * and `/cancel_tool_call` (always 200 and empty). A refused request gets 401 and nothing else happens.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import {
  CANCEL_TOOL_CALL_PATH,
  CancelToolCallSchema,
  CLOSE_THREAD_PATH,
  CloseThreadSchema,
  MAX_BODY_BYTES,
} from "../wire.ts";
import type { CallRegistry } from "./calls.ts";
import type { InvocationGate, Refusal } from "./guard.ts";
import {
  jsonContentType,
  parseJson,
  type RawBodyResult,
  readBody,
  WRONG_CONTENT_TYPE,
} from "./http-body.ts";
import { json } from "./http-reply.ts";
import { judgeTarget } from "./invocation.ts";
import type { CallTarget } from "./messages.ts";

export const INVOKE_PATH = "/invoke";

export interface RuntimeRequestsOptions {
  gate?: InvocationGate;
  /** The host names an HMAC signature may cover for this request (see guard.ts `signedHosts`). */
  hostOf: (req: IncomingMessage) => string[];
  calls: CallRegistry;
  /** Judges an acknowledged invocation and runs it (intake.ts). */
  intake: (body: unknown, target: CallTarget) => void;
  callbackUrlAllowed: (url: URL) => boolean;
  /** Shares a cancellation with the other instances (durable state); awaited before the 200. */
  shareCancellation?: (groupId: string, id?: string) => Promise<void>;
  logger: Logger;
}

export function createRuntimeRequests(o: RuntimeRequestsOptions) {
  const { gate, hostOf, calls, intake, callbackUrlAllowed, logger } = o;

  /** The body, once the runtime is authenticated; a refusal otherwise (nothing else has happened yet). */
  async function authenticatedBody(req: IncomingMessage): Promise<RawBodyResult | Refusal> {
    if (gate) {
      const early =
        gate.early(req.headers) ??
        (gate.needsBody
          ? undefined
          : await gate.check(req.method ?? "", hostOf(req), req.url ?? "", req.headers, EMPTY));
      if (early) return early;
    }
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (!raw.ok || !gate?.needsBody) return raw;
    return (
      (await gate.check(req.method ?? "", hostOf(req), req.url ?? "", req.headers, raw.bytes)) ??
      raw
    );
  }

  function refuse(res: ServerResponse, refusal: Refusal, what: string): void {
    logger.info("rap.request.refused", {
      path: what,
      status: refusal.status,
      reason: refusal.body.reason,
    });
    json(res, refusal.status, refusal.body, true, refusal.headers);
  }

  async function invoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await authenticatedBody(req);
    if (!("ok" in raw)) return refuse(res, raw, INVOKE_PATH);
    const body = !raw.ok ? raw : jsonContentType(req) ? parseJson(raw.bytes) : WRONG_CONTENT_TYPE;
    if (!body.ok) {
      logger.info("rap.invoke.refused", { status: body.status });
      return json(res, body.status, { error: "invalid_request", message: body.message }, true);
    }
    const verdict = judgeTarget(body.value, callbackUrlAllowed);
    if (verdict.kind === "refuse") {
      logger.info("rap.invoke.refused", { status: 400 });
      return json(res, 400, { error: "invalid_request", message: verdict.message });
    }
    // RAP transport: acknowledge at once; everything else, errors included, goes to callback_url. The rest of the
    // judging (schema, operation, arguments) waits for a later turn, so acks queued behind this one go out first.
    res.writeHead(200, ACK_HEADERS).end();
    setImmediate(intake, body.value, verdict.target);
  }

  async function cancel(req: IncomingMessage, res: ServerResponse, thread: boolean): Promise<void> {
    // RAP: always 200 with an empty body, whether or not anything was cancelled; the body is untrusted.
    const raw = await authenticatedBody(req);
    if (!("ok" in raw)) return refuse(res, raw, thread ? CLOSE_THREAD_PATH : CANCEL_TOOL_CALL_PATH);
    const body = !raw.ok ? raw : jsonContentType(req) ? parseJson(raw.bytes) : WRONG_CONTENT_TYPE;
    const answer = () => {
      res
        .writeHead(200, { "content-length": "0", ...(body.ok ? {} : { connection: "close" }) })
        .end();
    };
    if (!body.ok) return answer();
    const parsed = thread
      ? CloseThreadSchema.safeParse(body.value)
      : CancelToolCallSchema.safeParse(body.value);
    if (!parsed.success) return answer();
    const groupId = parsed.data.thread_id;
    const id =
      "tool_call_id" in parsed.data && typeof parsed.data.tool_call_id === "string"
        ? parsed.data.tool_call_id
        : undefined;
    const count = calls.cancel(groupId, id);
    if (thread) logger.info("rap.thread.closed", { group_id: groupId, cancelled: count });
    else logger.info("rap.call.cancelled", { group_id: groupId, id, cancelled: count });
    // Shared before the answer, so a redirect arriving at another instance right after it is refused there too.
    try {
      await o.shareCancellation?.(groupId, id);
    } catch (error) {
      logger.error("rap.cancel.share_failed", { group_id: groupId, id, error });
    }
    answer();
  }

  return { invoke, cancel, refuse };
}

const EMPTY = new Uint8Array(0);
const ACK_HEADERS = { "content-length": "0" } as const;
