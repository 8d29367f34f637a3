/**
 * `agentauth token <vault-id>`: prints a fresh access token on stdout and nothing else there, refreshing it first
 * (single-flight across processes) when it is due. The one command whose job is to print a secret, for scripts,
 * like `gh auth token`; distinct exit codes tell "sign in again" (3) from "try again later" (4).
 */

import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import {
  isRegistrationRecord,
  LoginRequiredError,
  RateLimitedError,
  TokenEndpointError,
  TokenRefresher,
  TransportError,
} from "../../oauth/index.ts";
import { presetNamed, resolveProvider } from "../../providers/index.ts";
import { openExistingVault } from "../../vault/index.ts";
import type { CredentialRecord } from "../../vault/types.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { idsAsPositionals } from "./vault-ids.ts";

export async function tokenCommand(argv: string[], io: CliIo): Promise<number> {
  const { positionals } = parseFlags({
    args: idsAsPositionals(argv),
    options: { json: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: true,
  });
  const [id] = positionals;
  if (!id || positionals.length > 1) {
    throw new UsageError("token needs exactly one <vault-id> (see 'agentauth vault list')");
  }
  const store = openExistingVault({ env: io.env, readOnly: false });
  if (!store) throw notFound(id);
  try {
    const record = await store.getById(id);
    if (!record) throw notFound(id);
    // A dynamic client registration (src/oauth/registration-store.ts) holds a registration access token, which is
    // no sign-in's token: never printed.
    if (isRegistrationRecord(record)) {
      throw new AgentAuthError(
        "not_a_credential",
        `${peerText(id, { max: 80 })} is a client registration agentauth keeps for signing in, not a sign-in; it has no token to print. 'agentauth vault delete ${peerText(id, { max: 80 })}' removes it (the next sign-in registers again).`,
      );
    }
    const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
    const refresher = new TokenRefresher({ store, providers: resolveProvider });
    let token: Awaited<ReturnType<TokenRefresher["getAccessToken"]>>;
    try {
      token = await refresher.getAccessToken(key);
    } catch (error) {
      if (error instanceof LoginRequiredError) {
        throw new LoginRequiredError("login_required", `${error.message} ${signInAgain(record)}`);
      }
      throw error;
    }
    const value = token.reveal();
    if (!PRINTABLE_TOKEN.test(value)) throw unprintable();
    io.stdout(`${value}\n`);
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/**
 * What a token may be made of to be printed: visible ASCII, no whitespace. RFC 6750 section 2.1 (b64token) is
 * narrower still and RFC 6749 appendix A.12 allows a space, but a control character, newline or space in a bearer
 * token is never usable in an Authorization header and, printed, reaches a terminal or a shell's `$(…)`.
 */
const PRINTABLE_TOKEN = /^[\x21-\x7e]+$/;

function unprintable(): AgentAuthError {
  return new AgentAuthError(
    "invalid_response",
    "the stored access token contains control characters, whitespace or non-ASCII characters, so it is not " +
      "printed (no bearer token can hold them); sign in again with 'agentauth login', and if it happens again " +
      "the provider is sending malformed tokens.",
  );
}

function notFound(id: string): AgentAuthError {
  return new AgentAuthError(
    "credential_not_found",
    `no credential with id ${peerText(id, { max: 80 })}; run 'agentauth vault list' to see the ids.`,
  );
}

/** The login line that makes a new credential under the same key (no secret: it is named, never shown). */
export function signInAgain(record: CredentialRecord): string {
  const words = ["agentauth", "login"];
  const ref = record.provider;
  if (ref && presetNamed(ref.name)) {
    words.push("--provider", ref.name);
    if (ref.options?.host) words.push("--provider-host", ref.options.host);
    for (const [key, value] of Object.entries(ref.options ?? {})) {
      if (key !== "host" && key !== "origins") words.push("--provider-option", `${key}=${value}`);
    }
  } else {
    words.push("--issuer", record.issuer);
  }
  words.push("--client-id", record.clientId);
  if (record.tokens.clientSecret) words.push("--client-secret-env", "VAR");
  if (record.resource) words.push("--resource", record.resource);
  return `Run: ${peerText(words.map(shellWord).join(" "), { max: 600 })}`;
}

/** Words a POSIX shell reads as themselves; anything else (spaces, JSON, `$`, `;`) goes in single quotes. */
const SHELL_PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One word quoted for a POSIX shell, so the printed line can be pasted as is (POSIX.1 XCU 2.2.2). */
function shellWord(word: string): string {
  return SHELL_PLAIN.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The token command's exit code for a failure: 3 when only a new sign-in helps, 4 when a retry later may work. */
export function tokenExitFor(error: unknown): number | undefined {
  if (error instanceof LoginRequiredError) return EXIT.loginRequired;
  if (error instanceof RateLimitedError) return EXIT.temporary;
  if (error instanceof TransportError) {
    return error.code === "network_error" || error.code === "timeout" ? EXIT.temporary : undefined;
  }
  if (error instanceof TokenEndpointError) {
    // A 5xx, an HTML maintenance page instead of JSON, or another process still refreshing: nothing is wrong with
    // the credential, and nothing was marked; the same command may well work in a minute.
    if (TEMPORARY_CODES.has(error.code)) return EXIT.temporary;
    if (error.oauthError === "temporarily_unavailable" || error.oauthError === "server_error") {
      return EXIT.temporary;
    }
  }
  return undefined;
}

const TEMPORARY_CODES = new Set([
  "server_error",
  "invalid_response",
  "refresh_wait_timeout",
  "refresh_conflict",
]);
