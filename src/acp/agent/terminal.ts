/**
 * Terminal login: when the client launches the agent binary with a terminal method's `args`, the kit runs the
 * OAuth login interactively (URL, code, spinner on the terminal), stores the result, and the process exits 0, or
 * non-zero on failure (ACP: the exit status is the only success signal).
 */

import { peerText } from "../../core/display.ts";
import { startSpinner } from "../../core/spinner.ts";
import { login } from "../../oauth/index.ts";
import { shownDevicePrompt } from "./device-prompt.ts";
import type { AgentAuth } from "./kit.ts";
import { deviceFlowDisabled } from "./login.ts";
import { loginTarget, oauthTarget, signInPhrase } from "./oauth-method.ts";

export interface TerminalIo {
  stderr: (text: string) => void;
  interactive: boolean;
}

/** The terminal method whose args appear in `argv` (as a contiguous run), if any. */
export function requestedTerminalMethod(auth: AgentAuth, argv: readonly string[]) {
  return auth.methods.find(
    (m) =>
      m.kind === "terminal" && argv.some((_, i) => m.args.every((arg, j) => argv[i + j] === arg)),
  );
}

/** Runs the terminal login if `argv` asks for one; returns the exit code, or undefined when it did not. */
export async function runTerminalLoginIfRequested(
  auth: AgentAuth,
  argv: readonly string[],
  io: TerminalIo = {
    stderr: (t) => process.stderr.write(t),
    interactive: Boolean(process.stderr.isTTY),
  },
): Promise<number | undefined> {
  const terminal = requestedTerminalMethod(auth, argv);
  if (terminal?.kind !== "terminal") return undefined;
  const method = auth.methods.find((m) => m.kind === "oauth" && m.id === terminal.oauthMethodId);
  if (method?.kind !== "oauth") return 1;
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  let spinner: ReturnType<typeof startSpinner> | undefined;
  try {
    const record = await login({
      ...loginTarget(method),
      flow: oauthTarget(method).flow,
      scope: method.scope,
      resource: method.resource,
      store: auth.credentials.store,
      subject: auth.credentials.subject,
      signal: controller.signal,
      onDevicePrompt: (prompt) => {
        const p = shownDevicePrompt(prompt);
        io.stderr(
          `${signInPhrase(method)}, open\n\n  ${p.uri}\n\nand enter the code\n\n  ${p.userCode}\n\n` +
            (p.complete ? `(or open ${p.complete} directly)\n\n` : ""),
        );
        spinner = startSpinner(
          io.stderr,
          io.interactive,
          "Waiting for you to approve the sign-in…",
        );
      },
      openUrl: (url) => {
        io.stderr(`${signInPhrase(method)}, open\n\n  ${url.href}\n\n`);
        spinner = startSpinner(io.stderr, io.interactive, "Waiting for the browser…");
      },
    });
    spinner?.stop(`Signed in as ${peerText(record.account.label ?? record.subject, { max: 80 })}.`);
    return 0;
  } catch (error) {
    spinner?.stop();
    const failure = deviceFlowDisabled(error, method) ?? error;
    io.stderr(`Sign-in failed: ${failure instanceof Error ? failure.message : "unknown error"}\n`);
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
  }
}
