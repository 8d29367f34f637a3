/**
 * Checking what a caller (or the vault, through a stored `ProviderRef`) says about a generic OAuth server: its
 * issuer, hand-given endpoints and wire quirks. Everything arrives as data, possibly as JSON read back from the
 * vault, so each field is checked and a bad one named in a `ProviderConfigError`.
 */

import { assertSecureUrl, type HttpQuirks } from "../oauth/index.ts";
import { ProviderConfigError } from "./errors.ts";

/** A server's endpoints given by hand (no RFC 8414 / OIDC metadata to discover). */
export interface GenericEndpoints {
  /** The issuer identifier (the vault key's issuer; the `iss` an ID token must carry, if any). */
  issuer: string;
  /** Required for the browser flow. */
  authorization?: string;
  token: string;
  /** RFC 8628 device authorization endpoint, for the device flow. */
  device?: string;
  /** RFC 7009 revocation endpoint; without it, signing out only deletes locally. */
  revocation?: string;
  userinfo?: string;
  jwks?: string;
}

const ENDPOINT_NAMES = [
  "issuer",
  "authorization",
  "token",
  "device",
  "revocation",
  "userinfo",
  "jwks",
] as const;

/** An absolute https:// URL (http:// on loopback only), as a string. */
export function checkUrl(value: unknown, what: string): string {
  const url = typeof value === "string" ? URL.parse(value) : null;
  if (!url) {
    throw new ProviderConfigError(
      "provider_url_invalid",
      `The ${what} must be an absolute https:// URL; got ${JSON.stringify(value)}.`,
    );
  }
  try {
    assertSecureUrl(url, what);
  } catch {
    throw new ProviderConfigError(
      "provider_url_invalid",
      `The ${what} ${JSON.stringify(url.href)} must use https:// (plain http:// is accepted on loopback only).`,
    );
  }
  return url.href;
}

export function checkEndpoints(value: unknown): GenericEndpoints {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProviderConfigError(
      "provider_endpoints_invalid",
      "The endpoints must be an object with at least `issuer` and `token` URLs.",
    );
  }
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).filter(
    (name) => !(ENDPOINT_NAMES as readonly string[]).includes(name),
  );
  if (unknown.length > 0) {
    throw new ProviderConfigError(
      "provider_endpoints_invalid",
      `Unknown endpoint ${unknown.map((n) => JSON.stringify(n)).join(", ")}; the names are ${ENDPOINT_NAMES.join(", ")}.`,
    );
  }
  if (given.issuer === undefined || given.token === undefined) {
    throw new ProviderConfigError(
      "provider_endpoints_invalid",
      "Hand-given endpoints need at least the `issuer` identifier and the `token` endpoint URL.",
    );
  }
  const out: Record<string, string> = {};
  for (const name of ENDPOINT_NAMES) {
    if (given[name] !== undefined) out[name] = checkUrl(given[name], `${name} endpoint`);
  }
  // The issuer is an identifier compared byte for byte with ID tokens' `iss`: keep it exactly as given.
  out.issuer = given.issuer as string;
  return out as unknown as GenericEndpoints;
}

const BOOLEAN_QUIRKS = [
  "acceptJson",
  "jsonRequestBody",
  "errorsWithStatus200",
  "okFalseErrors",
  "commaScopes",
  "bearerTokenType",
] as const;

/** A quirks object as `HttpQuirks`, refusing unknown names and wrong types (a typo must not pass silently). */
export function checkQuirks(value: unknown): HttpQuirks {
  const bad = (why: string) =>
    new ProviderConfigError("provider_quirks_invalid", `The quirks are not usable: ${why}.`);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw bad("they must be an object");
  }
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    if ((BOOLEAN_QUIRKS as readonly string[]).includes(name)) {
      if (typeof member !== "boolean") throw bad(`${name} must be true or false`);
      out[name] = member;
    } else if (name === "nestedTokens") {
      if (typeof member !== "string" || member === "") throw bad("nestedTokens must be a key name");
      out[name] = member;
    } else if (name === "errorCodes") {
      if (typeof member !== "object" || member === null || Array.isArray(member)) {
        throw bad("errorCodes must map provider error codes to OAuth ones");
      }
      const codes: Record<string, string> = {};
      for (const [from, to] of Object.entries(member)) {
        if (typeof to !== "string" || !/^[\x20-\x7e]{1,64}$/.test(to)) {
          throw bad(`errorCodes.${from} must be an OAuth error code`);
        }
        codes[from] = to;
      }
      out[name] = codes;
    } else {
      throw bad(
        `unknown quirk ${JSON.stringify(name)} (known: ${[...BOOLEAN_QUIRKS, "nestedTokens", "errorCodes"].join(", ")})`,
      );
    }
  }
  return out as HttpQuirks;
}

/** A JSON-encoded `ProviderRef` option, parsed; the error names the option. */
export function parseJsonOption(value: string, name: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new ProviderConfigError(
      "provider_ref_invalid",
      `The stored generic provider option ${name} is not valid JSON; sign in again.`,
    );
  }
}

/** Extra authorization parameters: a flat map of strings (they become query parameters). */
export function checkParams(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const ok =
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((member) => typeof member === "string");
  if (!ok) {
    throw new ProviderConfigError(
      "provider_params_invalid",
      'The extra authorization parameters must map names to strings, e.g. {"audience": "api"}.',
    );
  }
  return { ...(value as Record<string, string>) };
}

/** JWS algorithm names (RFC 7518 §3.1: `RS256`, `ES256`, `EdDSA`, ...). */
export function checkAlgorithms(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((name) => typeof name === "string" && /^[A-Za-z0-9+_-]{2,32}$/.test(name))
  ) {
    throw new ProviderConfigError(
      "provider_algorithms_invalid",
      'The ID token algorithms must be a non-empty list of JWS names, e.g. ["ES256"].',
    );
  }
  return [...value];
}
