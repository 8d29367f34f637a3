/**
 * The `authenticate` request, pure: its params in each dialect and how its answer reads. official carries `expiresIn`
 * (seconds left at send time, omitted when unknown) and the granted scopes the host advertised; the seed's shape
 * has neither, so neither is sent.
 */

import type { AccountInfo, CredentialRecord } from "../../vault/index.ts";
import { AuthenticateResultSeedSchema, ROOT_CHANNEL } from "../wire.ts";
import { AhpProtocolError } from "./errors.ts";
import type { AhpResource, Dialect } from "./resources.ts";

/** What one successful `authenticate` achieved; no token. */
export interface AuthenticationOutcome {
  id: string;
  resource: string;
  /** The `expiresIn` sent (official), or the seconds left when sent (seed); undefined when the expiry is unknown. */
  expiresIn?: number;
  subject: string;
  issuer: string;
  account: AccountInfo;
}

export function authenticateParams(
  dialect: Dialect,
  resource: AhpResource,
  record: CredentialRecord,
  expiresIn: number | undefined,
): Record<string, unknown> {
  const token = record.tokens.accessToken?.reveal() ?? "";
  if (dialect === "seed") return { schemeId: resource.id, scheme: "bearer", token };
  const granted = resource.scopes.length
    ? record.scopes.filter((scope) => resource.scopes.includes(scope))
    : [];
  return {
    channel: ROOT_CHANNEL,
    resource: resource.id,
    token,
    ...(expiresIn !== undefined && expiresIn >= 1 ? { expiresIn } : {}),
    ...(granted.length ? { scopes: granted } : {}),
  };
}

/** official answers `{}` (failure is an error answer); the seed answers `{authenticated: boolean}`. */
export function readAuthenticateResult(dialect: Dialect, result: unknown): boolean {
  if (dialect === "official") {
    if (typeof result !== "object" || result === null || Array.isArray(result)) {
      throw new AhpProtocolError("The host's authenticate answer is not an object.");
    }
    return true;
  }
  const parsed = AuthenticateResultSeedSchema.safeParse(result);
  if (!parsed.success)
    throw new AhpProtocolError("The host's authenticate answer (seed) is malformed.");
  return parsed.data.authenticated;
}

export function outcomeOf(
  resource: AhpResource,
  record: CredentialRecord,
  expiresIn: number | undefined,
): AuthenticationOutcome {
  return {
    id: resource.id,
    resource: resource.resource,
    expiresIn,
    subject: record.subject,
    issuer: record.issuer,
    account: record.account,
  };
}
