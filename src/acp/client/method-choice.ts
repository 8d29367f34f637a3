/**
 * Which advertised auth method to run: the caller's choice, else the best fit for what the caller can do. Never a
 * type this client does not understand (v2: custom `_x` and future types are preserved but not run). Pure.
 */

import { peerText } from "../../core/display.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { AcpMethodNotAdvertisedError, AcpMethodUnsupportedError } from "./errors.ts";

export interface CallerAbilities {
  /** The caller hands URLs to a person (`onUrl`): URL-mode elicitation is advertised. */
  showUrl: boolean;
  /** The caller can run the agent in an interactive terminal: `auth.terminal` is advertised. */
  runTerminal: boolean;
  /**
   * Why terminal logins cannot run right now although the caller has a runner (e.g. stdin is not a TTY); a function
   * gets the method and whether it will need the person's consent (see `ConnectAgentOptions.terminalRefusal`).
   */
  terminalRefusal?: string | ((method: AdvertisedAuthMethod, needsConsent: boolean) => string);
  /** The caller can ask a person for a legacy `env_var` method's variables. */
  askEnvVars: boolean;
  /** Whether the agent's launch environment already holds a variable. */
  envHas: (name: string) => boolean;
}

export interface ChoiceContext {
  /** The agent says it is built on agentauth: its `agent` methods reach the person through its own prompt. */
  agentIsAgentauth: boolean;
  /**
   * The method can sign in without a person: the variables it needs are set, or a key was given and it takes one
   * (method-needs.ts). Such a method comes first.
   */
  ready?: (method: AdvertisedAuthMethod) => boolean;
}

/**
 * Preference, first match wins:
 * 0. an `agent` or legacy `env_var` method that is `ready` (codex-acp with CODEX_API_KEY set signs in with
 *    `codex-api-key`, not with `chatgpt`, which waits silently for a browser);
 * 1. an `agent` method, when the caller can show the URL the agent sends, or the agent is ours;
 * 2. a `terminal` method, when the caller can run a terminal (the spec's choice for agents with a TUI login);
 * 3. a legacy `env_var` method, when the caller can ask for the variables or the environment already has them;
 * 4. any `agent` method: the agent may still complete the login itself (open a browser on its machine).
 */
export function chooseAuthMethod(
  methods: readonly AdvertisedAuthMethod[],
  abilities: CallerAbilities,
  context: ChoiceContext,
  requested?: string,
): AdvertisedAuthMethod {
  if (requested !== undefined) return requireRunnable(methods, abilities, requested);
  if (methods.length === 0) {
    throw new AcpMethodNotAdvertisedError(
      "The agent advertises no authentication methods; sign in with the agent's own tools.",
    );
  }
  const envReady = (m: AdvertisedAuthMethod) =>
    abilities.askEnvVars || m.vars.every((v) => v.optional || abilities.envHas(v.name));
  const terminalReady = abilities.runTerminal && !abilities.terminalRefusal;
  const kind = (m: AdvertisedAuthMethod) => runsAs(m, abilities);
  const ranked: Array<(m: AdvertisedAuthMethod) => boolean> = [
    (m) => (kind(m) === "agent" || kind(m) === "env_var") && context.ready?.(m) === true,
    (m) => kind(m) === "agent" && (abilities.showUrl || context.agentIsAgentauth),
    (m) => kind(m) === "terminal" && terminalReady,
    (m) => kind(m) === "env_var" && envReady(m),
    (m) => kind(m) === "agent",
  ];
  for (const fits of ranked) {
    const method = methods.find(fits);
    if (method) return method;
  }
  const refused = methods.find((m) => kind(m) === "terminal" && abilities.runTerminal);
  if (refused && abilities.terminalRefusal) {
    throw new AcpMethodUnsupportedError(
      `The auth method "${peerText(refused.id, { max: 60 })}" is a terminal login and cannot run here: ${refusal(refused, abilities)}.`,
    );
  }
  throw new AcpMethodNotAdvertisedError(
    `The agent advertises no authentication method this client can run (${methods
      .map((m) => `${peerText(m.id, { max: 60 })}: ${whyNot(m, abilities)}`)
      .join("; ")}).`,
  );
}

/** Why a method cannot run here ("runnable" when it can), for messages. */
export function whyNot(method: AdvertisedAuthMethod, abilities: CallerAbilities): string {
  const kind = runsAs(method, abilities);
  if (kind === "terminal" && !abilities.runTerminal)
    return "a terminal method, and no terminal is available";
  if (kind === "terminal" && abilities.terminalRefusal) return refusal(method, abilities);
  if (method.type === "env_var" && !abilities.askEnvVars) {
    const missing = method.vars
      .filter((v) => !v.optional && !abilities.envHas(v.name))
      .map((v) => v.name);
    return `a legacy env_var method needing ${missing.join(", ")}, and nobody can be asked for them`;
  }
  if (!KNOWN_TYPES.has(method.type))
    return `type "${peerText(method.type, { max: 40 })}" is not one this client can run`;
  return "runnable";
}

const KNOWN_TYPES = new Set(["agent", "terminal", "env_var"]);

function refusal(method: AdvertisedAuthMethod, abilities: CallerAbilities): string {
  const reason = abilities.terminalRefusal;
  return typeof reason === "function"
    ? reason(method, terminalNeedsConsent(method))
    : (reason ?? "");
}

/**
 * Whether running the method as a terminal login will need the person's consent: a command the agent named itself
 * (legacy `_meta["terminal-auth"]`) or variables the agent chose (terminal-login.ts, `needsConsent`).
 */
export function terminalNeedsConsent(method: AdvertisedAuthMethod): boolean {
  const legacy = method.terminal;
  if (legacy?.style === "terminal-auth") return true;
  return Object.keys((legacy ?? method).env).length > 0;
}

/**
 * How the client runs a method: its type, except that an `agent` method carrying a legacy terminal descriptor runs
 * as a terminal login for a caller with a terminal runner (claude-code-acp answers `authenticate` with "Method not
 * implemented", opencode accepts it and does nothing: the descriptor is the only working path).
 */
export function runsAs(method: AdvertisedAuthMethod, abilities: CallerAbilities): string {
  return method.terminal && abilities.runTerminal ? "terminal" : method.type;
}

function requireRunnable(
  methods: readonly AdvertisedAuthMethod[],
  abilities: CallerAbilities,
  requested: string,
): AdvertisedAuthMethod {
  const method = methods.find((m) => m.id === requested);
  if (!method) {
    const ids = methods.map((m) => peerText(m.id, { max: 60 })).join(", ") || "none";
    throw new AcpMethodNotAdvertisedError(
      `The agent does not advertise the auth method "${peerText(requested, { max: 60 })}" (it advertises: ${ids}).`,
    );
  }
  const kind = runsAs(method, abilities);
  const unsupported =
    !KNOWN_TYPES.has(method.type) ||
    (kind === "terminal" && (!abilities.runTerminal || Boolean(abilities.terminalRefusal)));
  if (unsupported) {
    throw new AcpMethodUnsupportedError(
      `The auth method "${peerText(method.id, { max: 60 })}" cannot run here: ${whyNot(method, abilities)}.`,
    );
  }
  return method;
}
