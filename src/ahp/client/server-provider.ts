/**
 * Which provider preset serves an authorization server a host advertises (RFC 9728 `authorization_servers`): an
 * explicit provider for that identifier, a configured preset whose issuer is it (GitHub Enterprise through
 * `host`), a preset that recognises it (`https://github.com/login/oauth` → GitHub, Entra's
 * `https://login.microsoftonline.com/{tenant}/v2.0` → Microsoft), or nothing: discovery, as for any standard
 * server. Client ids and secrets come from the options or the environment (`AGENTAUTH_<PRESET>_CLIENT_ID`, ...);
 * a recognised preset without a client id is an error naming both places.
 */

import { Secret } from "../../core/secret.ts";
import type { OAuthClient, Provider } from "../../oauth/index.ts";
import {
  type OriginMap,
  PRESETS,
  type PresetEntry,
  presetForIssuer,
} from "../../providers/index.ts";
import { AhpServerConfigError, clip } from "./errors.ts";

/** Settings for one preset (by its name: `github`, `microsoft`, ...). Environment variables fill what is absent. */
export interface ProviderSettings {
  /** The OAuth client id registered with the provider. Env: `AGENTAUTH_<PRESET>_CLIENT_ID`. */
  clientId?: string;
  /** A confidential client's secret. Env: `AGENTAUTH_<PRESET>_CLIENT_SECRET` (never a command-line flag). */
  clientSecret?: Secret | string;
  /**
   * Scopes to ask for instead of the preset's default plus the resource's `scopes_supported`. Without it, the
   * host decides what is added (the person still approves each scope on the provider's consent page); set it to
   * pin exactly what this client may ask the provider for, whatever a host advertises.
   */
  scope?: string;
  /** A self-hosted server (GitHub Enterprise, GitLab self-managed): `https://HOST`. Env: `AGENTAUTH_<PRESET>_HOST`. */
  host?: string;
  /** Send the provider's requests elsewhere (a proxy; a simulator in tests): `{ "https://github.com": "…" }`. */
  origins?: OriginMap;
  /** More preset options, as the preset's stored reference spells them (GitHub `app`, Microsoft `tenant`). */
  options?: Record<string, string>;
}

