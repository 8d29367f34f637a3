/**
 * Microsoft Entra ID tenants: which `{tenant}` values a preset accepts, and which ID token issuer each admits.
 * Sources: "Microsoft identity platform and OAuth 2.0 authorization code protocol", `tenant` parameter
 * (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-auth-code-flow#request-an-authorization-code:
 * `common`, `organizations`, `consumers`, or a tenant id / domain name), "OpenID Connect on the Microsoft identity
 * platform", "Find your app's OpenID configuration document URI" (the multi-tenant document's issuer is the template
 * `https://login.microsoftonline.com/{tenantid}/v2.0`), and the ID token claims reference
 * (https://learn.microsoft.com/entra/identity-platform/id-token-claims-reference: `iss` names the signing tenant,
 * `tid` is that tenant's GUID, personal Microsoft accounts have tid 9188040d-6c67-4c5b-b112-36a304b66dad).
 */

import { ProviderApiError, ProviderConfigError } from "./errors.ts";

export const LOGIN = "https://login.microsoftonline.com";
/** The tenant of personal Microsoft accounts (ID token claims reference, `tid`). */
export const CONSUMERS_TID = "9188040d-6c67-4c5b-b112-36a304b66dad";
const MULTI = new Set(["common", "organizations", "consumers"]);
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DOMAIN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/i;

/** The tenant segment as configured (lower-cased); refuses anything that is not a keyword, GUID or domain. */
export function checkTenant(value: string | undefined): string {
  const tenant = (value ?? "common").trim().toLowerCase();
  if (MULTI.has(tenant) || GUID.test(tenant) || DOMAIN.test(tenant)) return tenant;
  throw new ProviderConfigError(
    "provider_option_invalid",
    `The Microsoft tenant ${JSON.stringify(String(value).slice(0, 100))} is not "common", "organizations", "consumers", a tenant id (GUID) or a domain (contoso.onmicrosoft.com).`,
  );
}

/**
 * The issuer an ID token must carry under this tenant configuration, or a typed refusal:
 * - a tenant id: exactly `LOGIN/<tid>/v2.0`;
 * - `consumers`: only personal accounts (tid = CONSUMERS_TID);
 * - `organizations`: only work or school accounts (any tid but CONSUMERS_TID);
 * - `common` or a domain name: the template with the token's own `tid` (a domain's GUID is not known up front; the
 *   token came from that tenant's own endpoints).
 * A `tid` that is not a GUID is refused rather than pasted into the issuer.
 */
export function expectedIssuer(tenant: string, claims: Record<string, unknown>): string {
  if (GUID.test(tenant)) return `${LOGIN}/${tenant}/v2.0`;
  const tid = typeof claims.tid === "string" ? claims.tid.toLowerCase() : "";
  if (!GUID.test(tid)) {
    throw new ProviderApiError(
      "provider_response_invalid",
      "Microsoft returned an ID token without a valid tenant id (tid claim); refusing it.",
    );
  }
  if (tenant === "consumers" && tid !== CONSUMERS_TID) {
    throw refused("a work or school account", "a personal Microsoft account");
  }
  if (tenant === "organizations" && tid === CONSUMERS_TID) {
    throw refused("a personal Microsoft account", "a work or school account");
  }
  return `${LOGIN}/${tid}/v2.0`;
}

function refused(got: string, want: string): ProviderApiError {
  return new ProviderApiError(
    "provider_account_refused",
    `Microsoft signed in ${got}, but this app is configured for ${want} only. Sign in again with ${want}.`,
  );
}

/** `https://login.microsoftonline.com/{tenant}/v2.0` → the tenant (the `{tenantid}` template → common). */
export function tenantOfIssuer(issuer: URL): string | undefined {
  if (issuer.origin !== LOGIN) return undefined;
  const match = /^\/([^/]+)\/v2\.0\/?$/.exec(issuer.pathname);
  if (!match) return undefined;
  const segment = decodeURIComponent(match[1] ?? "");
  if (segment === "{tenantid}") return "common";
  try {
    return checkTenant(segment);
  } catch {
    return undefined;
  }
}
