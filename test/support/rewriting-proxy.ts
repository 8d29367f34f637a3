/**
 * Test support: a loopback reverse proxy in front of a real server that forwards every request unchanged and lets a
 * test rewrite the JSON answers of chosen paths, to play what real servers do differently from the strict embedded
 * one (a registration answer without `client_secret_expires_at`, say) while the real server does the protocol work.
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";

export type JsonRewrite = (body: Record<string, unknown>) => Record<string, unknown>;

export interface RewritingProxy {
  origin: string;
  /** Paths seen, in order. */
  paths: string[];
  close(): Promise<void>;
}

export async function rewritingProxy(
  target: string,
  rewrites: Record<string, JsonRewrite>,
  /** Rewrites a redirect's `Location` (to play a server that sends no RFC 9207 `iss`, say). */
  location?: (url: URL) => URL,
): Promise<RewritingProxy> {
  const upstream = new URL(target);
  const state: RewritingProxy = { origin: "", paths: [], close: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", upstream);
    state.paths.push(url.pathname);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length")
        headers.set(name, value);
    }
    const answer = await fetch(url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
      redirect: "manual",
    });
    const rewrite = rewrites[url.pathname];
    let body = Buffer.from(await answer.arrayBuffer());
    if (rewrite && answer.headers.get("content-type")?.includes("json")) {
      body = Buffer.from(JSON.stringify(rewrite(JSON.parse(body.toString("utf8")))));
    }
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!["content-length", "content-encoding", "transfer-encoding"].includes(name))
        out[name] = value;
    });
    if (location && out.location) out.location = location(new URL(out.location, upstream)).href;
    res.writeHead(answer.status, out).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  after(() => state.close());
  return state;
}
