/**
 * A preset as the catalog lists it: what `agentauth providers` shows, how a stored `ProviderRef` is rebuilt, and
 * which authorization-server identifiers (AHP/MCP `authorization_servers` entries) it recognises.
 */

import type { OAuthClient, Provider, ProviderFlow, ProviderRef } from "../oauth/index.ts";

export interface PresetEntry {
  name: string;
  displayName: string;
  /** One line: what it is. */
  summary: string;
  flows: readonly ProviderFlow[];
  /** What to register at the provider and which options to give ("an OAuth App: client id; secret for refresh"). */
  register: string;
  /** The redirect URI to register for the browser flow (`agentauth login` listens on a loopback port). */
  redirectUri: string;
  /** Whether a self-hosted server is supported through `host` (GHES, GitLab self-managed). */
  selfHosted: boolean;
  /**
   * When the provider refuses a client without its secret: at every code exchange ("always"), or in the browser
   * flow only ("browser": the device flow needs none), with the reason in words. `agentauth login` refuses such a
   * login before it starts.
   */
  secretRequired?: { when: "always" | "browser"; why: string };
  /** The provider refuses plain-http redirect URLs, so a loopback callback needs an HTTPS relay (Slack). */
  httpsRedirectOnly?: boolean;
  /** Whether refresh tokens are issued and rotate, in a few words. */
  refresh: string;
  /** How revocation works, in a few words. */
  revocation: string;
  /** The provider's OAuth documentation. */
  docs: string;
  /** Rebuilds the provider from a credential's stored reference and client registration. */
  fromRef(ref: ProviderRef, client: OAuthClient): Provider;
  /**
   * The preset options for an authorization-server identifier this preset recognises (e.g.
   * `https://github.com/login/oauth` → `{}`), or undefined.
   */
  matchIssuer?(issuer: URL): Record<string, string> | undefined;
}

/** A client registration as preset options (`clientId`, `clientSecret`). */
export function clientOptions(client: OAuthClient): {
  clientId: string;
  clientSecret?: OAuthClient["clientSecret"];
} {
  return client.clientSecret
    ? { clientId: client.clientId, clientSecret: client.clientSecret }
    : { clientId: client.clientId };
}