export interface ServerProviderOptions {
  /** Per preset name. */
  providers?: Readonly<Record<string, ProviderSettings>>;
  /** An explicit provider per advertised authorization-server identifier (wins over everything else). */
  authorizationServers?: Readonly<Record<string, Provider>>;
  /** Where `AGENTAUTH_<PRESET>_*` variables are read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

export type ServerChoice =
  | { kind: "provider"; provider: Provider; scope?: string }
  | { kind: "discovery"; issuer: string };

/** `AGENTAUTH_GITHUB_CLIENT_ID` and its siblings for a preset name. */
export function envName(preset: string, what: "CLIENT_ID" | "CLIENT_SECRET" | "HOST"): string {
  return `AGENTAUTH_${preset.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${what}`;
}

/**
 * How the client signs in to `server` for `resourceLabel`. Throws `AhpServerConfigError` when a preset is
 * recognised but cannot be built (no client id, a configured host that is not the advertised one).
 */
export function providerForServer(
  server: string,
  resourceLabel: string,
  options: ServerProviderOptions,
): ServerChoice {
  const wanted = canonical(server);
  for (const [identifier, provider] of Object.entries(options.authorizationServers ?? {})) {
    if (canonical(identifier) === wanted) return { kind: "provider", provider };
  }
  // A configured server no preset recognises by URL alone: GitHub Enterprise at HOST/login/oauth (`host`), a
  // generic server given by `options` (`issuer`, `endpoints`).
  // Each preset is built on its own: one preset's bad setting (an http:// host off loopback) must not break
  // sign-in with the others; it is reported only for a server at that setting's own origin (review #20).
  for (const preset of PRESETS) {
    const settings = settingsFor(preset.name, options);
    if (!settings.host && Object.keys(settings.options ?? {}).length === 0) continue;
    let issuer: string;
    try {
      issuer = build(preset, settings, {}, "unset").issuer;
    } catch (error) {
      if (settings.host && sameOrigin(settings.host, server)) {
        throw badSetting(preset, error, resourceLabel);
      }
      continue;
    }
    if (canonical(issuer) !== wanted) continue;
    return chosen(preset, settings, {}, server, resourceLabel);
  }
  const match = presetForIssuer(server);
  if (match) {
    const settings = settingsFor(match.preset.name, options);
    const built = chosen(match.preset, settings, match.options, server, resourceLabel);
    // Only a host setting moves a preset's issuer (Microsoft's may legitimately differ: a tenant template).
    if (settings.host && canonical(built.provider.issuer) !== wanted) {
      throw new AhpServerConfigError(
        "ahp_provider_host_mismatch",
        `${clip(resourceLabel)} signs in at ${clip(server)}, but the ${match.preset.displayName} settings point at ` +
          `${clip(built.provider.issuer)} (providers.${match.preset.name}.host / ${envName(match.preset.name, "HOST")}). ` +
          "Remove the host setting, or give this server its own provider in authorizationServers.",
      );
    }
    return built;
  }
  return { kind: "discovery", issuer: server };
}

/** The issuer a stored credential for `server` would carry (for lookups that must not fail on configuration). */
export function issuerForServer(server: string, options: ServerProviderOptions): string {
  try {
    const choice = providerForServer(server, server, options);
    return choice.kind === "provider" ? choice.provider.issuer : server;
  } catch {
    return server;
  }
}

/** Whether a preset serves `server` (a recognised but misconfigured one counts: it is still a preset's). */
export function servedByPreset(
  server: string | undefined,
  options: ServerProviderOptions,
): boolean {
  if (!server) return false;
  try {
    return providerForServer(server, server, options).kind === "provider";
  } catch {
    return true;
  }
}

function chosen(
  preset: PresetEntry,
  settings: ProviderSettings,
  matched: Record<string, string>,
  server: string,
  resourceLabel: string,
): ServerChoice & { kind: "provider" } {
  if (!settings.clientId) {
    throw new AhpServerConfigError(
      "ahp_provider_client_id_missing",
      `${clip(resourceLabel)} signs in with ${preset.displayName} (${clip(server)}), and no ${preset.displayName} ` +
        `client id is configured. Register an app with ${preset.displayName} (${preset.register}) and set ` +
        `${envName(preset.name, "CLIENT_ID")} (agentauth ahp login: --provider-client-id ${preset.name}=ID), or pass ` +
        `providers: { ${preset.name}: { clientId } } to connectAhpHost.`,
    );
  }
  // What the advertised identifier says (Entra's tenant) must agree with what is configured: a configured tenant
  // is a decision (sign in only there), so a host advertising another one is refused, not obeyed (review #9).
  for (const [name, value] of Object.entries(matched)) {
    const configured = settings.options?.[name];
    if (configured !== undefined && configured.toLowerCase() !== value.toLowerCase()) {
      throw new AhpServerConfigError(
        "ahp_provider_option_mismatch",
        `${clip(resourceLabel)} signs in at ${clip(server)} (${preset.displayName} ${name} ${clip(value)}), but ` +
          `providers.${preset.name}.options.${name} is ${clip(configured)}. Nothing was sent. If this host should ` +
          `sign in there, set ${name} to ${clip(value)} or remove the setting; otherwise do not connect to this host.`,
      );
    }
  }
  let provider: Provider;
  try {
    provider = build(preset, settings, matched, settings.clientId);
  } catch (error) {
    throw badSetting(preset, error, resourceLabel);
  }
  return {
    kind: "provider",
    provider,
    ...(settings.scope ? { scope: settings.scope } : {}),
  };
}

/** A preset's settings that do not build (its own message, e.g. "must be an https:// URL"), naming where they come from. */
function badSetting(
  preset: PresetEntry,
  error: unknown,
  resourceLabel: string,
): AhpServerConfigError {
  const why = error instanceof Error ? error.message : String(error);
  return new AhpServerConfigError(
    "ahp_provider_settings_invalid",
    `${clip(resourceLabel)} signs in with ${preset.displayName}, whose settings are not usable: ${clip(why)} ` +
      `Fix providers.${preset.name} (host: ${envName(preset.name, "HOST")}).`,
    { cause: error },
  );
}

function sameOrigin(a: string, b: string): boolean {
  const left = URL.parse(a);
  const right = URL.parse(b);
  return left !== null && right !== null && left.origin === right.origin;
}

function build(
  preset: PresetEntry,
  settings: ProviderSettings,
  matched: Record<string, string>,
  clientId: string,
): Provider {
  const secret = settings.clientSecret;
  const client: OAuthClient =
    secret === undefined || secret === ""
      ? { clientId }
      : { clientId, clientSecret: typeof secret === "string" ? new Secret(secret) : secret };
  const options: Record<string, string> = {
    ...settings.options,
    ...(settings.host ? { host: settings.host } : {}),
    ...(settings.origins ? { origins: JSON.stringify(settings.origins) } : {}),
    ...matched,
  };
  return preset.fromRef({ name: preset.name, options }, client);
}

function settingsFor(name: string, options: ServerProviderOptions): ProviderSettings {
  const given = options.providers?.[name] ?? {};
  const env = options.env ?? process.env;
  const pick = (value: string | undefined) =>
    value === undefined || value === "" ? undefined : value;
  const clientId = given.clientId ?? pick(env[envName(name, "CLIENT_ID")]);
  const clientSecret = given.clientSecret ?? pick(env[envName(name, "CLIENT_SECRET")]);
  const host = given.host ?? pick(env[envName(name, "HOST")]);
  return {
    ...given,
    ...(clientId ? { clientId } : {}),
    ...(clientSecret ? { clientSecret } : {}),
    ...(host ? { host } : {}),
  };
}

/** Issuer identifiers compare exactly (RFC 8414 §3.3), except that metadata may spell a trailing slash or not. */
function canonical(identifier: string): string {
  return identifier.endsWith("/") ? identifier.slice(0, -1) : identifier;
}
