/**
 * What the login tells the person when an agent cannot be signed in the way it was asked, or when the key lives
 * somewhere they must know about: a method that needs variables nobody set, a method that shows nothing, a question
 * the agent asks on the ACP channel, where a key is kept afterwards. Built from the agent's name, the method, its
 * needs (method-needs.ts) and the measured quirks (agent-quirks.ts). Every piece of agent text is sanitised. Pure.
 */

import { peerText } from "../../core/display.ts";
import type { AgentProfile } from "./agent-profile.ts";
import { methodQuirk } from "./agent-quirks.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { type MethodNeeds, methodNeeds, needsText } from "./method-needs.ts";

/** How a key reached the agent, for `keyNote`. */
export type KeyDelivery = "meta" | "env-overlay" | "launch-env";

function id(method: AdvertisedAuthMethod): string {
  return peerText(method.id, { max: 60 });
}

/** "Other methods: codex-api-key (needs CODEX_API_KEY), openai-api-key (needs OPENAI_API_KEY)." or "". */
export function otherMethods(profile: AgentProfile, current: AdvertisedAuthMethod): string {
  const others = profile.authMethods
    .filter((m) => m.id !== current.id)
    .map((m) => {
      const needs = methodNeeds(profile, m);
      const what =
        needs.anyOf.length > 0 ? needsText(needs.anyOf) : needs.route ? "an API key" : "";
      return what ? `${id(m)} (needs ${what})` : undefined;
    })
    .filter((text): text is string => text !== undefined);
  return others.length > 0 ? ` Other methods: ${others.join("; ")}.` : "";
}

/** A key was given for a method that takes none: which methods do. */
export function noKeyTaken(
  name: string,
  profile: AgentProfile,
  method: AdvertisedAuthMethod,
): string {
  const taking = profile.authMethods.filter((m) => methodNeeds(profile, m).route).map(id);
  return (
    `${name}'s method "${id(method)}" (${peerText(method.name, { max: 80 })}) takes no API key, so the key was not ` +
    `sent; ${taking.length > 0 ? `the methods that take one: ${taking.join(", ")}` : `${name} advertises no method that takes one`}.`
  );
}

/**
 * A key was given for a method that runs as a login in the terminal: the program there asks for what it needs, and
 * nothing would hand it the key.
 */
export function keyForTerminal(
  name: string,
  profile: AgentProfile,
  method: AdvertisedAuthMethod,
): string {
  const taking = profile.authMethods
    .filter((m) => m.id !== method.id && !m.terminal && methodNeeds(profile, m).route)
    .map(id);
  return (
    `${name}'s method "${id(method)}" (${peerText(method.name, { max: 80 })}) runs as a login in the terminal, ` +
    "which asks for what it needs itself and would never see the key, so the key was not sent and nothing was run. " +
    "To use that method, sign in without the key and answer the login in the terminal" +
    (taking.length > 0
      ? `, or give the key to a method that reads it: ${taking.join(", ")}.`
      : `; ${name} advertises no other method that takes a key.`)
  );
}

/** The refusal before `authenticate` of a method whose variables are not set. */
export function missingNeeds(
  name: string,
  method: AdvertisedAuthMethod,
  needs: MethodNeeds,
): string {
  const key = needs.route ? ", or an API key given to the login" : "";
  return (
    `${name}'s method "${id(method)}" (${peerText(method.name, { max: 80 })}) needs ${needsText(needs.anyOf)} in ` +
    `the agent's environment${key}, and ${name} does not check that before accepting the method. Nothing was sent ` +
    "to it, so its current sign-in is unchanged."
  );
}

/** An `agent` login that has shown no URL for a while: what the person can do instead. */
export function stillWaiting(
  name: string,
  profile: AgentProfile,
  method: AdvertisedAuthMethod,
  waitedMs: number,
): string {
  const quirk = methodQuirk(profile.agent?.name, method.id);
  const why = quirk?.silent ?? "It may be waiting for a browser it opened on its own machine.";
  return (
    `${name} has shown no sign-in link after ${Math.round(waitedMs / 1000)} s for "${id(method)}". ${why}` +
    otherMethods(profile, method)
  );
}

/** The agent asked a question on stdout and reads stdin (the ACP channel): why it was stopped, and what works. */
export function promptedOnStdin(
  name: string,
  profile: AgentProfile,
  method: AdvertisedAuthMethod,
  prompt: string,
): string {
  const instead =
    methodQuirk(profile.agent?.name, method.id)?.instead ??
    "sign in with the agent's own command in a terminal, or choose another method.";
  return (
    `${name} asked "${prompt}" on its stdout and waits for the answer on its stdin, which carries ACP: the login ` +
    `with "${id(method)}" cannot finish over ACP. It was stopped before anything more was written to it. ` +
    `Instead, ${instead}${otherMethods(profile, method)}`
  );
}

/** Where the key is after a login, when the person must act on it; undefined when there is nothing to say. */
export function keyNote(
  name: string,
  needs: MethodNeeds,
  delivery: KeyDelivery | undefined,
  envHas: (variable: string) => boolean,
  methodId: string,
): string | undefined {
  const lives = needs.keyLives;
  if (lives === undefined) return undefined;
  if (typeof lives === "object") {
    return `${name} stored the key in ${lives.file}; logging out of ${name} deletes it.`;
  }
  // A key given to the login stands for the route's variable; without one, the agent signed in with whichever set
  // of its variables the environment holds (vertex-ai: GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION, not the
  // GOOGLE_API_KEY its key route names).
  const variable =
    delivery === "launch-env"
      ? (needs.anyOf.find((set) => set.every(envHas)) ?? needs.anyOf[0])?.join(" and ")
      : needs.route?.kind === "env"
        ? needs.route.name
        : (needs.route?.standsFor ?? needs.anyOf[0]?.[0]);
  if (!variable) return undefined;
  if (delivery === "meta") {
    // The agent started for the login (the CLI stops it as it ends) takes the key with it; what stays is the
    // method's selection (gemini-cli's settings.json), so the next start needs the variable.
    const selected = peerText(methodId, { max: 60 });
    return (
      `${name} did not store the key: only the agent process this login started holds it, and the key is gone once ` +
      `that process stops (agentauth acp login stops it as it ends). ${name} now starts with ${selected} ` +
      `selected: set ${variable} where your editor starts ${name}, or its sessions will fail asking for the key.`
    );
  }
  if (delivery === "env-overlay") {
    return (
      `${name} reads ${variable} from its environment at each start and keeps it nowhere: set ${variable} where ` +
      `your editor starts ${name}.`
    );
  }
  const it = variable.includes(" and ") ? "them" : "it";
  return `${name} reads ${variable} from its environment: keep ${it} set where your editor starts ${name}.`;
}
