/**
 * Any OAuth 2 server: found by discovery (RFC 8414 authorization server metadata, or OpenID Connect Discovery
 * 1.0 §4, the engine's `discoverAuthorizationServer`), or described by hand-given endpoints for a server that
 * publishes no metadata. A server that bends the wire format can be described as data (`quirks`, the same
 * `HttpQuirks` the presets use) instead of code. Everything needed to rebuild it later (issuer or endpoints,
 * quirks, auth method) is stored in the credential's `ProviderRef` as strings; no secret is.
 *
 * Revocation: RFC 7009 (the discovered metadata's `revocation_endpoint`, or the hand-given `revocation` URL).
 * Hand-given endpoints without one: the server has no revocation API we know of, so signing out deletes locally
 * and points at `manageUrl` when given.
 */

import type { HttpQuirks, Provider } from "../oauth/index.ts";
import {
  type AuthorizationServer,
  discoverAuthorizationServer,
  quirksFetch,
  serverFetch,
} from "../oauth/index.ts";
import { clientOptions, type PresetEntry } from "./catalog.ts";
import { type PresetOptions, presetClient, staticServer } from "./define.ts";
import { ProviderConfigError } from "./errors.ts";
import {
  checkAlgorithms,
  checkEndpoints,
  checkParams,
  checkQuirks,
  checkUrl,
  type GenericEndpoints,
  parseJsonOption,
} from "./generic-options.ts";
import { decodeOrigins, encodeOrigins } from "./origins.ts";

export type { GenericEndpoints } from "./generic-options.ts";

export interface GenericOptions extends PresetOptions {
  /** A discoverable server's issuer (metadata at its well-known URLs). Give this or `endpoints`. */
  issuer?: string;
  /** A server without metadata: its endpoints by hand. */
  endpoints?: GenericEndpoints;
  /** How the server's token endpoint departs from RFC 6749 (JSON bodies, 200-status errors, ...). */
  quirks?: HttpQuirks;
  /** How a confidential client authenticates (RFC 6749 §2.3.1). Default client_secret_basic. */
  authMethod?: "client_secret_basic" | "client_secret_post";
  /**
   * Hand-given endpoints only: whether the server supports PKCE S256 (default) or does not say
   * ("undocumented": then only a confidential client may sign in; RFC 9700 §2.1.1).
   */
  pkce?: "s256" | "undocumented";
  /** Extra authorization request parameters (`audience`, `prompt`, ...). */
  authorizationParams?: Record<string, string>;
  /** Where a person removes the app when the server has no revocation endpoint. */
  manageUrl?: string;
  /** The name shown to people (default: the issuer's host). */
  displayName?: string;
  /**
   * Hand-given endpoints only: the ID token signing algorithms the server uses (OIDC Discovery
   * `id_token_signing_alg_values_supported`; without it oauth4webapi expects RS256, OIDC Core §3.1.3.7).
   */
  idTokenAlgorithms?: string[];
}

