/** The tool server's two reply shapes: a JSON body and an HTML page (with the page security headers). */

import type { ServerResponse } from "node:http";
import { PAGE_HEADERS, type Page } from "./pages.ts";

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  close = false,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    ...(close ? { connection: "close" } : {}),
    ...headers,
  });
  res.end(text);
}

export function page(
  res: ServerResponse,
  { status, html }: Page,
  headers: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, { ...PAGE_HEADERS, "content-length": Buffer.byteLength(html), ...headers });
  res.end(html);
}
