/**
 * `agentauth login --provider NAME …`: turns the provider flags into a configured preset (through the catalog's
 * `fromRef`, so the CLI and a later refresh or revoke build it the same way) and reads a confidential client's
 * secret from an environment variable or a file, never from the command line.
 */

import { readFileSync, statSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { Secret } from "../../core/secret.ts";
import type { Provider } from "../../oauth/index.ts";
import { PRESETS, presetNamed } from "../../providers/index.ts";
import { UsageError } from "../io.ts";

export interface ProviderFlags {
  provider: string;
  /** --provider-host: a self-hosted server (GitHub Enterprise Server, GitLab self-managed). */
  host?: string;
  /** --provider-option key=value, repeated: the preset's other options (GitHub `app=github_app`, ...). */
  options: readonly string[];
  /** --provider-origin REAL=REPLACEMENT, repeated: send the provider's requests elsewhere (a proxy, a simulator). */
  origins: readonly string[];
  clientId?: string;
  clientSecret?: Secret;
}

/** Options with a flag of their own, so `--provider-option` cannot set them a second way. */
const OWN_FLAGS: Record<string, string> = { host: "--provider-host", origins: "--provider-origin" };

export function providerFromFlags(flags: ProviderFlags): Provider {
  const preset = presetNamed(flags.provider);
  if (!preset) {
    throw new UsageError(
      `unknown provider ${JSON.stringify(peerText(flags.provider, { max: 40 }))}; the providers are ` +
        `${PRESETS.map((p) => p.name).join(", ")} (run 'agentauth providers' to see what each needs)`,
      undefined,
      "provider_unknown",
    );
  }
  if (!flags.clientId) {
    throw new UsageError(
      `login --provider ${preset.name} needs --client-id ID: the client id of the app you registered with ` +
        `${preset.displayName} ('agentauth providers' says what to register)`,
      undefined,
      "provider_client_id_missing",
    );
  }
  const given = parsePairs(flags.options, "--provider-option", "key=value");
  for (const key of Object.keys(given)) {
    const own = OWN_FLAGS[key];
    if (own) throw new UsageError(`give ${key} with ${own}, not --provider-option`);
  }
  const options: Record<string, string> = { ...given };
  if (flags.host !== undefined) {
    if (!preset.selfHosted) {
      throw new UsageError(
        `${preset.displayName} has no self-hosted servers, so --provider-host does not apply to it ` +
          `(the providers with one: ${PRESETS.filter((p) => p.selfHosted)
            .map((p) => p.name)
            .join(", ")})`,
        undefined,
        "provider_host_unsupported",
      );
    }
    options.host = flags.host;
  }
  if (flags.origins.length > 0) {
    options.origins = JSON.stringify(parsePairs(flags.origins, "--provider-origin", "REAL=URL"));
  }
  const client = flags.clientSecret
    ? { clientId: flags.clientId, clientSecret: flags.clientSecret }
    : { clientId: flags.clientId };
  let provider: Provider;
  try {
    provider = preset.fromRef({ name: preset.name, options }, client);
  } catch (error) {
    // The preset refused a value the person typed (an http:// host off loopback, a bad origin): a usage error,
    // keeping the preset's stable code and its message, which names what is wrong.
    if (error instanceof AgentAuthError) {
      throw new UsageError(
        `${error.message} ${flagHint(error.code)}`.trim(),
        undefined,
        error.code,
      );
    }
    throw error;
  }
  // A preset ignores options it does not know; say so rather than sign in with a configuration nobody asked for.
  const used = provider.ref.options ?? {};
  if (flags.host !== undefined && used.host === undefined) {
    throw new UsageError(
      `${preset.displayName} does not take --provider-host (run 'agentauth providers' to see how to point it at a server)`,
      undefined,
      "provider_host_unsupported",
    );
  }
  for (const [key, value] of Object.entries(given)) {
    if (used[key] === undefined) {
      throw new UsageError(
        `${preset.displayName} does not use the option ${JSON.stringify(peerText(key, { max: 40 }))}` +
          ` (run 'agentauth providers' to see what it takes)`,
        undefined,
        "provider_option_unknown",
      );
    }
    if (!sameOption(used[key], value)) {
      throw new UsageError(
        `${preset.displayName} does not accept ${peerText(key, { max: 40 })}=${JSON.stringify(peerText(value, { max: 80 }))}` +
          ` (it would use ${JSON.stringify(used[key])}); check the value's spelling`,
        undefined,
        "provider_option_invalid",
      );
    }
  }
  return provider;
}

/**
 * `--provider generic` takes its server as `--issuer URL` (discovery) or `--provider-option endpoints={…}` (by
 * hand); anything else is said in words before the preset's own checks.
 */
export function genericFlags(
  issuer: string | undefined,
  host: string | undefined,
  options: readonly string[],
): void {
  if (host !== undefined) {
    throw new UsageError(
      "--provider generic takes its server as --issuer URL (--provider-host is for a self-hosted GitHub or GitLab)",
      undefined,
      "provider_host_unsupported",
    );
  }
  const given = options.map((pair) => pair.slice(0, Math.max(0, pair.indexOf("="))));
  if (issuer !== undefined && given.includes("issuer")) {
    throw new UsageError(
      "give the issuer once: --issuer URL (not also --provider-option issuer=…)",
    );
  }
  if (issuer === undefined && !given.includes("issuer") && !given.includes("endpoints")) {
    throw new UsageError(
      "--provider generic needs its server: --issuer URL for one that publishes discovery metadata (RFC 8414 or " +
        'OpenID), or --provider-option endpoints=\'{"issuer":"…","authorization":"…","token":"…"}\' for one that does not',
      undefined,
      "provider_generic_source",
    );
  }
}

/**
 * Logins the provider is known to refuse (what `agentauth providers` says it needs), refused before anything is
 * started or printed, with the fix.
 */
export function refuseKnownFailures(
  name: string,
  flow: "device" | "browser",
  hasSecret: boolean,
): void {
  const preset = presetNamed(name);
  const rule = preset?.secretRequired;
  if (!preset || !rule || hasSecret || (rule.when === "browser" && flow !== "browser")) return;
  const device =
    rule.when === "browser" && preset.flows.includes("device")
      ? `, or sign in with --device instead (no secret needed${preset.name === "github" ? "; enable Device Flow in the app's settings" : ""})`
      : "";
  const https = preset.httpsRedirectOnly
    ? ` ${preset.displayName} also refuses plain-http redirect URLs, and this login listens on http://127.0.0.1:PORT/callback: ` +
      "it reaches the real service only through an HTTPS relay to that callback (docs/providers.md); a RAP tool " +
      `served over HTTPS signs people in to ${preset.displayName} directly.`
    : "";
  throw new UsageError(
    `${rule.why}, and none was given: put it in an environment variable and pass --client-secret-env VAR ` +
      `(or in a file: --client-secret-file PATH)${device}.${https}`,
    undefined,
    "provider_client_secret_missing",
  );
}

/** Equal as typed, or as JSON (a preset may store `endpoints={…}` re-serialised, in its own key order). */
function sameOption(stored: string, given: string): boolean {
  if (stored === given) return true;
  try {
    return isDeepStrictEqual(JSON.parse(stored), JSON.parse(given));
  } catch {
    return false;
  }
}

function flagHint(code: string): string {
  if (code === "provider_host_invalid") return "Fix --provider-host.";
  if (code === "provider_origins_invalid") return "Fix --provider-origin.";
  return "";
}

function parsePairs(
  values: readonly string[],
  flag: string,
  shape: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of values) {
    const at = pair.indexOf("=");
    const key = at > 0 ? pair.slice(0, at) : "";
    if (!key || at === pair.length - 1) {
      throw new UsageError(
        `${flag} takes ${shape}, got ${JSON.stringify(peerText(pair, { max: 80 }))}`,
      );
    }
    if (key in out) throw new UsageError(`${flag} ${peerText(key, { max: 80 })} is given twice`);
    out[key] = pair.slice(at + 1);
  }
  return out;
}

