/** The console's small HTTP vocabulary: answers with the security headers, typed JSON errors, capped JSON bodies. */

import type { IncomingMessage, ServerResponse } from "node:http";
import { ConsoleError } from "./errors.ts";
import { MAX_BODY_BYTES, SECURITY_HEADERS } from "./security.ts";
import type { ConsoleErrorBody } from "./wire.ts";

export function send(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": contentType,
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  });
  response.end(body);
}

export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  send(response, status, "application/json; charset=utf-8", JSON.stringify(value), headers);
}

export function sendError(
  response: ServerResponse,
  error: { status: number; code: string; message: string },
): void {
  const body: ConsoleErrorBody = { error: { code: error.code, message: error.message } };
  sendJson(response, error.status, body);
}

/** Reads at most `MAX_BODY_BYTES` and parses a JSON object; anything else is a typed 400 or 413. */
export async function readJsonObject(request: IncomingMessage): Promise<Record<string, unknown>> {
  const tooLarge = new ConsoleError(
    413,
    "console_body_too_large",
    `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
  );
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
    request.resume();
    throw tooLarge;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      request.resume();
      throw tooLarge;
    }
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new ConsoleError(400, "console_body_invalid", "The request body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConsoleError(400, "console_body_invalid", "The request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A string field of a request body, bounded; undefined when absent and not required. */
export function stringField(
  body: Record<string, unknown>,
  name: string,
  options: { required?: boolean; max?: number } = {},
): string | undefined {
  const value = body[name];
  if (value === undefined && !options.required) return undefined;
  if (
    typeof value !== "string" ||
    value.length === 0 ||
    value.length > (options.max ?? 200) ||
    CONTROL.test(value)
  ) {
    throw new ConsoleError(
      400,
      "console_field_invalid",
      `The field "${name}" must be a short string.`,
    );
  }
  return value;
}
