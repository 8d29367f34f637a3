/** How an agent author describes its sign-in methods, and how they appear on the wire in ACP v1 and v2 (pure). */

import type { Provider } from "../../oauth/index.ts";
import type { AccountInfo } from "../../vault/types.ts";
import { oauthMethodDescription, oauthMethodName, validateOAuthMethod } from "./oauth-method.ts";

interface MethodBase {
  /** The method id clients pass back (`methodId`). */
  id: string;
  name: string;
  description?: string;
}

/**
 * Sign in with OAuth (type `agent`): `authenticate` runs a device-code or browser login, against a provider preset
 * (`provider: github({ clientId })`) or a discoverable issuer with a client id.
 */
export type OAuthMethod = ProviderOAuthMethod | IssuerOAuthMethod;

interface OAuthMethodBase {
  kind: "oauth";
  /** The method id clients pass back (`methodId`). */
  id: string;
  description?: string;
  scope?: string;
  resource?: string;
  /** Default: the device flow when the provider offers it (an agent rarely runs on the person's own screen), else browser. */
  flow?: "device" | "browser";
  /** An environment variable holding a token that counts as configured credentials (users of an existing login). */
  envVar?: string;
  /** Give up on a login nobody completes. Default 10 minutes. */
  timeoutMs?: number;
}

/** A provider preset from `agentauth/providers`: GitHub, Google, Slack, ... (name defaults to "Sign in with GitHub"). */
export interface ProviderOAuthMethod extends OAuthMethodBase {
  provider: Provider;
  name?: string;
  issuer?: undefined;
  clientId?: undefined;
}

/** A discoverable authorization server (RFC 8414 / OIDC discovery) and the public client registered there. */
export interface IssuerOAuthMethod extends OAuthMethodBase {
  name: string;
  issuer: string;
  clientId: string;
  provider?: undefined;
}

/**
 * An API key (type `agent`). `authenticate` takes it from `_meta["api-key"]`, a string or `{apiKey}` (validated, kept
 * in the vault) or, when that is absent, from the method's environment variables (validated, left where it is):
 * clients such as acpx pass keys only through the agent's environment.
 */
export interface ApiKeyMethod extends MethodBase {
  kind: "api-key";
  /**
   * Environment variables holding the key, first set one wins: a set one counts as a configured key, and
   * `authenticate` without `_meta["api-key"]` validates it. E.g. `["MY_AGENT_API_KEY", "ACPX_AUTH_API_KEY"]`.
   */
  envVar?: string | readonly string[];
  /** Return account data to accept the key, or false to refuse it. Default: accept any non-empty key. */
  validate?: (apiKey: string) => Promise<AccountInfo | false> | AccountInfo | false;
}

/**
 * Terminal login (type `terminal`): the client re-runs the agent binary with `args` appended and `env` overlaid;
 * the kit then runs the OAuth method `oauthMethodId` interactively and exits 0 on success.
 */
export interface TerminalMethod extends MethodBase {
  kind: "terminal";
  args: string[];
  env?: Record<string, string>;
  oauthMethodId: string;
}

export type AuthMethodConfig = OAuthMethod | ApiKeyMethod | TerminalMethod;

/** The name a method is advertised with (an OAuth method on a provider may leave it to the provider). */
export function methodName(method: AuthMethodConfig): string {
  return method.kind === "oauth" ? oauthMethodName(method) : method.name;
}

export function methodDescription(method: AuthMethodConfig): string | null {
  return (method.kind === "oauth" ? oauthMethodDescription(method) : method.description) ?? null;
}

/** The first of the method's environment variables that is set (non-empty), with its value. */
export function envCredential(
  method: AuthMethodConfig,
  env: NodeJS.ProcessEnv,
): { name: string; value: string } | undefined {
  if (method.kind === "terminal" || method.envVar === undefined) return undefined;
  const names = typeof method.envVar === "string" ? [method.envVar] : method.envVar;
  for (const name of names) {
    const value = env[name];
    if (value) return { name, value };
  }
  return undefined;
}

/** What the client told us in `initialize` that changes what we advertise and how we reach the person. */
export interface ClientAuthFeatures {
  terminal: boolean;
  urlElicitation: boolean;
}

/** ACP v1 `AuthMethod`: `id`, no `type` for agent methods; terminal `env` is an object. */
export function v1AuthMethods(
  methods: readonly AuthMethodConfig[],
  client: ClientAuthFeatures,
): Record<string, unknown>[] {
  return advertised(methods, client).map((m) =>
    m.kind === "terminal"
      ? {
          id: m.id,
          name: m.name,
          description: m.description ?? null,
          type: "terminal",
          args: m.args,
          env: m.env ?? {},
        }
      : { id: m.id, name: methodName(m), description: methodDescription(m) },
  );
}

/** ACP v2 `AuthMethod`: `methodId`, `type` required; terminal `env` is an array of {name, value}. */
export function v2AuthMethods(
  methods: readonly AuthMethodConfig[],
  client: ClientAuthFeatures,
): Record<string, unknown>[] {
  return advertised(methods, client).map((m) =>
    m.kind === "terminal"
      ? {
          methodId: m.id,
          name: m.name,
          description: m.description ?? null,
          type: "terminal",
          args: m.args,
          env: Object.entries(m.env ?? {}).map(([name, value]) => ({ name, value })),
        }
      : { methodId: m.id, name: methodName(m), description: methodDescription(m), type: "agent" },
  );
}

/** ACP: a terminal method is advertised only when the client said it can run one (`clientCapabilities.auth.terminal`). */
export function advertised(
  methods: readonly AuthMethodConfig[],
  client: ClientAuthFeatures,
): AuthMethodConfig[] {
  return methods.filter((m) => m.kind !== "terminal" || client.terminal);
}

/** Configuration mistakes an author would want to hear about at startup, not at the first login. */
export function validateMethods(methods: readonly AuthMethodConfig[]): void {
  const ids = new Set<string>();
  for (const m of methods) {
    if (!m.id || ids.has(m.id))
      throw new TypeError(`auth method ids must be unique and non-empty (${m.id})`);
    ids.add(m.id);
    if (m.kind === "oauth") validateOAuthMethod(m);
    if (
      m.kind === "terminal" &&
      !methods.some((o) => o.kind === "oauth" && o.id === m.oauthMethodId)
    ) {
      throw new TypeError(
        `terminal method ${m.id} names an unknown OAuth method ${m.oauthMethodId}`,
      );
    }
    if (m.kind === "terminal" && m.args.length === 0)
      throw new TypeError(`terminal method ${m.id} needs args`);
  }
}
