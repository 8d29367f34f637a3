/**
 * One MCP session with one user's access token, through the official client SDK over Streamable HTTP: connect, run
 * the request(s), end the session (HTTP DELETE), close. The transport's `fetch` is ours: it puts the bearer token on
 * requests to the MCP server's own URL only (fetch follows no redirect, and the SDK's own same-origin following is
 * refused, so the token never reaches another URL, not even another path of the origin), notes 401/403 answers (the
 * SDK's errors for them differ by version and by whether it has an auth provider; the status does not) per request,
 * so a failure is explained by its own request's answer, and stops
 * reading a response past `maxResponseBytes`. Every failure leaves as a typed error.
 */

import type { Client } from "@modelcontextprotocol/client";
import type { Secret } from "../../core/secret.ts";
import { readUnauthorized } from "../../mcp/client/index.ts";
import { TokenRejectedError } from "../tool/errors.ts";
import { McpCallError } from "./errors.ts";
import { loadMcpClientSdk } from "./sdk.ts";
import { carriesToken, cleanLine } from "./text.ts";

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

export interface McpSessionOptions {
  serverUrl: URL;
  /** Absent for an unauthenticated attempt (listing tools at startup). */
  token?: Secret;
  signal?: AbortSignal;
  maxResponseBytes?: number;
  /** What the call is, for messages ("whoami", "the tool list"). */
  label: string;
}

/** The MCP server answered 403 `insufficient_scope`: a new grant with these scopes is needed (step-up). */
export class ScopeRequired extends Error {
  readonly required: string[];
  constructor(required: string[]) {
    super("The MCP server needs more scopes.");
    this.required = required;
  }
}

/** What one request's own answer was: a refusal, no answer at all, a redirect. */
interface Answer {
  refusal?: { status: number; challenge: string | null };
  unreachable: boolean;
  redirected: boolean;
}

interface Observed {
  /**
   * The answer to the latest POST (the JSON-RPC messages `connect` and `use` send, one at a time): the request a
   * failure belongs to. The SDK's background GET stream and the closing DELETE keep their answers to themselves: a
   * 401 or a reset there said nothing about a later, unrelated failure (it used to explain it).
   */
  post: Answer;
  oversized: boolean;
  overflow: () => void;
}

const freshAnswer = (): Answer => ({ unreachable: false, redirected: false });

/** `use` gets the connected client and the signal to pass to its requests (the caller's, or ours on overflow). */
export async function withMcpSession<T>(
  options: McpSessionOptions,
  use: (client: Client, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const sdk = await loadMcpClientSdk();
  // An overflowing response errors its stream, which the SDK does not turn into a failed request (it waits for its
  // request timeout): the session aborts the request itself.
  const overflow = new AbortController();
  const signal = options.signal
    ? AbortSignal.any([options.signal, overflow.signal])
    : overflow.signal;
  const seen: Observed = {
    post: freshAnswer(),
    oversized: false,
    overflow: () => overflow.abort(),
  };
  const client = new sdk.Client({ name: "agentauth-rap-mcp-bridge", version: "1.0.0" });
  const transport = new sdk.StreamableHTTPClientTransport(options.serverUrl, {
    fetch: watchedFetch(options, seen),
  });
  try {
    await client.connect(transport, { signal });
    return await use(client, signal);
  } catch (error) {
    throw explain(error, options, seen, sdk.ProtocolError);
  } finally {
    // A stateful server keeps each session until told (HTTP DELETE with its id; no-op without one): one per RAP
    // call would pile up there. Bounded, since a server that does not answer must not hold the call; close() then
    // aborts what is left.
    await endSession(() => transport.terminateSession());
    await client.close().catch(() => {});
  }
}

const END_SESSION_MS = 2_000;

async function endSession(terminate: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, END_SESSION_MS);
  });
  try {
    await Promise.race([terminate().catch(() => {}), bound]);
  } finally {
    clearTimeout(timer);
  }
}

