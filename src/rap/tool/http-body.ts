/** Reading a request body with a hard size limit (refused from Content-Length, or cut off mid-stream), then JSON. */

import type { IncomingMessage } from "node:http";

export type RawBodyResult =
  | { ok: true; bytes: Buffer }
  | { ok: false; status: 400 | 413; message: string };

export type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 413 | 415; message: string };

/**
 * The body's bytes. Over `maxBytes` (declared or streamed) it stops buffering and answers 413 at once; the caller
 * should then answer with `connection: close` so the rest of the upload is never read.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<RawBodyResult> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(tooLarge(maxBytes));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: RawBodyResult) => {
      if (done) return;
      done = true;
      chunks.length = 0;
      resolve(result);
    };
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBytes) return finish(tooLarge(maxBytes));
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!done)
        finish({
          ok: true,
          bytes: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks),
        });
    });
    req.on("error", () =>
      finish({ ok: false, status: 400, message: "The request body could not be read." }),
    );
  });
}

/** RAP: the runtime MUST send application/json. Requiring it also keeps browsers from posting here cross-site
 * without a CORS preflight (a form or text/plain POST is refused). */
export function jsonContentType(req: IncomingMessage): boolean {
  const type = req.headers["content-type"];
  return type !== undefined && /^application\/json\s*(;|$)/i.test(type);
}

export const WRONG_CONTENT_TYPE = {
  ok: false,
  status: 415,
  message: "Send the body as Content-Type: application/json.",
} as const;

export function parseJson(bytes: Buffer): BodyResult {
  try {
    return { ok: true, value: JSON.parse(bytes.toString("utf8")) };
  } catch {
    return { ok: false, status: 400, message: "The body is not valid JSON." };
  }
}

/** The body parsed as JSON (content type checked first, so a wrong one is never read). */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  if (!jsonContentType(req)) return WRONG_CONTENT_TYPE;
  const raw = await readBody(req, maxBytes);
  return raw.ok ? parseJson(raw.bytes) : raw;
}

function tooLarge(maxBytes: number): RawBodyResult {
  return { ok: false, status: 413, message: `The body is larger than ${maxBytes} bytes.` };
}
