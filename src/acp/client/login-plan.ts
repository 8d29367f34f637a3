/**
 * Before anything is sent: which method a login runs, how, what it needs, and where a key given to it goes. Refuses
 * a key for a method that takes none or runs as a terminal login (which would never read it), and a method whose variables are not set when the agent would accept it
 * anyway (gemini-cli's key methods: an empty `authenticate` succeeds, and switching methods clears its cached Google
 * sign-in). Pure.
 */

import type { AgentProfile } from "./agent-profile.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { AcpEnvVarsMissingError, AcpMethodUnsupportedError } from "./errors.ts";
import { keyForTerminal, missingNeeds, noKeyTaken } from "./login-advice.ts";
import { type CallerAbilities, chooseAuthMethod, runsAs } from "./method-choice.ts";
import { type KeyRoute, type MethodNeeds, methodNeeds, needsMet } from "./method-needs.ts";

export interface LoginPlan {
  method: AdvertisedAuthMethod;
  /** How the client runs it: `agent`, `terminal` or `env_var` (method-choice.ts `runsAs`). */
  kind: string;
  needs: MethodNeeds;
  /** Where the key given to the login goes; undefined without a key. */
  route?: KeyRoute;
  /**
   * Chosen without a method id or a key because the variables it needs happen to be set (method-choice.ts rank 0):
   * such a choice may replace a sign-in the agent has, with variables set for something else.
   */
  byEnvironment: boolean;
}

export function planLogin(
  profile: AgentProfile,
  abilities: CallerAbilities,
  request: { methodId?: string; keyGiven: boolean; name: string },
): LoginPlan {
  const { keyGiven, name } = request;
  // Without a method id, one that can sign in unattended comes first (method-choice.ts, rank 0).
  const ready = (m: AdvertisedAuthMethod) => {
    const needs = methodNeeds(profile, m);
    if (keyGiven) return needs.route !== undefined;
    return needs.anyOf.length > 0 && needsMet(needs, abilities.envHas, false);
  };
  const method = chooseAuthMethod(
    profile.authMethods,
    abilities,
    { agentIsAgentauth: profile.capabilities.agentauth, ready },
    request.methodId,
  );
  const kind = runsAs(method, abilities);
  const needs = methodNeeds(profile, method);
  if (keyGiven && !needs.route) {
    throw new AcpMethodUnsupportedError(noKeyTaken(name, profile, method));
  }
  // A method with a key route that runs as a terminal login (an api-key method with a legacy terminal descriptor):
  // the terminal login never reads the key, which would be dropped without a word.
  if (keyGiven && kind === "terminal") {
    throw new AcpMethodUnsupportedError(keyForTerminal(name, profile, method));
  }
  const unchecked = kind === "agent" && !needs.agentChecks;
  if (unchecked && !needsMet(needs, abilities.envHas, keyGiven)) {
    throw new AcpEnvVarsMissingError(missingNeeds(name, method, needs), needs.anyOf.flat(), {
      acceptsKey: needs.route !== undefined && needsMet(needs, () => false, true),
    });
  }
  const byEnvironment =
    request.methodId === undefined &&
    !keyGiven &&
    (kind === "agent" || kind === "env_var") &&
    ready(method);
  return {
    method,
    kind,
    needs,
    ...(keyGiven && needs.route ? { route: needs.route } : {}),
    byEnvironment,
  };
}
