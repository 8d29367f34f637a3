/** Microsoft Entra ID's published shapes, as the simulator serves them: per-tenant OpenID discovery (the multi-tenant issuer template), AADSTS error bodies, Graph error bodies, default users. */
import { randomUUID } from "node:crypto";
import type { SimUser } from "./sim-grants-b.ts";

export const LOGIN = "https://login.microsoftonline.com";
export const GRAPH = "https://graph.microsoft.com";
/** The Microsoft-account (consumer) tenant: /consumers discovery names it as the issuer's tenant. */
export const CONSUMERS_TID = "9188040d-6c67-4c5b-b112-36a304b66dad";
export const MULTI_TENANT = new Set(["common", "organizations", "consumers"]);

export const MICROSOFT_DEFAULT_USERS: SimUser[] = [
  {
    id: "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
    login: "alice@contoso.onmicrosoft.com",
    name: "Alice Example",
    email: "alice@contoso.com",
    avatar: "",
    extra: {
      tid: "72f988bf-86f1-41af-91ab-2d7cd011db47",
      oid: "00000000-0000-0000-66f3-3332eca7ea81",
    },
  },
];

/**
 * https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc#find-your-apps-openid-configuration-document-uri
 * and "Sample response": endpoints carry the tenant segment that was asked for; the issuer of `common` and
 * `organizations` is the literal template ".../{tenantid}/v2.0", of `consumers` the MSA tenant, of a tenant id that
 * id. The document has no code_challenge_methods_supported although PKCE is supported (auth-code doc).
 */
export function discovery(tenant: string): Record<string, unknown> {
  const t = tenant;
  const issuerTenant = t === "consumers" ? CONSUMERS_TID : MULTI_TENANT.has(t) ? "{tenantid}" : t;
  return {
    token_endpoint: `${LOGIN}/${t}/oauth2/v2.0/token`,
    token_endpoint_auth_methods_supported: [
      "client_secret_post",
      "private_key_jwt",
      "client_secret_basic",
    ],
    jwks_uri: `${LOGIN}/${t}/discovery/v2.0/keys`,
    response_modes_supported: ["query", "fragment", "form_post"],
    subject_types_supported: ["pairwise"],
    id_token_signing_alg_values_supported: ["RS256"],
    response_types_supported: ["code", "id_token", "code id_token", "id_token token"],
    scopes_supported: ["openid", "profile", "email", "offline_access"],
    issuer: `${LOGIN}/${issuerTenant}/v2.0`,
    request_uri_parameter_supported: false,
    userinfo_endpoint: `${GRAPH}/oidc/userinfo`,
    authorization_endpoint: `${LOGIN}/${t}/oauth2/v2.0/authorize`,
    device_authorization_endpoint: `${LOGIN}/${t}/oauth2/v2.0/devicecode`,
    http_logout_supported: true,
    frontchannel_logout_supported: true,
    end_session_endpoint: `${LOGIN}/${t}/oauth2/v2.0/logout`,
    claims_supported: [
      "sub",
      "iss",
      "cloud_instance_name",
      "cloud_instance_host_name",
      "cloud_graph_host_name",
      "msgraph_host",
      "aud",
      "exp",
      "iat",
      "auth_time",
      "acr",
      "nonce",
      "preferred_username",
      "name",
      "tid",
      "ver",
      "at_hash",
      "c_hash",
      "email",
    ],
    kerberos_endpoint: `${LOGIN}/${t}/kerberos`,
    tenant_region_scope: issuerTenant === "{tenantid}" ? null : "WW",
    cloud_instance_name: "microsoftonline.com",
    cloud_graph_host_name: "graph.windows.net",
    msgraph_host: "graph.microsoft.com",
    rbac_url: "https://pas.windows.net",
  };
}

/**
 * https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#error-response-1: error,
 * error_description starting "AADSTSnnnn: ", error_codes, timestamp, trace_id, correlation_id, error_uri.
 */
export function aadError(error: string, code: number, message: string): Record<string, unknown> {
  const trace = randomUUID();
  const correlation = randomUUID();
  const timestamp = new Date()
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
  return {
    error,
    error_description: `AADSTS${code}: ${message} Trace ID: ${trace} Correlation ID: ${correlation} Timestamp: ${timestamp}`,
    error_codes: [code],
    timestamp,
    trace_id: trace,
    correlation_id: correlation,
    error_uri: `${LOGIN}/error?code=${code}`,
  };
}

/** https://learn.microsoft.com/en-us/graph/errors: {"error": {"code", "message", "innerError": {...}}}. */
export function graphError(code: string, message: string): Record<string, unknown> {
  return {
    error: {
      code,
      message,
      innerError: {
        date: new Date().toISOString().slice(0, 19),
        "request-id": randomUUID(),
        "client-request-id": randomUUID(),
      },
    },
  };
}

/** Entra accepts http://localhost (and 127.0.0.1) redirect URIs with any port for native clients
 * (https://learn.microsoft.com/en-us/entra/identity-platform/reply-url#localhost-exceptions). */
export function matchesRedirect(registered: string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  try {
    const u = new URL(uri);
    if (u.protocol !== "http:" || !["localhost", "127.0.0.1"].includes(u.hostname)) return false;
    return registered.some((r) => {
      const g = new URL(r);
      return g.protocol === "http:" && g.hostname === u.hostname && g.pathname === u.pathname;
    });
  } catch {
    return false;
  }
}