/** Names safe to echo back: the shell convention for environment variables (upper case, short). */
const CONVENTIONAL_ENV_NAME = /^[A-Z_][A-Z0-9_]{0,63}$/;

/** A client secret file larger than this is not a client secret (GitHub's are 40 hex characters). */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/**
 * The client secret named by --client-secret-env VAR or --client-secret-file PATH. Neither flag: undefined (a
 * public client). The value is wrapped at once; errors name the variable or file, never what it holds.
 */
export function clientSecretFrom(
  flags: { env?: string; file?: string },
  env: NodeJS.ProcessEnv,
): Secret | undefined {
  if (flags.env !== undefined && flags.file !== undefined) {
    throw new UsageError(
      "give the client secret one way: --client-secret-env or --client-secret-file",
    );
  }
  if (flags.env !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(flags.env)) {
      throw new UsageError(
        "--client-secret-env takes the NAME of an environment variable (e.g. GITHUB_CLIENT_SECRET), not the secret itself",
      );
    }
    const value = env[flags.env]?.trim();
    if (!value) {
      // Only a conventional variable name is echoed: a lowercase or very long "name" may be the secret itself,
      // typed where its variable's name belongs (a GitHub client secret is 40 lowercase hex characters).
      const shown = CONVENTIONAL_ENV_NAME.test(flags.env) ? `${flags.env} ` : "";
      throw new UsageError(
        `the environment variable ${shown}(from --client-secret-env) is not set or is empty; export the client secret in it first ` +
          "(--client-secret-env takes the variable's NAME, e.g. GITHUB_CLIENT_SECRET)",
        undefined,
        "client_secret_missing",
      );
    }
    return new Secret(value);
  }
  if (flags.file !== undefined) return secretFromFile(flags.file);
  return undefined;
}

function secretFromFile(path: string): Secret {
  const shown = JSON.stringify(peerText(path, { max: 200 }));
  let value: string;
  try {
    if (statSync(path).size > MAX_SECRET_FILE_BYTES) {
      throw new UsageError(
        `the client secret file ${shown} is too large to be a client secret; check --client-secret-file`,
        undefined,
        "client_secret_missing",
      );
    }
    value = readFileSync(path, "utf8").trim();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `cannot read the client secret file ${shown} (${(error as NodeJS.ErrnoException).code ?? "unreadable"}); check --client-secret-file`,
      undefined,
      "client_secret_missing",
    );
  }
  if (!value) {
    throw new UsageError(
      `the client secret file ${shown} is empty; put the client secret in it`,
      undefined,
      "client_secret_missing",
    );
  }
  return new Secret(value);
}

/**
 * There is deliberately no --client-secret flag: argv is readable by every user of the machine (`ps`) and lands
 * in shell history. Someone passing one is told where the secret goes instead; the value is never echoed.
 */
export function refuseSecretOnArgv(argv: readonly string[]): void {
  const ours = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (ours.some((arg) => arg === "--client-secret" || arg.startsWith("--client-secret="))) {
    throw new UsageError(
      "agentauth does not take a client secret on the command line (other users can see it in the process " +
        "list, and shells keep it in their history). Put it in an environment variable and pass " +
        "--client-secret-env VAR, or in a file and pass --client-secret-file PATH",
      undefined,
      "client_secret_on_argv",
    );
  }
}
