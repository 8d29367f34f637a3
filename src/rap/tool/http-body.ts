/** Reading a request body as JSON with a hard size limit: refused from Content-Length, or cut off mid-stream. */

import type { IncomingMessage } from "node:http";

export type BodyResult =
  | { ok: true; value: unknown }
  | { ok: false; status: 400 | 413 | 415; message: string };

/**
 * The body parsed as JSON. Over `maxBytes` (declared or streamed) it stops buffering and answers 413 at once;
 * the caller should then answer with `connection: close` so the rest of the upload is never read.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const type = req.headers["content-type"] ?? "";
  // RAP: the runtime MUST send application/json. Requiring it also keeps browsers from posting here cross-site
  // without a CORS preflight (a form or text/plain POST is refused).
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    return Promise.resolve({
      ok: false,
      status: 415,
      message: "Send the body as Content-Type: application/json.",
    });
  }
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) return Promise.resolve(tooLarge(maxBytes));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyResult) => {
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
      if (done) return;
      try {
        finish({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      } catch {
        finish({ ok: false, status: 400, message: "The body is not valid JSON." });
      }
    });
    req.on("error", () =>
      finish({ ok: false, status: 400, message: "The request body could not be read." }),
    );
  });
}

function tooLarge(maxBytes: number): BodyResult {
  return { ok: false, status: 413, message: `The body is larger than ${maxBytes} bytes.` };
}
