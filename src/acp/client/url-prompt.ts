/**
 * Where the agent tells the person to go during an `agent`-type login, from either carrier: URL-mode
 * `elicitation/create` (ACP elicitation RFD, stabilised 2026-07-22) or our `_agentauth/login_prompt` extension
 * notification (wire.ts). Both become one `UrlPrompt` for the caller's `onUrl` hook. Pure.
 */

import { peerText, peerUrl } from "../../core/display.ts";
import { LoginPromptSchema } from "../wire.ts";
import { isRecord } from "./auth-methods.ts";

export interface UrlPrompt {
  /** https, or http on a loopback host only (the same policy as the OAuth engine). */
  url: string;
  /** The agent's words for the person; control characters removed. */
  message: string;
  /** A device flow's user code (the person types it; not a secret). */
  userCode?: string;
  expiresInSeconds?: number;
  methodId?: string;
  via: "elicitation" | "login_prompt";
}

/** URL-mode `elicitation/create` params, or undefined for other modes and URLs a person should not be sent to. */
export function promptFromElicitation(params: unknown): UrlPrompt | undefined {
  if (!isRecord(params) || params.mode !== "url" || typeof params.url !== "string")
    return undefined;
  if (!isOpenableUrl(params.url)) return undefined;
  return {
    // The parsed href: percent-encodes control characters, so a hostile agent cannot put escapes on a terminal.
    url: peerUrl(params.url) as string,
    message: peerText(params.message ?? "", { max: 1000, multiline: true }),
    via: "elicitation",
  };
}

/** `_agentauth/login_prompt` params (`LoginPromptSchema`), or undefined when malformed or not openable. */
export function promptFromLoginPrompt(params: unknown): UrlPrompt | undefined {
  const parsed = LoginPromptSchema.safeParse(params);
  if (!parsed.success || !isOpenableUrl(parsed.data.url)) return undefined;
  const { url, message, userCode, expiresInSeconds, methodId } = parsed.data;
  return {
    url: peerUrl(url) as string,
    message: peerText(message, { max: 1000, multiline: true }),
    ...(userCode ? { userCode: peerText(userCode, { max: 64 }) } : {}),
    ...(expiresInSeconds ? { expiresInSeconds } : {}),
    methodId,
    via: "login_prompt",
  };
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A page a person may be sent to: https anywhere, http only on loopback (RFC 8252 §7.3 redirects, local
 * development servers). Never `javascript:`, `file:`, `data:` or custom schemes an agent could abuse.
 */
export function isOpenableUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  return (
    parsed.protocol === "https:" || (parsed.protocol === "http:" && LOOPBACK.has(parsed.hostname))
  );
}
