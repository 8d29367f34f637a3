/**
 * One neutral description of an auth problem or state change, mapped onto each dialect's wire shapes. Pure.
 *
 * official has no RFC 6750 error field (`data` is `{resources}`), so the RFC 6750 code travels in the error `message`;
 * the seed carries it structurally in `data.challenges[].error`.
 */

import {
  AhpErrorCodes,
  AhpMethods,
  type AuthChallenge,
  type AuthRequiredParamsOfficial,
  type AuthStateNotificationSeed,
  type BearerErrorCode,
  type JsonRpcError,
  ROOT_CHANNEL,
} from "../wire.ts";
import type { Dialect } from "./negotiate.ts";
import { type RegisteredResource, toProtectedResourceMetadata } from "./resources.ts";

/** Why a resource is not usable, in RFC 6750 terms. Never carries a token. */
export interface AuthProblem {
  resource: RegisteredResource;
  error: BearerErrorCode;
  description: string;
  /** Scopes needed, for `insufficient_scope` (RFC 6750 §3 `scope`). */
  scope?: string[];
}

/**
 * - `authenticated`: a token was accepted.
 * - `expired`: its lifetime (`expiresIn` or `exp`) ran out.
 * - `revoked`: the host noticed it is no longer valid (re-verification failed).
 * - `cleared`: the client sent an empty token.
 * - `required`: the host needs a credential it lacks (e.g. a newly registered agent's resource).
 */
export type AuthChange = "authenticated" | "expired" | "revoked" | "cleared" | "required";

export interface Notification {
  method: string;
  params: unknown;
}

export function authRequiredError(dialect: Dialect, problems: AuthProblem[]): JsonRpcError {
  const first = problems[0];
  const label = first ? (first.resource.resourceName ?? first.resource.resource) : "this command";
  if (dialect === "seed") {
    return {
      code: AhpErrorCodes.AuthRequired,
      message: "Authentication required",
      data: { challenges: problems.map(toChallenge) },
    };
  }
  const reason = first ? ` (${first.error}: ${first.description})` : "";
  return {
    code: AhpErrorCodes.AuthRequired,
    message: `Authentication required for ${label}${reason}`,
    data: { resources: problems.map((p) => toProtectedResourceMetadata(p.resource)) },
  };
}

export function toChallenge(problem: AuthProblem): AuthChallenge {
  return {
    schemeId: problem.resource.schemeId,
    error: problem.error,
    errorDescription: problem.description,
    ...(problem.scope?.length ? { scope: problem.scope.join(" ") } : {}),
  };
}

/** The notification announcing a change, or undefined when the dialect has none for it. */
export function authChangeNotification(
  dialect: Dialect,
  resource: RegisteredResource,
  change: AuthChange,
  problem?: AuthProblem,
): Notification | undefined {
  if (dialect === "seed") {
    const params: AuthStateNotificationSeed = {
      type: "notify/authRequired",
      schemeId: resource.schemeId,
      state: change === "cleared" ? "revoked" : change,
      ...(problem ? { challenge: toChallenge(problem) } : {}),
    };
    return { method: AhpMethods.seedAuthRequired, params };
  }
  // official: `expired` also covers a revoked token; the client that cleared its own credential already knows.
  const reason =
    change === "expired" || change === "revoked"
      ? "expired"
      : change === "required"
        ? "required"
        : undefined;
  if (!reason) return undefined;
  const params: AuthRequiredParamsOfficial = {
    channel: ROOT_CHANNEL,
    resource: toProtectedResourceMetadata(resource),
    reason,
  };
  return { method: AhpMethods.authRequired, params };
}

export function expiredProblem(resource: RegisteredResource): AuthProblem {
  return { resource, error: "invalid_token", description: "The access token expired." };
}

export function missingProblem(resource: RegisteredResource): AuthProblem {
  return {
    resource,
    error: "invalid_request",
    description: `No access token has been provided for ${resource.resourceName ?? resource.resource}.`,
  };
}

export function revokedProblem(resource: RegisteredResource): AuthProblem {
  return { resource, error: "invalid_token", description: "The access token was revoked." };
}
