/** One resource's state from this client's side, pure: the vault's credential (never a secret) and this connection. */

import type { CredentialSummary } from "../../vault/index.ts";
import { remainingSeconds } from "./expires-in.ts";
import type { AhpResource } from "./resources.ts";

export interface ResourceStatus {
  id: string;
  resource: string;
  label: string;
  required: boolean;
  authorizationServers: string[];
  scopes: string[];
  agents: string[];
  credential: {
    present: boolean;
    status?: "active" | "login_required";
    vaultId?: string;
    subject?: string;
    issuer?: string;
    account?: string;
    /** ms since the epoch; absent when unknown. */
    expiresAt?: number;
    expiresIn?: number;
    expired?: boolean;
    refreshable?: boolean;
  };
  /**
   * The vault can authenticate this resource without a new sign-in: an active credential whose access token is
   * still valid, or can be refreshed. This, not `authenticated`, is what a person asks after `ahp login`.
   */
  ready: boolean;
  /** Whether *this* connection has authenticated; a status-only connection never has. */
  authenticated: boolean;
}

export function resourceStatus(
  resource: AhpResource,
  found: CredentialSummary | undefined,
  authenticated: boolean,
  now: number,
): ResourceStatus {
  const left = remainingSeconds(found?.expiresAt, now);
  const valid = found?.status === "active" && found.has.accessToken && left !== 0;
  const refreshable = found?.status === "active" && found.has.refreshToken;
  return {
    id: resource.id,
    resource: resource.resource,
    label: resource.label,
    required: resource.required,
    authorizationServers: resource.authorizationServers,
    scopes: resource.scopes,
    agents: resource.agents,
    credential: found
      ? {
          present: true,
          status: found.status,
          vaultId: found.id,
          subject: found.subject,
          issuer: found.issuer,
          account: found.account.label ?? found.account.email ?? found.account.name,
          expiresAt: found.expiresAt,
          expiresIn: left,
          expired: left === undefined ? undefined : left === 0,
          refreshable: found.has.refreshToken,
        }
      : { present: false },
    ready: Boolean(valid || refreshable),
    authenticated,
  };
}
