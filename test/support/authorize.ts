/** Test support: raw authorization-code and token requests against the embedded server, as a client sends them. */

import * as oauth from "oauth4webapi";
import { CLI_CLIENT_ID } from "../../src/idp/index.ts";

/** A loopback redirect for the CLI client (any port is allowed, RFC 8252 §7.3); nothing needs to listen there. */
export const LOOPBACK_REDIRECT = "http://127.0.0.1:9/callback";

export interface Pkce {
  verifier: string;
  challenge: string;
}

export async function pkce(): Promise<Pkce> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/**
 * An authorization URL for the CLI client with PKCE S256 and a state; `params` adds to or overrides the defaults,
 * and an `undefined` value removes a parameter.
 */
export function authorizationUrl(
  issuer: string,
  challenge: string,
  params: Record<string, string | undefined> = {},
): URL {
  const all: Record<string, string | undefined> = {
    client_id: CLI_CLIENT_ID,
    response_type: "code",
    redirect_uri: LOOPBACK_REDIRECT,
    scope: "openid offline_access",
    state: oauth.generateRandomState(),
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...params,
  };
  const url = new URL("/auth", issuer);
  for (const [name, value] of Object.entries(all))
    if (value !== undefined) url.searchParams.set(name, value);
  return url;
}

/** Sends the authorization request without following redirects and returns where the server sends the browser. */
export async function authorizationRedirect(
  url: URL,
  headers: Record<string, string> = {},
): Promise<URL> {
  const response = await fetch(url, { redirect: "manual", headers });
  await response.arrayBuffer();
  const location = response.headers.get("location");
  if (response.status < 300 || response.status >= 400 || !location) {
    throw new Error(`expected a redirect from ${url.pathname}, got HTTP ${response.status}`);
  }
  return new URL(location, url);
}

export interface TokenEndpointAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A raw form POST to the token endpoint (public client: client_id in the body). */
export async function tokenRequest(
  issuer: string,
  params: Record<string, string>,
): Promise<TokenEndpointAnswer> {
  const response = await fetch(new URL("/token", issuer), {
    method: "POST",
    body: new URLSearchParams({ client_id: CLI_CLIENT_ID, ...params }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Runs an auto-approved authorization and redeems the code: the token endpoint's answer. */
export async function authorizeAndRedeem(
  issuer: string,
  params: Record<string, string | undefined> = {},
  tokenParams: Record<string, string> = {},
): Promise<TokenEndpointAnswer> {
  const { verifier, challenge } = await pkce();
  const callback = await authorizationRedirect(authorizationUrl(issuer, challenge, params));
  const code = callback.searchParams.get("code");
  if (!code) throw new Error(`no code in ${callback.href}`);
  return tokenRequest(issuer, {
    grant_type: "authorization_code",
    code,
    redirect_uri: LOOPBACK_REDIRECT,
    code_verifier: verifier,
    ...tokenParams,
  });
}
