/** The agent's JSON-RPC error answers (the SDK's `RequestError`) and what they mean to the journey. */

import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { peerText } from "../../core/display.ts";
import { AUTH_REQUIRED } from "../wire.ts";
import { AcpAuthRequiredError, AcpRequestError } from "./errors.ts";

export { RequestError };

/**
 * What the agent said about an error beyond its message: `data.details` (qwen-code: "Missing API key … set
 * OPENAI_API_KEY"; claude-code-acp: "Method not implemented."), `data.message`, or `data` itself when it is a string
 * (codex-acp: "CODEX_API_KEY is not set"), as ` The agent says: "…"`, or "" when there is none. Sanitised and
 * clipped; nothing else of `data` is ever read.
 */
export function agentDetail(error: unknown): string {
  if (!(error instanceof RequestError)) return "";
  const data = error.data as { details?: unknown; message?: unknown } | string | undefined;
  if (typeof data === "string") return said(data);
  if (typeof data !== "object" || data === null) return "";
  return said(typeof data.details === "string" ? data.details : data.message);
}

function said(text: unknown): string {
  if (typeof text !== "string") return "";
  const clean = peerText(text, { max: 300 });
  return clean ? ` The agent says: "${clean}"` : "";
}

/** ACP `auth_required` (−32000): "Authentication required". The spec defines no `data`. */
export function isAuthRequired(error: unknown): boolean {
  return error instanceof RequestError && error.code === AUTH_REQUIRED;
}

/** JSON-RPC −32601: what SDK agents answer to a method they do not implement. */
export function isMethodNotFound(error: unknown): boolean {
  return error instanceof RequestError && error.code === -32601;
}

/** The agent's error answer to `method` as a typed error (message and detail quoted); anything else unchanged. */
export function requestError(method: string, error: unknown): unknown {
  if (!(error instanceof RequestError)) return error;
  if (error.code === AUTH_REQUIRED) {
    return new AcpAuthRequiredError(
      `The agent requires authentication for ${peerText(method, { max: 60 })}: ${peerText(error.message)}; sign in with login().${agentDetail(error)}`,
    );
  }
  return new AcpRequestError(
    `The agent answered ${peerText(method, { max: 60 })} with an error: ${peerText(error.message)} (JSON-RPC ${error.code}).${agentDetail(error)}`,
    { rpcCode: error.code, cause: error },
  );
}
