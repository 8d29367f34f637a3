/** `agentauth login`: a device or browser login against any OAuth server, stored in the vault. */

import { parseArgs } from "node:util";
import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { Secret } from "../../core/secret.ts";
import { startSpinner } from "../../core/spinner.ts";
import {
  DEFAULT_LOGIN_SCOPE,
  type DevicePrompt,
  login,
  type OAuthClient,
} from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialRecord } from "../../vault/types.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export const LOGIN_USAGE = `agentauth login --issuer URL [--client-id ID] [--scope S] [--resource R] [--device | --browser] [--subject S] [--json]
  Signs in with the device flow (default) or a browser and a loopback redirect, and stores the tokens
  encrypted in the vault. A confidential client's secret is read from $AGENTAUTH_CLIENT_SECRET.`;

export const LOGIN_HELP: Record<string, string> = {
  "": `agentauth login --issuer URL [options]
  Signs in at any OAuth 2.0 / OpenID Connect authorization server and stores the tokens encrypted in the vault.
  The device flow (RFC 8628) prints a URL and a code on stderr; the browser flow prints an authorization URL and
  waits for the redirect on a loopback port (RFC 8252, PKCE S256).

  --issuer URL        the authorization server (https, or http on loopback); its metadata is discovered
  --client-id ID      the registered client id (default agentauth-cli)
  --scope S           the scopes to ask for (default "${DEFAULT_LOGIN_SCOPE}")
  --resource R        the RFC 8707 resource indicator the tokens are for (part of the vault key)
  --device            use the device flow (the default)
  --browser           use a browser and a loopback redirect instead
  --subject S         the vault subject to store the credential under (default the ID token's sub)
  --json              print the stored credential (never a token) as JSON on stdout; errors as JSON too

  A confidential client's secret is read from $AGENTAUTH_CLIENT_SECRET, never from the command line.
  Ctrl-C cancels the login (exit 130).

  Example:
    agentauth login --issuer http://127.0.0.1:4444 --device`,
};

export async function loginCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      issuer: { type: "string" },
      "client-id": { type: "string", default: "agentauth-cli" },
      scope: { type: "string", default: DEFAULT_LOGIN_SCOPE },
      resource: { type: "string" },
      device: { type: "boolean", default: false },
      browser: { type: "boolean", default: false },
      subject: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.issuer) throw new UsageError("login needs --issuer URL");
  if (values.device && values.browser) throw new UsageError("choose one of --device and --browser");
  const clientSecret = io.env.AGENTAUTH_CLIENT_SECRET;
  const client: OAuthClient = {
    clientId: values["client-id"],
    clientSecret: clientSecret ? new Secret(clientSecret) : undefined,
  };
  const record = await runLogin(io, {
    issuer: values.issuer,
    client,
    flow: values.browser ? "browser" : "device",
    scope: values.scope,
    resource: values.resource,
    subject: values.subject,
  });
  printAccount(io, record, values.json);
  return EXIT.ok;
}

export interface RunLoginOptions {
  issuer: string;
  client: OAuthClient;
  flow: "device" | "browser";
  scope?: string;
  resource?: string;
  subject?: string;
  /** Plays the person too: fetches the verification URL itself (for an auto-approving server). */
  autoApprove?: boolean;
}

export async function runLogin(io: CliIo, options: RunLoginOptions): Promise<CredentialRecord> {
  const store = openVault({ env: io.env });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  let spinner: ReturnType<typeof startSpinner> | undefined;
  try {
    return await login({
      ...options,
      store,
      signal: controller.signal,
      onDevicePrompt: (prompt) => {
        showDevicePrompt(io, prompt);
        spinner = startSpinner(
          io.stderr,
          io.interactive,
          "Waiting for you to approve the sign-in…",
        );
        if (options.autoApprove)
          visit(io, prompt.verificationUriComplete ?? prompt.verificationUri);
      },
      onPoll: (event) => {
        if (event.result === "slow_down")
          spinner?.update(
            `Waiting (server asked to slow down to every ${event.intervalSeconds}s)…`,
          );
      },
      openUrl: (url) => {
        io.stderr(`Open this URL in your browser to sign in:\n\n  ${peerUrl(url)}\n\n`);
        spinner = startSpinner(io.stderr, io.interactive, "Waiting for the browser to come back…");
        if (options.autoApprove) visit(io, url.href);
      },
    });
  } finally {
    spinner?.stop();
    process.off("SIGINT", onSignal);
    await store.close();
  }
}

/**
 * RFC 8628 §3.3: the URL and code come from the authorization server, a peer: printed only after `peerUrl` /
 * `peerText`, so an escape sequence in them cannot rewrite the terminal (issue 8 §1.3).
 */
function showDevicePrompt(io: CliIo, prompt: DevicePrompt): void {
  const uri = peerUrl(prompt.verificationUri);
  if (!uri) {
    throw new AgentAuthError(
      "unusable_verification_uri",
      "The authorization server sent an unusable verification URL (not an absolute URL); " +
        "check the --issuer, or ask the server's operator to fix its device authorization endpoint.",
    );
  }
  const complete = peerUrl(prompt.verificationUriComplete);
  // RFC 8628 §6.1 recommends short codes (8 characters); 64 leaves room for any real one.
  const userCode = peerText(prompt.userCode, { max: 64 });
  const minutes = Math.round(prompt.expiresInSeconds / 60);
  io.stderr(
    `To sign in, open\n\n  ${uri}\n\nand enter the code\n\n  ${userCode}\n\n` +
      (complete ? `(or open ${complete} directly)\n` : "") +
      `The code expires in ${minutes} minute${minutes === 1 ? "" : "s"}.\n`,
  );
}

/** The unattended path: open the page like a browser would; the auto-approving server does the rest. */
function visit(io: CliIo, url: string): void {
  fetch(url, { redirect: "follow" })
    .then(async (response) => {
      await response.arrayBuffer();
      if (!response.ok)
        io.stderr(`agentauth: auto-approve visit answered HTTP ${response.status}\n`);
    })
    .catch(() => io.stderr("agentauth: auto-approve visit failed\n"));
}

export function printAccount(io: CliIo, record: CredentialRecord, json: boolean): void {
  if (json) {
    const { tokens: _tokens, ...safe } = record;
    io.stdout(`${JSON.stringify(safe)}\n`);
    return;
  }
  // Names and e-mail come from the ID token or userinfo: peer text.
  const { name, email, organization, label } = record.account;
  const who = peerText(name && email ? `${name} <${email}>` : (label ?? record.subject));
  io.stdout(
    `Logged in as ${who}${organization ? ` (${peerText(organization)})` : ""} at ${peerText(record.issuer)}` +
      `${record.resource ? ` for ${peerText(record.resource)}` : ""}; vault id ${record.id}.\n`,
  );
}
