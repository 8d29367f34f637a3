/**
 * The `agent` login step and what follows it: `authenticate` (v1) / `auth/login` (v2) with the key where the agent
 * reads it, a word for the person when the agent shows nothing for a while, the agent's refusal in its own words, and
 * a confirming session for a key login whose state the agent does not report.
 */

import { peerText } from "../../core/display.ts";
import { API_KEY_META } from "../wire.ts";
import type { AgentProfile } from "./agent-profile.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import type { AuthStatus } from "./auth-status.ts";
import type { AgentConnection } from "./connection.ts";
import { AcpAgentPromptedError, AcpLoginError, AcpTimeoutError } from "./errors.ts";
import { type KeyDelivery, keyNote, promptedOnStdin, stillWaiting } from "./login-advice.ts";
import type { KeyRoute, MethodNeeds } from "./method-needs.ts";
import type { LoginOptions, LoginOutcome, LoginResult } from "./options.ts";
import { AUTH_METHODS, type ProtocolVersion } from "./protocol.ts";
import { agentDetail, isAuthRequired, RequestError } from "./rpc-errors.ts";

export interface AgentLoginStep {
  connection: AgentConnection;
  version: ProtocolVersion;
  method: AdvertisedAuthMethod;
  /** The agent's name for messages (agentDisplayName). */
  name: string;
  /** A key for `_meta["api-key"]`, in the shape the agent reads. */
  metaKey?: { route: Extract<KeyRoute, { kind: "meta" }>; value: string };
  timeoutMs: number;
  silentMs: number;
  /** How many URL prompts have reached the person so far (the journey counts them). */
  urlsShown: () => number;
  options: LoginOptions;
}

export async function sendAgentLogin(step: AgentLoginStep): Promise<void> {
  const { connection, method, name, options, metaKey } = step;
  const profile = connection.profile;
  const key = metaKey
    ? metaKey.route.shape === "string"
      ? metaKey.value
      : { apiKey: metaKey.value }
    : undefined;
  const params = { methodId: method.id, ...(key ? { _meta: { [API_KEY_META]: key } } : {}) };
  options.onWaiting?.({ id: method.id, name: method.name, type: method.type });
  const shownBefore = step.urlsShown();
  const silence = setTimeout(() => {
    if (step.urlsShown() !== shownBefore) return;
    options.onStillWaiting?.({
      method: { id: method.id, name: method.name },
      message: stillWaiting(name, profile, method, step.silentMs),
    });
  }, step.silentMs);
  silence.unref();
  try {
    await connection.call(AUTH_METHODS[step.version].login, params, {
      what: `the login with "${peerText(method.id, { max: 60 })}"`,
      signal: options.signal,
      timeoutMs: step.timeoutMs,
    });
  } catch (error) {
    const stray = connection.stray.note();
    if (error instanceof RequestError) {
      throw new AcpLoginError(
        `${name} refused the login with "${peerText(method.id, { max: 60 })}": ${peerText(error.message)} ` +
          `(JSON-RPC ${error.code}).${agentDetail(error)}${stray}`,
        { rpcCode: error.code },
      );
    }
    if (error instanceof AcpAgentPromptedError) {
      throw new AcpAgentPromptedError(
        promptedOnStdin(name, profile, method, error.prompt),
        error.prompt,
      );
    }
    if (error instanceof AcpTimeoutError && stray) {
      throw new AcpTimeoutError(`${error.message}${stray}`);
    }
    throw error;
  } finally {
    clearTimeout(silence);
  }
}

/** What a confirming session said: it opened, the agent refused it as unauthenticated, or it could not tell. */
export type SessionCheck =
  | { result: "opened" }
  | { result: "auth_required"; reason: string }
  | { result: "unknown"; reason: string };

/**
 * `session/new` (no MCP servers) after a key login the agent's state cannot confirm, then `session/close` where the
 * agent supports it, so no empty session is left in its history. Never throws for the agent's answer.
 */
export async function confirmBySession(
  connection: AgentConnection,
  profile: AgentProfile,
  cwd: string,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<SessionCheck> {
  let sessionId: unknown;
  try {
    const opened = (await connection.call(
      "session/new",
      { cwd, mcpServers: [] },
      { what: "session/new (to confirm the login)", ...options },
    )) as { sessionId?: unknown } | undefined;
    sessionId = opened?.sessionId;
  } catch (error) {
    if (!(error instanceof RequestError)) {
      if (error instanceof Error && (error as { code?: unknown }).code === "acp_cancelled")
        throw error;
      return {
        result: "unknown",
        reason: `a session to confirm it could not be opened: ${peerText((error as Error).message ?? error, { max: 200 })}`,
      };
    }
    const words = `${peerText(error.message, { max: 200 })}${agentDetail(error)}`;
    return isAuthRequired(error)
      ? { result: "auth_required", reason: `it refused a new session: ${words}` }
      : { result: "unknown", reason: `a session to confirm it failed: ${words}` };
  }
  if (typeof sessionId === "string" && profile.capabilities.sessionClose) {
    await connection
      .call("session/close", { sessionId }, { what: "session/close", ...options })
      .catch(() => {});
  }
  return { result: "opened" };
}

export interface SettleContext {
  name: string;
  /** The method that signed in. */
  methodId: string;
  needs: MethodNeeds;
  /** How the key reached the agent; undefined for a login without one. */
  delivery: KeyDelivery | undefined;
  verify: boolean;
  confirm: () => Promise<SessionCheck>;
  /** Whether the agent's launch environment holds a variable (which of the method's sets it signed in with). */
  envHas: (variable: string) => boolean;
}

/**
 * The outcome from the state asked for after the login, and for a key login the agent does not report, from a
 * confirming session. Never "signed in" on a state the agent did not report (issue 8 §3.8: gemini without a key,
 * opencode).
 */
export async function settleLogin(
  reported: AuthStatus,
  context: SettleContext,
): Promise<Pick<LoginOutcome, "status" | "outcome" | "note">> {
  const { needs } = context;
  const keyLogin = needs.route !== undefined || needs.anyOf.length > 0;
  let status = reported;
  let confirmed: SessionCheck | undefined;
  if (status.state === "unknown" && keyLogin && context.verify) {
    confirmed = await context.confirm();
    if (confirmed.result !== "opened") status = { ...status, reason: confirmed.reason };
  }
  const outcome: LoginResult =
    status.state === "authenticated"
      ? "signed_in"
      : status.state === "unauthenticated" || confirmed?.result === "auth_required"
        ? "still_signed_out"
        : confirmed?.result === "opened"
          ? "session_opened"
          : "accepted_unverified";
  const delivery = context.delivery ?? (keyLogin ? "launch-env" : undefined);
  const note =
    outcome === "still_signed_out"
      ? undefined
      : keyNote(context.name, needs, delivery, context.envHas, context.methodId);
  return { status, outcome, ...(note ? { note } : {}) };
}