function watchedFetch(options: McpSessionOptions, seen: Observed) {
  const max = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const target = options.serverUrl.href;
  return async (input: string | URL, init?: RequestInit): Promise<Response> => {
    // The SDK follows a same-origin redirect itself, through this fetch: the token goes to the server URL only (its
    // audience), never to another path of the origin (another tenant, another resource).
    const answer = freshAnswer();
    if ((init?.method ?? "GET").toUpperCase() === "POST") seen.post = answer;
    if (new URL(input).href !== target) {
      answer.redirected = true;
      throw new Error("a request to another URL than the MCP server's was not sent");
    }
    const headers = new Headers(init?.headers);
    if (options.token) headers.set("authorization", `Bearer ${options.token.reveal()}`);
    let response: Response;
    try {
      response = await fetch(input, { ...init, headers, redirect: "manual" });
    } catch (error) {
      if (!(init?.signal?.aborted ?? false)) answer.unreachable = true;
      throw error;
    }
    if (response.status >= 300 && response.status < 400) answer.redirected = true;
    if (response.status === 401 || response.status === 403) {
      answer.refusal = {
        status: response.status,
        challenge: response.headers.get("www-authenticate"),
      };
    }
    if (!response.body) return response;
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > max) {
      seen.oversized = true;
      seen.overflow();
      await response.body.cancel();
      throw new Error("the MCP server's response is too large");
    }
    let read = 0;
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          read += chunk.byteLength;
          if (read > max) {
            seen.oversized = true;
            seen.overflow();
            controller.error(new Error("the MCP server's response is too large"));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** The one typed error a failed session ends with; the SDK's raw error stays the cause (never in the message). */
function explain(
  error: unknown,
  options: McpSessionOptions,
  seen: Observed,
  protocolError: { isInstance(value: unknown): boolean },
): unknown {
  if (error instanceof McpCallError || options.signal?.aborted) return error;
  const origin = options.serverUrl.origin;
  const what = options.label;
  if (seen.oversized) {
    return new McpCallError(
      "mcp_result_too_large",
      `${what}: the MCP server's answer is larger than this tool accepts (${options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES} bytes). Ask for less (a narrower query, fewer items).`,
      { cause: error },
    );
  }
  const answer = seen.post;
  if (answer.refusal?.status === 401) {
    return new TokenRejectedError("The MCP server refused the access token.", { cause: error });
  }
  if (answer.refusal?.status === 403) {
    const hints = hintsOf(answer.refusal.challenge, options.serverUrl);
    if (hints.error === "insufficient_scope" && hints.scope && hints.scope.length > 0) {
      return new ScopeRequired(hints.scope);
    }
    return new McpCallError(
      "mcp_refused",
      `The MCP server at ${origin} refused ${what} (HTTP 403). Check that your account may use it.`,
      { cause: error },
    );
  }
  if (answer.unreachable) {
    return new McpCallError(
      "mcp_unreachable",
      `The MCP server at ${origin} could not be reached, so ${what} did not run. Try again later.`,
      { cause: error },
    );
  }
  if (protocolError.isInstance(error)) {
    // A JSON-RPC error from the server (unknown tool, invalid params): its message is untrusted text, bounded. The
    // token check comes first: once cut, a token straddling the cut is no longer whole, and the tool kit's check
    // (whole secrets only) would pass its first part on.
    const raw = (error as Error).message ?? "";
    if (carriesToken(raw, options.token)) {
      return new McpCallError(
        "mcp_tool_error",
        `The MCP server refused ${what}; its message was withheld because it contained a credential. Report this to the tool's operator.`,
        { cause: error },
      );
    }
    const message = cleanLine(raw, 500);
    return new McpCallError(
      "mcp_tool_error",
      `The MCP server refused ${what}: ${message || "(no details given)"}`,
      { cause: error },
    );
  }
  return new McpCallError(
    "mcp_answer_malformed",
    `${what}: the MCP server at ${origin} answered with something that is not a valid MCP response${answer.redirected ? " (a redirect, which this tool does not follow)" : ""}. Try again later; if it keeps happening, tell the tool's operator.`,
    { cause: error },
  );
}

function hintsOf(challenge: string | null, serverUrl: URL): { error?: string; scope?: string[] } {
  try {
    return readUnauthorized(challenge, serverUrl);
  } catch {
    return {};
  }
}