export function generic(options: GenericOptions): Provider {
  if (options.issuer === undefined && options.endpoints === undefined) {
    throw new ProviderConfigError(
      "provider_generic_source",
      "A generic provider needs its server: `issuer` (a server that publishes discovery metadata) or `endpoints` (given by hand, for one that does not).",
    );
  }
  if (options.issuer !== undefined && options.endpoints !== undefined) {
    throw new ProviderConfigError(
      "provider_generic_source",
      "A generic provider takes `issuer` (discovery) or `endpoints` (given by hand), not both: keep the one that describes the server.",
    );
  }
  const endpoints = options.endpoints ? checkEndpoints(options.endpoints) : undefined;
  if (!endpoints && options.origins && Object.keys(options.origins).length > 0) {
    // Discovery reads the endpoints from the server itself; remapping them would disagree with its metadata.
    throw new ProviderConfigError(
      "provider_origins_unsupported",
      "Origin overrides apply to hand-given endpoints only; with discovery, give the issuer you want to reach.",
    );
  }
  // The issuer is an identifier compared exactly (RFC 8414 §3.3): checked, but kept as given (no trailing slash).
  if (!endpoints) checkUrl(options.issuer, "issuer");
  const issuer = endpoints ? endpoints.issuer : (options.issuer as string);
  const quirks = options.quirks ? checkQuirks(options.quirks) : undefined;
  const authorizationParams = checkParams(options.authorizationParams);
  if (options.pkce !== undefined && options.pkce !== "s256" && options.pkce !== "undocumented") {
    throw new ProviderConfigError(
      "provider_pkce_invalid",
      `pkce must be "s256" or "undocumented"; got ${JSON.stringify(options.pkce)}.`,
    );
  }
  const authMethod = options.authMethod ?? "client_secret_basic";
  if (authMethod !== "client_secret_basic" && authMethod !== "client_secret_post") {
    throw new ProviderConfigError(
      "provider_auth_method_invalid",
      `The client authentication method must be client_secret_basic or client_secret_post; got ${JSON.stringify(authMethod)}.`,
    );
  }
  const algorithms = checkAlgorithms(options.idTokenAlgorithms);
  const displayName = options.displayName ?? URL.parse(issuer)?.host ?? issuer;
  const client = presetClient(displayName, options, authMethod);
  // No default: the issuer's origin is rarely where a person removes an app, and a wrong page is worse than none.
  const manageUrl = options.manageUrl ? checkUrl(options.manageUrl, "manage page URL") : undefined;
  const ref: Record<string, string> = {
    authMethod,
    ...(endpoints ? { endpoints: JSON.stringify(endpoints) } : { issuer }),
    ...(quirks ? { quirks: JSON.stringify(quirks) } : {}),
    ...(options.pkce ? { pkce: options.pkce } : {}),
    ...(authorizationParams ? { authorizationParams: JSON.stringify(authorizationParams) } : {}),
    ...(options.manageUrl ? { manageUrl: options.manageUrl } : {}),
    ...(options.displayName ? { displayName: options.displayName } : {}),
    ...(algorithms ? { idTokenAlgorithms: algorithms.join(",") } : {}),
    ...encodeOrigins(options.origins),
  };
  return {
    name: "generic",
    displayName,
    issuer,
    ref: { name: "generic", options: ref },
    client,
    flows: endpoints
      ? [
          ...(endpoints.authorization ? (["authorization_code"] as const) : []),
          ...(endpoints.device ? (["device"] as const) : []),
        ]
      : ["authorization_code", "device"],
    defaultScope: options.scope,
    authorizationParams,
    refresh: {
      issued: "when_asked",
      rotates: false,
      notes:
        "As the server decides (often: ask for offline_access); rotation is followed when it happens.",
    },
    revocation:
      !endpoints || endpoints.revocation
        ? { kind: "rfc7009" }
        : { kind: "none", ...(manageUrl ? { manageUrl } : {}) },
    server: endpoints
      ? withAlgorithms(
          staticServer({
            displayName,
            metadata: {
              issuer,
              authorization_endpoint: endpoints.authorization,
              token_endpoint: endpoints.token,
              device_authorization_endpoint: endpoints.device,
              revocation_endpoint: endpoints.revocation,
              userinfo_endpoint: endpoints.userinfo,
              jwks_uri: endpoints.jwks,
            },
            quirks: quirks ?? {},
            pkce: options.pkce ?? "s256",
            origins: options.origins,
          }),
        )
      : async (discovery) => withQuirks(await discoverAuthorizationServer(issuer, discovery)),
  };

  /** Static metadata with the ID token algorithms added (a copy keeps the attached quirks: spread copies symbols). */
  function withAlgorithms(base: () => Promise<AuthorizationServer>) {
    if (!algorithms) return base;
    return async () =>
      ({
        ...(await base()),
        id_token_signing_alg_values_supported: algorithms,
      }) as AuthorizationServer;
  }

  /** The discovered metadata (shared through the metadata cache, so copied) with the quirks attached. */
  function withQuirks(as: AuthorizationServer): AuthorizationServer {
    if (!quirks) return as;
    return { ...as, [serverFetch]: quirksFetch(quirks, displayName) } as AuthorizationServer;
  }
}

export const genericPreset: PresetEntry = {
  name: "generic",
  displayName: "Any OAuth 2 server",
  summary:
    "Any OAuth 2 / OpenID Connect server: by discovery (--issuer) or by hand-given endpoints; quirks as data",
  flows: ["authorization_code", "device"],
  register:
    "A client at the server (native/public with PKCE, or confidential with a secret). The device flow needs the server's RFC 8628 endpoint.",
  redirectUri: "http://127.0.0.1/callback (RFC 8252 §7.3: any loopback port)",
  selfHosted: true,
  refresh: "As the server issues them (often with the offline_access scope)",
  revocation: "RFC 7009 when the server has a revocation endpoint; otherwise local only",
  docs: "https://www.rfc-editor.org/rfc/rfc8414",
  fromRef: (ref, client) => {
    const o = ref.options ?? {};
    return generic({
      ...clientOptions(client),
      issuer: o.issuer,
      endpoints:
        o.endpoints !== undefined
          ? (parseJsonOption(o.endpoints, "endpoints") as GenericEndpoints)
          : undefined,
      quirks:
        o.quirks !== undefined ? (parseJsonOption(o.quirks, "quirks") as HttpQuirks) : undefined,
      authMethod: o.authMethod as GenericOptions["authMethod"],
      pkce: o.pkce as GenericOptions["pkce"],
      authorizationParams:
        o.authorizationParams !== undefined
          ? (parseJsonOption(o.authorizationParams, "authorizationParams") as Record<
              string,
              string
            >)
          : undefined,
      manageUrl: o.manageUrl,
      displayName: o.displayName,
      idTokenAlgorithms: o.idTokenAlgorithms?.split(","),
      origins: decodeOrigins(o.origins),
    });
  },
};
