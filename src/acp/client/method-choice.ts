/**
 * Which advertised auth method to run: the caller's choice, else the best fit for what the caller can do. Never a
 * type this client does not understand (v2: custom `_x` and future types are preserved but not run). Pure.
 */

import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { AcpMethodNotAdvertisedError, AcpMethodUnsupportedError, clip } from "./errors.ts";

export interface CallerAbilities {
  /** The caller hands URLs to a person (`onUrl`): URL-mode elicitation is advertised. */
  showUrl: boolean;
  /** The caller can run the agent in an interactive terminal: `auth.terminal` is advertised. */
  runTerminal: boolean;
  /** The caller can ask a person for a legacy `env_var` method's variables. */
  askEnvVars: boolean;
  /** Whether the agent's launch environment already holds a variable. */
  envHas: (name: string) => boolean;
}

export interface ChoiceContext {
  /** The agent says it is built on agentauth: its `agent` methods reach the person through its own prompt. */
  agentIsAgentauth: boolean;
}

/**
 * Preference, first match wins:
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
  const ranked: Array<(m: AdvertisedAuthMethod) => boolean> = [
    (m) => m.type === "agent" && (abilities.showUrl || context.agentIsAgentauth),
    (m) => m.type === "terminal" && abilities.runTerminal,
    (m) => m.type === "env_var" && envReady(m),
    (m) => m.type === "agent",
  ];
  for (const fits of ranked) {
    const method = methods.find(fits);
    if (method) return method;
  }
  throw new AcpMethodNotAdvertisedError(
    `The agent advertises no authentication method this client can run (${methods
      .map((m) => `${clip(m.id, 60)}: ${whyNot(m, abilities)}`)
      .join("; ")}).`,
  );
}

/** Why a method cannot run here ("runnable" when it can), for messages. */
export function whyNot(method: AdvertisedAuthMethod, abilities: CallerAbilities): string {
  if (method.type === "terminal" && !abilities.runTerminal)
    return "a terminal method, and no terminal is available";
  if (method.type === "env_var" && !abilities.askEnvVars) {
    const missing = method.vars
      .filter((v) => !v.optional && !abilities.envHas(v.name))
      .map((v) => v.name);
    return `a legacy env_var method needing ${missing.join(", ")}, and nobody can be asked for them`;
  }
  if (!KNOWN_TYPES.has(method.type))
    return `type "${clip(method.type, 40)}" is not one this client can run`;
  return "runnable";
}

const KNOWN_TYPES = new Set(["agent", "terminal", "env_var"]);

function requireRunnable(
  methods: readonly AdvertisedAuthMethod[],
  abilities: CallerAbilities,
  requested: string,
): AdvertisedAuthMethod {
  const method = methods.find((m) => m.id === requested);
  if (!method) {
    const ids = methods.map((m) => clip(m.id, 60)).join(", ") || "none";
    throw new AcpMethodNotAdvertisedError(
      `The agent does not advertise the auth method "${clip(requested, 60)}" (it advertises: ${ids}).`,
    );
  }
  const unsupported =
    !KNOWN_TYPES.has(method.type) || (method.type === "terminal" && !abilities.runTerminal);
  if (unsupported) {
    throw new AcpMethodUnsupportedError(
      `The auth method "${clip(method.id, 60)}" cannot run here: ${whyNot(method, abilities)}.`,
    );
  }
  return method;
}
