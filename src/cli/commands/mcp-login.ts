/**
 * `agentauth mcp login <server-url>`: asks the MCP server without a token, reads its 401 (MCP authorization: the
 * Bearer challenge's resource_metadata and scope), signs in through the MCP client's sign-in (RFC 9728 discovery,
 * exact issuer match, PKCE S256, RFC 8707 resource = the server's URL, RFC 7591 registration without --client-id,
 * kept in the vault and reused by the next login),
 * stores the tokens in the vault, then shows the new token to the server once through `agentAuthProvider`, the way
 * a program using the credential would, so "signed in" means the server accepts it.
 */

import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { startSpinner } from "../../core/spinner.ts";
import { agentAuthProvider, readUnauthorized } from "../../mcp/client/index.ts";
import { PROBE_TIMEOUT_MS, probeMcpServer } from "../../mcp/client/probe.ts";
import { serverResourceUri } from "../../mcp/client/provider.ts";
import { signInToMcpServer } from "../../mcp/client/sign-in.ts";
import {
  type DevicePrompt,
  findBearerChallenge,
  type OAuthClient,
  parseWwwAuthenticate,
} from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialRecord } from "../../vault/types.ts";
import type { CliIo } from "../io.ts";
import { EXIT, jsonLine, jsonText } from "../io.ts";
import { describeSystemError } from "../system-errors.ts";
import { withHint } from "./mcp-hints.ts";
import { credentialView } from "./mcp-status.ts";

/** What went wrong talking to the MCP server itself (not its authorization server). */
export class McpLoginError extends AgentAuthError {
  declare readonly code:
    | "mcp_server_unreachable"
    | "mcp_server_not_protected"
    | "mcp_probe_failed"
    | "mcp_token_refused";
}

export interface McpLoginOptions {
  serverUrl: URL;
  subject?: string;
  scope?: string;
  /** A client registered beforehand (with its secret, for a confidential one); else the MCP client registration. */
  clientFor?: (issuer: string) => OAuthClient | undefined;
  /** The device flow (RFC 8628) instead of a browser and a loopback redirect. */
  device?: boolean;
  json: boolean;
}

const SIGN_IN_TIMEOUT_MS = 300_000;

