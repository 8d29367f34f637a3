/**
 * What a method needs before `authenticate` and where a key given to the login goes: the agent's entry in
 * agent-quirks.ts when it has one, else what the method itself says (a legacy `env_var` method's `vars`; an `agent`
 * method marked `_meta["api-key"]`, or named like one, takes the key in `_meta`). Pure.
 */

import type { AgentProfile } from "./agent-profile.ts";
import { methodQuirk } from "./agent-quirks.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";

/** Where a key given to the login goes. */
export type KeyRoute =
  /**
   * `_meta["api-key"]`: a plain string (what gemini-cli reads, `typeof … === "string"`), or `{apiKey}` for an agent
   * built on agentauth (every version of the kit reads that shape). `standsFor`: the variable the key replaces.
   */
  | { kind: "meta"; shape: "string" | "object"; standsFor?: string }
  /** A variable of the agent's environment: the agent is restarted with it (codex, qwen, a legacy `env_var`). */
  | { kind: "env"; name: string };

export interface MethodNeeds {
  /** Undefined: the method takes no key. */
  route?: KeyRoute;
  /** Variables the agent's environment must hold, any one set sufficing; empty when nothing is known. */
  anyOf: readonly (readonly string[])[];
  /** The agent checks `anyOf` itself and says why it refuses (send `authenticate` anyway). */
  agentChecks: boolean;
  /** Where a key lives after the login, when known. */
  keyLives?: "process" | { file: string };
}

export function methodNeeds(profile: AgentProfile, method: AdvertisedAuthMethod): MethodNeeds {
  const quirk = methodQuirk(profile.agent?.name, method.id);
  const generic = genericNeeds(profile, method);
  if (!quirk) return generic;
  const route: KeyRoute | undefined = !quirk.key
    ? generic.route
    : "env" in quirk.key
      ? { kind: "env", name: quirk.key.env }
      : { kind: "meta", shape: "string", standsFor: quirk.key.standsFor };
  return {
    ...(route ? { route } : {}),
    anyOf: quirk.needs ?? generic.anyOf,
    agentChecks: quirk.agentChecks === true,
    ...(quirk.keyLives ? { keyLives: quirk.keyLives } : {}),
  };
}

function genericNeeds(profile: AgentProfile, method: AdvertisedAuthMethod): MethodNeeds {
  if (method.type === "env_var") {
    const required = method.vars.filter((v) => !v.optional);
    const secrets = required.filter((v) => v.secret);
    return {
      // One secret to fill: that is where a key goes. Two or more: a key alone cannot say which.
      ...(secrets.length === 1 && secrets[0]
        ? { route: { kind: "env", name: secrets[0].name } }
        : {}),
      anyOf: required.length > 0 ? [required.map((v) => v.name)] : [],
      agentChecks: false,
    };
  }
  if (method.type === "agent" && method.takesApiKey) {
    const shape = profile.capabilities.agentauth ? "object" : "string";
    return { route: { kind: "meta", shape }, anyOf: [], agentChecks: false };
  }
  return { anyOf: [], agentChecks: false };
}

/** Whether the environment (plus a key given to the login, standing for its variable) holds one set of `anyOf`. */
export function needsMet(
  needs: MethodNeeds,
  envHas: (name: string) => boolean,
  keyGiven: boolean,
): boolean {
  if (needs.anyOf.length === 0) return true;
  const keyStandsFor = !keyGiven
    ? undefined
    : needs.route?.kind === "env"
      ? needs.route.name
      : needs.route?.standsFor;
  return needs.anyOf.some((set) => set.every((name) => name === keyStandsFor || envHas(name)));
}

/** "GOOGLE_API_KEY, or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION". */
export function needsText(anyOf: MethodNeeds["anyOf"]): string {
  return anyOf.map((set) => set.join(" and ")).join(", or ");
}
