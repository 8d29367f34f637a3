/** node:http shells for the protection: a fetch-shaped handler served by `http.createServer`, and plain node handlers protected. */

import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { AuthInfo } from "@modelcontextprotocol/server";
import { runAsMcpCaller } from "./caller.ts";
import type { McpProtection } from "./protect.ts";

type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** The Web `Request` for a node request. The URL's origin is the Host the client used (loopback servers only trust it as a label). */
export function toWebRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const url = requestUrl(req);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const controller = new AbortController();
  req.once("close", () => {
    if (!req.complete) controller.abort();
  });
  return new Request(url, {
    method: req.method,
    headers,
    signal: controller.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * The request's URL. A Host header that is not a valid authority (a hostile client's `[`, spaces) is replaced by
 * `localhost` rather than failing: only the path matters to the protection, which never trusts the Host.
 */
function requestUrl(req: IncomingMessage): URL {
  const path = req.url?.startsWith("/") ? req.url : "/";
  return (
    URL.parse(path, `http://${req.headers.host ?? "localhost"}`) ??
    new URL(path, "http://localhost")
  );
}

/** Writes a Web `Response` (streamed: SSE answers stay open) to a node response; stops reading when the client leaves. */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once("close", () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away or the handler's stream failed: nothing more can be said on this response.
  }
  res.end();
}

/** Serves a fetch-shaped handler (e.g. `protection.fetch(createMcpHandler(...).fetch)`) with `http.createServer`. */
export function toNodeListener(handler: (request: Request) => Promise<Response>): NodeListener {
  return (req, res) => {
    void (async () => {
      let response: Response;
      try {
        response = await handler(toWebRequest(req));
      } catch {
        response = Response.json(
          {
            error: "server_error",
            error_description: "The MCP server failed to answer; retry or check its log.",
          },
          { status: 500 },
        );
      }
      await writeWebResponse(response, res);
    })();
  };
}

/**
 * Protects a plain node:http handler (an MCP server wired by hand, or the SDK 1.x node transport): the metadata and
 * the token check come first; the handler then runs as the verified caller, with `req.auth` set to the SDK's
 * `AuthInfo` (the property the SDK's node transports read).
 */
export function protectNodeHandler(
  protection: McpProtection,
  listener: NodeListener,
): NodeListener {
  return (req, res) => {
    void (async () => {
      const url = requestUrl(req).href;
      const served = protection.metadataResponse({ method: req.method ?? "GET", url });
      if (served) return writeWebResponse(served, res);
      const header = (name: string) => {
        const value = req.headers[name];
        return typeof value === "string" ? value : Array.isArray(value) ? value.join(", ") : null;
      };
      const auth = await protection.authenticateRequest({
        method: req.method ?? "GET",
        headers: { get: header },
      });
      if (!auth.ok) {
        req.resume();
        return writeWebResponse(auth.response, res);
      }
      if (auth.dpopNonce) res.setHeader("dpop-nonce", auth.dpopNonce);
      (req as IncomingMessage & { auth?: AuthInfo }).auth = auth.authInfo;
      runAsMcpCaller(auth.caller, () => listener(req, res));
    })().catch(() => {
      // The wrapped handler threw synchronously: answer rather than leave the client waiting or crash the process.
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
}