export async function mcpLogin(io: CliIo, options: McpLoginOptions): Promise<number> {
  const canonicalUri = serverResourceUri(options.serverUrl);
  const shown = peerText(canonicalUri, { max: 300 });
  const probe = await initializeRequest(options.serverUrl);
  if (probe.status !== 401) throw notAChallenge(probe, shown);
  const challenge = probe.headers.get("www-authenticate");
  let hints: ReturnType<typeof readUnauthorized>;
  try {
    hints = readUnauthorized(challenge, options.serverUrl);
  } catch (error) {
    throw withHint(error, challenge, canonicalUri);
  }
  const store = openVault({ env: io.env });
  let spinner: ReturnType<typeof startSpinner> | undefined;
  try {
    let record: CredentialRecord;
    try {
      record = await signInToMcpServer({
        canonicalUri,
        // Undefined lets the engine pick the subject as `agentauth login` does (the ID token's sub, else "default").
        subject: options.subject,
        store,
        hints: options.scope ? { ...hints, scope: options.scope.split(/\s+/) } : hints,
        signInMethod: options.device ? "device" : "browser",
        onAuthorizationUrl: async (url) => {
          io.stderr(
            `Open this URL in your browser to sign in to ${shown}:\n\n  ${peerUrl(url)}\n\n`,
          );
          spinner = startSpinner(
            io.stderr,
            io.interactive,
            "Waiting for the browser to come back…",
          );
        },
        onDeviceCode: async (prompt) => {
          showDevicePrompt(io, shown, prompt);
          spinner = startSpinner(io.stderr, io.interactive, "Waiting for you to enter the code…");
        },
        clientFor: options.clientFor,
        registrations: new Map(),
        clientName: "agentauth CLI",
        timeoutMs: SIGN_IN_TIMEOUT_MS,
      });
    } catch (error) {
      throw withHint(error, challenge, canonicalUri);
    } finally {
      spinner?.stop();
    }
    const provider = agentAuthProvider({
      serverUrl: canonicalUri,
      store,
      subject: record.subject,
      issuer: record.issuer,
    });
    const token = await provider.token();
    const answer = token
      ? await checkToken(options.serverUrl, token, record, (url, init) => provider.fetch(url, init))
      : undefined;
    const view = credentialView({ ...record, refreshToken: Boolean(record.tokens.refreshToken) });
    if (!answer?.ok) throw refused(answer, shown, record);
    if (options.json) {
      io.stdout(jsonLine({ server: canonicalUri, signedIn: true, credential: view }));
      return EXIT.ok;
    }
    const scopes = view.scopes.length > 0 ? view.scopes.join(" ") : "(none named)";
    io.stdout(
      `Signed in to ${shown} as ${view.subject} at ${view.issuer}; the server accepted the token.\n` +
        `  scopes: ${scopes}\n  refresh token: ${view.refreshToken ? "held" : "none (sign in again when it expires)"}\n` +
        `  vault id: ${view.id}\n` +
        `Programs use it with agentAuthProvider({ serverUrl, subject: ${jsonText(view.subject)}, store }) ` +
        `from agentauth/mcp; 'agentauth mcp status ${shown}' shows it, 'agentauth mcp logout ${shown}' revokes it.\n`,
    );
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/**
 * RFC 8628 §3.3: the URL and code come from the authorization server, a peer, so they are printed only after
 * `peerUrl` / `peerText`; an unusable URL is refused rather than printed.
 */
function showDevicePrompt(io: CliIo, shown: string, prompt: DevicePrompt): void {
  const uri = peerUrl(prompt.verificationUri);
  if (!uri) {
    throw new AgentAuthError(
      "unusable_verification_uri",
      "The authorization server sent an unusable verification URL (not an absolute URL); sign in with a browser " +
        "instead (without --device), or ask the server's operator to fix its device authorization endpoint.",
    );
  }
  const complete = peerUrl(prompt.verificationUriComplete);
  const minutes = Math.round(prompt.expiresInSeconds / 60);
  // RFC 8628 §5.4: name the authorization server, so a page on another host stands out.
  const host = URL.parse(prompt.issuer)?.host;
  io.stderr(
    `To sign in to ${shown}${host ? ` (authorization server ${peerText(host, { max: 200 })})` : ""}, open\n\n  ${uri}\n\nand enter the code\n\n  ${peerText(prompt.userCode, { max: 64 })}\n\n` +
      (complete ? `(or open ${complete} directly)\n` : "") +
      `The code expires in ${minutes} minute${minutes === 1 ? "" : "s"}.\n`,
  );
}

/** The probe (src/mcp/client/probe.ts), with a network failure said in the CLI's words. */
async function initializeRequest(
  serverUrl: URL,
  token?: string,
  fetchWith?: (url: URL, init: RequestInit) => Promise<Response>,
): Promise<Response> {
  try {
    return await probeMcpServer(serverUrl, { token, fetchWith, timeoutMs: PROBE_TIMEOUT_MS });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    const why = describeSystemError(cause)?.message ?? "the connection failed";
    throw new McpLoginError(
      "mcp_server_unreachable",
      `Could not reach the MCP server at ${peerText(serverUrl.origin)}: ${why}`,
      { cause },
    );
  }
}

/** The new token shown to the server; a server gone in the meantime is said as such: the sign-in itself is kept. */
async function checkToken(
  serverUrl: URL,
  token: string,
  record: CredentialRecord,
  fetchWith: (url: URL, init: RequestInit) => Promise<Response>,
): Promise<Response> {
  try {
    return await initializeRequest(serverUrl, token, fetchWith);
  } catch (error) {
    if (!(error instanceof McpLoginError)) throw error;
    throw new McpLoginError(
      "mcp_server_unreachable",
      `Signed in at ${peerText(record.issuer)} (vault id ${record.id}), but the check that the MCP server accepts ` +
        `the new token failed: ${error.message} Run 'agentauth mcp status ${peerText(serverUrl.href, { max: 300 })}' ` +
        "to see the stored credential.",
      { cause: error },
    );
  }
}

/** The server did not answer the tokenless request with 401: nothing to sign in to, or not an MCP endpoint. */
function notAChallenge(response: Response, shown: string): McpLoginError {
  if (response.ok) {
    return new McpLoginError(
      "mcp_server_not_protected",
      `The MCP server at ${shown} answered without asking for a sign-in (HTTP ${response.status}): it is not ` +
        "protected, so there is nothing to sign in to. Connect to it without a token.",
    );
  }
  const hint =
    response.status >= 300 && response.status < 400
      ? "it redirects elsewhere; give the URL of the MCP endpoint itself"
      : response.status === 404 || response.status === 405
        ? "check that the URL is the server's MCP endpoint (often ending in /mcp)"
        : response.status >= 500
          ? "the server is failing; try again later"
          : "check the URL";
  return new McpLoginError(
    "mcp_probe_failed",
    `The MCP server at ${shown} answered HTTP ${response.status} instead of 401 with a sign-in challenge; ${hint}.`,
  );
}

/** The server refused the token it was just issued for it: stored anyway, but the sign-in is not usable. */
function refused(
  answer: Response | undefined,
  shown: string,
  record: CredentialRecord,
): McpLoginError {
  let detail = "no access token was issued";
  if (answer) {
    const challenge = readChallenge(answer.headers.get("www-authenticate"));
    detail =
      `HTTP ${answer.status}` +
      (challenge.error ? ` ${challenge.error}` : "") +
      (challenge.scope ? `, needs scope "${challenge.scope}"` : "") +
      (challenge.description ? `: ${challenge.description}` : "");
  }
  const retry =
    answer?.status === 403
      ? `sign in again asking for what it needs: agentauth mcp login ${shown} --scope '…'`
      : // Not "wait for new signing keys": an agentauth verifier refetches the JWKS for an unknown key at once.
        "check that the server trusts that authorization server";
  return new McpLoginError(
    "mcp_token_refused",
    `Signed in at ${peerText(record.issuer)} (vault id ${record.id}), but the MCP server at ${shown} refused the new ` +
      `token (${peerText(detail, { max: 300 })}); ${retry}.`,
  );
}

function readChallenge(header: string | null): {
  error?: string;
  scope?: string;
  description?: string;
} {
  if (!header) return {};
  try {
    const bearer = findBearerChallenge(parseWwwAuthenticate(header));
    const p = bearer?.parameters ?? {};
    return { error: p.error, scope: p.scope, description: p.error_description };
  } catch {
    return {};
  }
}
