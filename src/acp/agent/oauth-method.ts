/**
 * What an OAuth method signs in to, read once from its configuration (pure): a provider preset
 * (`provider: github({ clientId })`) or a discoverable issuer with a client id; which flow it runs (the device
 * flow when the provider has one, since an agent usually cannot open a browser on the person's machine); the name
 * and description it is advertised with; and the startup checks that turn a method that cannot work into an error
 * before the first `authenticate`.
 */

import { AgentAuthError } from "../../core/errors.ts";
import type { OAuthClient, Provider, ProviderRef, ProviderResolver } from "../../oauth/index.ts";
import { resolveProvider } from "../../providers/index.ts";
import { sameProviderRef } from "../../vault/index.ts";
import type { OAuthMethod } from "./config.ts";

/** A method configuration that cannot work; thrown by `createAgentAuth`, so the author hears of it at startup. */
export class AuthMethodConfigError extends AgentAuthError {}

/** Where a method's login goes and what its credentials are keyed by. */
export interface OAuthTarget {
  /** The vault key's issuer: the provider's issuer identifier, or the configured issuer. */
  issuer: string;
  clientId: string;
  provider?: Provider;
  flow: "device" | "browser";
}

export function oauthTarget(method: OAuthMethod): OAuthTarget {
  const { provider } = method;
  if (provider) {
    return {
      issuer: provider.issuer,
      clientId: provider.client.clientId,
      provider,
      flow: method.flow ?? (provider.flows.includes("device") ? "device" : "browser"),
    };
  }
  return {
    issuer: method.issuer as string,
    clientId: method.clientId as string,
    flow: method.flow ?? "device",
  };
}

/** What `login()` from the engine needs besides the store, subject and prompts. */
export function loginTarget(
  method: OAuthMethod,
): { provider: Provider } | { issuer: string; client: OAuthClient } {
  const target = oauthTarget(method);
  return target.provider
    ? { provider: target.provider }
    : { issuer: target.issuer, client: { clientId: target.clientId } };
}

/** The advertised name: the configured one, else "Sign in with GitHub" from the provider's display name. */
export function oauthMethodName(method: OAuthMethod): string {
  if (method.name) return method.name;
  return method.provider ? `Sign in with ${method.provider.displayName}` : "Sign in";
}

export function oauthMethodDescription(method: OAuthMethod): string | undefined {
  if (method.description !== undefined || !method.provider) return method.description;
  const { displayName } = method.provider;
  return oauthTarget(method).flow === "device"
    ? `Sign in with your ${displayName} account: open a link on any device and enter a code`
    : `Sign in with your ${displayName} account in your browser`;
}

/**
 * The start of every prompt: "To sign in with GitHub" for a provider, "To sign in to NAME" for a method named after
 * what it signs in to, else "To sign in at HOST" (never "To sign in to Sign in").
 */
export function signInPhrase(method: OAuthMethod): string {
  if (method.provider) return `To sign in with ${method.provider.displayName}`;
  if (method.name && !/^(sign|log) ?in\b/i.test(method.name)) return `To sign in to ${method.name}`;
  const host = method.issuer ? URL.parse(method.issuer)?.host : undefined;
  return host ? `To sign in at ${host}` : "To sign in";
}

/** Startup checks of one OAuth method (the kit runs them for every method in `createAgentAuth`). */
export function validateOAuthMethod(method: OAuthMethod): void {
  const { provider, id } = method;
  if (provider) {
    if (method.issuer !== undefined || method.clientId !== undefined) {
      throw new AuthMethodConfigError(
        "auth_method_ambiguous",
        `OAuth method ${id} names a provider and an issuer or client id: the provider carries its own; remove issuer and clientId.`,
      );
    }
    const flow = oauthTarget(method).flow;
    if (!provider.flows.includes(flow === "device" ? "device" : "authorization_code")) {
      throw new AuthMethodConfigError(
        "auth_method_flow_unsupported",
        `OAuth method ${id} asks for the ${flow} flow, which ${provider.displayName} does not offer; ` +
          `configure flow: "${flow === "device" ? "browser" : "device"}" or leave flow out.`,
      );
    }
    return;
  }
  // Checked at run time too: a JavaScript author gets no compile-time help.
  if (typeof method.issuer !== "string" || method.issuer === "" || !method.clientId) {
    throw new AuthMethodConfigError(
      "auth_method_incomplete",
      `OAuth method ${id} needs either a provider (e.g. provider: github({ clientId })) or an issuer and a clientId.`,
    );
  }
  if (!method.name) {
    throw new AuthMethodConfigError(
      "auth_method_incomplete",
      `OAuth method ${method.id} needs a name (only a provider method gets one by default).`,
    );
  }
}

/**
 * The engine's `ProviderResolver` for the kit: a stored credential whose provider is one of the methods' own (same
 * preset, options and client id) gets that configured provider, so refresh and revocation use the client the author
 * configures today (a rotated secret applies at once) and a custom `Provider` not in the catalogue still works;
 * anything else is rebuilt from the catalogue with the client stored in the vault.
 */
export function methodProviders(methods: readonly OAuthMethod[]): ProviderResolver {
  return (ref: ProviderRef, client: OAuthClient) => {
    const own = methods.find(
      (m) =>
        m.provider !== undefined &&
        m.provider.client.clientId === client.clientId &&
        // A secret only the vault still has (the author dropped it from the configuration) is still needed.
        (m.provider.client.clientSecret !== undefined || client.clientSecret === undefined) &&
        sameProviderRef(m.provider.ref, ref),
    )?.provider;
    if (own) return own;
    // The kit hands the engine no client, so `client` is the stored one. Should a caller pass a method's
    // configured client for a reference no method has (review #1), its secret is dropped rather than handed to
    // a catalogue provider the author did not configure: a confidential client must then sign in again.
    const configured = methods.some((m) => m.provider?.client === client);
    return resolveProvider(ref, configured ? { clientId: client.clientId } : client);
  };
}
