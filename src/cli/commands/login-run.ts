/**
 * The interactive part of `agentauth login` (and `demo`): runs the engine's login with the device prompt, the
 * browser URL and the waiting notices on stderr, Ctrl-C as cancellation, and prints who signed in.
 */

import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { startSpinner } from "../../core/spinner.ts";
import { type DevicePrompt, login, type OAuthClient, type Provider } from "../../oauth/index.ts";
import { presetNamed } from "../../providers/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialRecord } from "../../vault/types.ts";
import type { CliIo } from "../io.ts";
import { jsonLine } from "../io.ts";

/** A discoverable server (`issuer` + `client`), or a provider preset that carries its own client. */
export type RunLoginOptions = (
  | { issuer: string; client: OAuthClient; provider?: undefined }
  | { provider: Provider; issuer?: undefined; client?: undefined }
) & {
  flow: "device" | "browser";
  scope?: string;
  resource?: string;
  subject?: string;
  /** Browser flow: the loopback port to listen on. */
  redirectPort?: number;
  /** Plays the person too: fetches the verification URL itself (for an auto-approving server). */
  autoApprove?: boolean;
};

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
        if (event.result !== "slow_down") return;
        // RFC 8628 §3.5: slow_down adds 5 s to the polling interval. Said on its own line when not on a terminal
        // (the spinner there prints nothing after its first line), so logs show why the wait got longer.
        const text = `The server asked to poll more slowly; checking every ${event.intervalSeconds}s now.`;
        if (io.interactive) spinner?.update(`Waiting (${text})…`);
        else io.stderr(`${text}\n`);
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
        "check --issuer or --provider-host, or ask the server's operator to fix its device authorization endpoint.",
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
    io.stdout(jsonLine(safe));
    return;
  }
  // Names, handles and e-mail come from the ID token, userinfo or the provider's API: peer text.
  const { name, email, organization, label, login: handle } = record.account;
  const person = name && email ? `${name} <${email}>` : (name ?? email);
  const who = peerText(
    handle
      ? `${handle}${person && person !== handle ? ` (${person})` : ""}`
      : name && email
        ? `${name} <${email}>`
        : (label ?? record.subject),
  );
  const preset = record.provider ? presetNamed(record.provider.name) : undefined;
  const where = preset
    ? `${preset.displayName} (${peerText(record.issuer)})`
    : peerText(record.issuer);
  io.stdout(
    `Logged in as ${who}${organization ? ` (${peerText(organization)})` : ""} at ${where}` +
      `${record.resource ? ` for ${peerText(record.resource)}` : ""}; vault id ${record.id}.\n`,
  );
}
