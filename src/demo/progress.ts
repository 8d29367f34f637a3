/**
 * What the person sees while the demo starts and once it runs: pure text builders (the command prints them). The
 * console login URL is the only secret-bearing text here, on purpose: it is how the person opens the console. It is
 * printed, never logged.
 */

import { jsonLine } from "../core/display.ts";

export type DemoStep = "folder" | "idp" | "vault" | "tool" | "runtime" | "ahp" | "console";

export interface DemoProgress {
  step: DemoStep;
  phase: "start" | "done" | "failed";
  /** The component's address once it listens. */
  url?: string;
  /** A short note on done ("reusing …"), or why it failed (a typed error's message). */
  detail?: string;
}

const LABELS: Record<DemoStep, string> = {
  folder: "Preparing the data folder",
  idp: "Starting the authorization server",
  vault: "Opening the credential vault",
  tool: "Starting the protected API and the example RAP tool",
  runtime: "Starting the RAP runtime",
  ahp: "Starting the example AHP host",
  console: "Starting the console",
};

/**
 * One piece of a progress line: "Starting the authorization server… " on start, then "ok (URL)\n" or
 * "failed: why\n", so a terminal shows one line per component.
 */
export function progressText(event: DemoProgress): string {
  if (event.phase === "start") return `${LABELS[event.step]}… `;
  const extra = [event.url, event.detail].filter(Boolean).join("; ");
  if (event.phase === "done") return extra ? `ok (${extra})\n` : "ok\n";
  return `failed${event.detail ? `: ${event.detail}` : ""}\n`;
}

/** Every address the demo serves. */
export interface DemoUrls {
  issuer: string;
  api: string;
  tool: string;
  runtime: string;
  ahp: string;
  console: string;
  /** The console's one-time login link: printed to the person, never logged. */
  consoleLogin: string;
}

export interface SummaryInput {
  dataDir: string;
  urls: DemoUrls;
  commands: { label: string; command: string }[];
  /** Components whose saved port was taken, so they moved (credentials for their old address need a sign-in). */
  moved?: string[];
}

/** The screen printed once everything runs: the console link first, then every address, the commands, how to stop. */
export function summaryText(input: SummaryInput): string {
  const { urls } = input;
  const lines = [
    "",
    "agentauth demo is running.",
    "",
    "Open this in your browser (the console; the link works once):",
    `  ${urls.consoleLogin}`,
    "",
    "Addresses:",
    `  console                  ${urls.console}`,
    `  authorization server     ${urls.issuer}  (sign in as alice/alice, bob/bob or carol/carol)`,
    `  protected API            ${urls.api}`,
    `  example RAP tool         ${urls.tool}`,
    `  RAP runtime              ${urls.runtime}`,
    `  example AHP host         ${urls.ahp}`,
    "",
    `Data folder: ${input.dataDir}`,
  ];
  if (input.moved && input.moved.length > 0) {
    lines.push(
      `Note: the saved port of ${input.moved.join(", ")} was taken, so it moved; accounts stored for its old address need a new sign-in.`,
    );
  }
  if (input.commands.length > 0) {
    lines.push("", "Try each protocol from another terminal:");
    for (const { label, command } of input.commands) lines.push(`  # ${label}`, `  ${command}`);
  }
  lines.push("", "Ctrl-C stops everything.", "");
  return lines.join("\n");
}

/** `{"event":"ready",…}`: the one line `--json` prints on stdout once the demo runs. */
export function readyLine(input: SummaryInput): string {
  return jsonLine({
    event: "ready",
    urls: input.urls,
    dataDir: input.dataDir,
    commands: input.commands,
  });
}
