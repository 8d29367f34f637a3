/**
 * The removed `env_var` auth method type (auth-methods RFD before 2026-07-27; dirac and glm-acp-agent still send
 * it): the agent reads its variables at process start, so missing ones are asked for, kept as secrets in an overlay
 * on the agent's environment, and the agent is restarted with them before `authenticate` (as that RFD described).
 */

import { peerText } from "../../core/display.ts";
import { type Secret, secret } from "../../core/secret.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { AcpCancelledError, AcpEnvVarsMissingError } from "./errors.ts";
import type { ConnectAgentOptions } from "./options.ts";

export interface EnvVarContext {
  /** The agent's launch environment (overlay included). */
  env: NodeJS.ProcessEnv;
  ask: ConnectAgentOptions["onEnvVars"];
  /** Where supplied values are kept; revealed only into the agent's environment. */
  overlay: Map<string, Secret>;
  signal?: AbortSignal;
}

/**
 * Supplies the method's missing required variables into `overlay`. Returns true when something was supplied (the
 * agent must be restarted to see it), false when nothing was missing. Throws `AcpEnvVarsMissingError` when some are
 * still missing, `AcpCancelledError` on abort.
 */
export async function supplyEnvVars(
  method: AdvertisedAuthMethod,
  context: EnvVarContext,
): Promise<boolean> {
  const { env, ask, overlay, signal } = context;
  const missing = method.vars.filter((v) => !v.optional && !env[v.name]).map((v) => v.name);
  if (missing.length === 0) return false;
  const values = ask
    ? await ask({
        method: {
          id: method.id,
          name: method.name,
          description: method.description,
          link: method.link,
        },
        vars: method.vars,
        missing,
      })
    : undefined;
  if (signal?.aborted) throw new AcpCancelledError("The login was cancelled.");
  const declared = new Set(method.vars.map((v) => v.name));
  for (const [name, value] of Object.entries(values ?? {})) {
    if (!declared.has(name) || !value) continue;
    overlay.set(name, typeof value === "string" ? secret(value) : value);
  }
  const still = missing.filter((name) => !overlay.has(name));
  if (still.length > 0) {
    throw new AcpEnvVarsMissingError(
      `The auth method "${peerText(method.id, { max: 60 })}" needs ${still.join(", ")}; set ${still.length === 1 ? "it" : "them"} ` +
        "in the agent's environment or supply a value when asked.",
      still,
    );
  }
  return true;
}
