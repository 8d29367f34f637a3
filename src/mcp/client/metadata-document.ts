/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP authorization 2026-07-28,
 * "Client ID Metadata Documents"): the client's id is an HTTPS URL, and the authorization server fetches the
 * client's metadata from it. Pure: this builds the JSON document a host publishes at that URL, and checks such a URL,
 * so a host gets both right before an authorization server refuses them.
 */

import { McpAuthError } from "./errors.ts";

/** The redirect the provider's loopback listener uses (any port: RFC 8252 §7.3). */
export const LOOPBACK_REDIRECT_URI = "http://127.0.0.1/callback";
export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface ClientMetadataDocumentOptions {
  /** The URL the document is served at; it is also the client_id. HTTPS, with a path, no fragment. */
  clientId: string;
  clientName: string;
  /** Default: the provider's loopback redirect, `http://127.0.0.1/callback` (matched on any port). */
  redirectUris?: readonly string[];
  /** Also allow the device flow (RFC 8628 grant type). Default false. */
  deviceFlow?: boolean;
  clientUri?: string;
  logoUri?: string;
  softwareId?: string;
  softwareVersion?: string;
  /** Accept an `http://` client_id on a loopback host (127.0.0.1, [::1], localhost): tests and local development. */
  allowInsecure?: boolean;
}

/** The document as the draft and RFC 7591 name its fields. No secret: a metadata document is public. */
export interface ClientMetadataDocument {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: ["code"];
  token_endpoint_auth_method: "none";
  application_type: "native" | "web";
  client_uri?: string;
  logo_uri?: string;
  software_id?: string;
  software_version?: string;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

function invalid(message: string): McpAuthError {
  return new McpAuthError("client_metadata_invalid", message);
}

/**
 * Checks a client_id URL the way the draft (§3) asks: https (http only on a loopback host with `allowInsecure`),
 * a path, no dot segments, no fragment, no user or password. Returns the URL as given (it is compared exactly).
 */
export function checkClientIdUrl(value: string, options: { allowInsecure?: boolean } = {}): string {
  // Compared byte for byte by the authorization server: no spaces or backslashes the URL parser would quietly fix.
  const url = typeof value === "string" && !/[\s\\]/.test(value) ? URL.parse(value) : null;
  if (!url) throw invalid("The client metadata URL must be an absolute https URL.");
  const insecureOk =
    options.allowInsecure === true && url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !insecureOk) {
    throw invalid(
      "The client metadata URL must use https (http is accepted only on a loopback host, with allowInsecure, for tests).",
    );
  }
  if (value.includes("#")) throw invalid("The client metadata URL must not have a fragment.");
  if (url.username || url.password) {
    throw invalid("The client metadata URL must not carry a user name or password.");
  }
  const rawPath =
    value
      .slice(url.protocol.length + 2)
      .replace(/^[^/?]*/, "")
      .split("?")[0] ?? "";
  if (rawPath === "" || rawPath === "/") {
    throw invalid(
      "The client metadata URL needs a path (e.g. https://app.example/oauth/client.json).",
    );
  }
  if (rawPath.split("/").some((s) => /^(\.|%2e){1,2}$/i.test(s))) {
    throw invalid("The client metadata URL must not have . or .. path segments.");
  }
  return value;
}

function checkRedirectUri(value: string): void {
  const url = typeof value === "string" ? URL.parse(value) : null;
  if (!url || url.hash || value.includes("#")) {
    throw invalid("Each redirect URI must be an absolute URL without a fragment.");
  }
  // Loopback http is how native apps receive the redirect (RFC 8252 §7.3); elsewhere http leaks the code.
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw invalid("A redirect URI over http must be on a loopback host (127.0.0.1 or [::1]).");
  }
  if (url.protocol === "javascript:" || url.protocol === "data:") {
    throw invalid("A redirect URI must not be a javascript: or data: URL.");
  }
}

/**
 * The JSON document a host serves at `clientId` (with `content-type: application/json`), for authorization servers
 * that advertise `client_id_metadata_document_supported`. Public client: no secret, `token_endpoint_auth_method`
 * `none`, PKCE. Loopback redirect URIs make it a native client, so the port may vary (RFC 8252 §7.3).
 *
 * @example
 * app.get("/oauth/client.json", (c) => c.json(clientMetadataDocument({
 *   clientId: "https://app.example/oauth/client.json", clientName: "Example agent" })));
 */
export function clientMetadataDocument(
  options: ClientMetadataDocumentOptions,
): ClientMetadataDocument {
  if (typeof options !== "object" || options === null) {
    throw invalid("clientMetadataDocument needs an options object.");
  }
  // A JavaScript caller could pass anything: a secret in a public document would be published to everyone.
  for (const key of ["clientSecret", "client_secret"]) {
    if (key in options)
      throw invalid("A client metadata document is public: it must not carry a secret.");
  }
  const clientId = checkClientIdUrl(options.clientId, options);
  if (typeof options.clientName !== "string" || options.clientName.trim() === "") {
    throw invalid("The client metadata document needs a client name the person will see.");
  }
  const redirectUris = [...(options.redirectUris ?? [LOOPBACK_REDIRECT_URI])];
  if (redirectUris.length === 0)
    throw invalid("The client metadata document needs a redirect URI.");
  for (const uri of redirectUris) checkRedirectUri(uri);
  const native = redirectUris.every((uri) => {
    const url = new URL(uri);
    return url.protocol !== "https:" && url.protocol !== "http:"
      ? true
      : LOOPBACK_HOSTS.has(url.hostname);
  });
  const document: ClientMetadataDocument = {
    client_id: clientId,
    client_name: options.clientName,
    redirect_uris: redirectUris,
    grant_types: [
      "authorization_code",
      "refresh_token",
      ...(options.deviceFlow ? [DEVICE_CODE_GRANT] : []),
    ],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: native ? "native" : "web",
  };
  for (const [field, value] of [
    ["client_uri", options.clientUri],
    ["logo_uri", options.logoUri],
  ] as const) {
    if (value === undefined) continue;
    if (URL.parse(value)?.protocol !== "https:") throw invalid(`${field} must be an https URL.`);
    document[field] = value;
  }
  if (options.softwareId !== undefined) document.software_id = options.softwareId;
  if (options.softwareVersion !== undefined) document.software_version = options.softwareVersion;
  return document;
}
