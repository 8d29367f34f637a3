/**
 * RFC 7591 dynamic client registration: for servers that let clients register themselves.
 *
 * Strict where safety depends on it, tolerant of omissions that change nothing (RFC 7591 §3.2.1 answers as real
 * servers send them, the MCP conformance suite's among them):
 * - strict: `client_id` must be a string (oauth4webapi checks), the registered method must be one agentauth speaks,
 *   and a confidential method must come with a secret;
 * - tolerant: a `client_secret` without `client_secret_expires_at` is taken as one that does not expire (0, §3.2.1):
 *   a secret that does expire is refused at the token endpoint as `invalid_client`, and callers register again then;
 * - tolerant: a client that registered as public (`none`) ignores a secret the answer carries without naming a
 *   confidential method (it never sends it, and agentauth never stores it).
 * The method the answer names wins over the one asked for: §3.2.1, the answer holds the registered values.
 */

import * as oauth from "oauth4webapi";
import { Secret } from "../core/secret.ts";
import { readCappedText } from "./body.ts";
import type { OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { TokenEndpointError, toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";

export interface RegisterClientOptions extends RequestPolicy {
  as: AuthorizationServer;
  /** RFC 7591 §2 metadata; `redirect_uris`, `grant_types`, `token_endpoint_auth_method`, `client_name`, … */
  metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>>;
  initialAccessToken?: Secret;
}

export interface RegisteredClient extends OAuthClient {
  /** RFC 7592 management credentials, when the server issued them. */
  registrationAccessToken?: Secret;
  registrationClientUri?: string;
  /** RFC 7591 §3.2.1 `client_secret_expires_at` in ms since the epoch; absent when it never expires (0) or no secret. */
  clientSecretExpiresAt?: number;
}

/** A registration answer is one client's metadata: anything larger is not read. */
const MAX_REGISTRATION_ANSWER = 64_000;
const METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
type Method = (typeof METHODS)[number];

export async function registerClient(options: RegisterClientOptions): Promise<RegisteredClient> {
  const { as } = options;
  if (!as.registration_endpoint) {
    throw new TokenEndpointError(
      "registration_unsupported",
      `The authorization server ${as.issuer} does not support dynamic client registration; configure a client id instead.`,
    );
  }
  let client: oauth.OmitSymbolProperties<oauth.Client>;
  try {
    const response = await oauth.dynamicClientRegistrationRequest(as, options.metadata, {
      ...requestOptions(as.registration_endpoint, options),
      initialAccessToken: options.initialAccessToken?.reveal(),
    });
    client = await oauth.processDynamicClientRegistrationResponse(await tolerant(response));
  } catch (error) {
    throw toOAuthError(error, "client registration");
  }
  // RFC 7591 §2: a request without a method asks for client_secret_basic.
  const asked = options.metadata.token_endpoint_auth_method ?? "client_secret_basic";
  const method = client.token_endpoint_auth_method ?? asked;
  if (!METHODS.includes(method as Method)) {
    throw unusable(
      as,
      `registered the client for the token endpoint method "${String(method).slice(0, 40)}", which agentauth does not speak`,
    );
  }
  const secret = typeof client.client_secret === "string" ? client.client_secret : undefined;
  if (method !== "none" && !secret) {
    throw unusable(as, `registered a confidential client (${method}) without giving it a secret`);
  }
  return {
    clientId: client.client_id,
    clientSecret: method !== "none" && secret ? new Secret(secret) : undefined,
    authMethod: method as Method,
    registrationAccessToken:
      typeof client.registration_access_token === "string"
        ? new Secret(client.registration_access_token)
        : undefined,
    registrationClientUri:
      typeof client.registration_client_uri === "string"
        ? client.registration_client_uri
        : undefined,
    clientSecretExpiresAt:
      method !== "none" &&
      typeof client.client_secret_expires_at === "number" &&
      client.client_secret_expires_at > 0
        ? client.client_secret_expires_at * 1000
        : undefined,
  };
}

/**
 * The answer with `client_secret_expires_at: 0` filled in where a secret came without it (see the module comment),
 * so oauth4webapi's checks, which require the field, still run on everything else. Other answers pass unchanged.
 */
async function tolerant(response: Response): Promise<Response> {
  if (response.status !== 201 || !response.headers.get("content-type")?.includes("json")) {
    return response;
  }
  const text = await readCappedText(response, MAX_REGISTRATION_ANSWER);
  let body: unknown;
  try {
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (
    typeof body === "object" &&
    body !== null &&
    !Array.isArray(body) &&
    typeof (body as Record<string, unknown>).client_secret === "string" &&
    (body as Record<string, unknown>).client_secret_expires_at === undefined
  ) {
    (body as Record<string, unknown>).client_secret_expires_at = 0;
  }
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(body === undefined ? (text ?? "") : JSON.stringify(body), {
    status: response.status,
    headers,
  });
}

function unusable(as: AuthorizationServer, what: string): TokenEndpointError {
  return new TokenEndpointError(
    "registration_unusable",
    `The authorization server ${as.issuer} ${what}; agentauth cannot sign in as that client. Pre-register a client there and configure its id instead.`,
  );
}
