/**
 * What `agentauth acp` asks a person on the terminal (questions on stderr): a legacy `env_var` method's variables,
 * an API key, and whether to run a command the agent named. Secrets are read in raw mode, without echo. With no
 * terminal on stdin nothing is asked: each caller says which flag to use instead.
 */

import { createInterface } from "node:readline";
import {
  AcpCancelledError,
  AcpCommandNotConfirmedError,
  AcpEnvVarsMissingError,
  type EnvVarRequest,
  type EnvVarSpec,
} from "../../acp/client/index.ts";
import { peerText } from "../../core/display.ts";
import type { CliIo } from "../io.ts";

export function stdinIsTty(): boolean {
  return Boolean(process.stdin.isTTY);
}

/**
 * The legacy `env_var` method's variables: asked on the terminal (secrets without echo); with no terminal, the
 * only source is this command's environment, which the agent already inherits, so being asked means they are absent.
 */
export async function askEnvVars(
  io: CliIo,
  request: EnvVarRequest,
): Promise<Record<string, string>> {
  if (!stdinIsTty()) {
    throw new AcpEnvVarsMissingError(
      `The auth method "${peerText(request.method.id, { max: 60 })}" needs ${request.missing.join(", ")}; there is no terminal to ask on, ` +
        `so set ${request.missing.length === 1 ? "it" : "them"} in the environment of agentauth.`,
      request.missing,
    );
  }
  io.stderr(
    `${peerText(request.method.name)} needs ${request.missing.join(", ")}` +
      `${request.method.link ? ` (get ${request.missing.length === 1 ? "it" : "them"} at ${peerText(request.method.link)})` : ""}.\n`,
  );
  const values: Record<string, string> = {};
  for (const spec of request.vars.filter((v) => request.missing.includes(v.name) || v.optional)) {
    if (spec.optional && io.env[spec.name]) continue;
    const value = await askLine(promptFor(spec), spec.secret);
    if (value) values[spec.name] = value;
  }
  return values;
}

function promptFor(spec: EnvVarSpec): string {
  return `${spec.label ? `${peerText(spec.label)} (${spec.name})` : spec.name}${spec.optional ? " [optional]" : ""}: `;
}

/**
 * Before running a command the agent named (legacy `_meta["terminal-auth"]`) or a terminal login with variables the
 * agent chose: shows it exactly, then runs it with `--yes`, asks on a terminal, or refuses with how to allow it.
 */
export async function confirmCommand(
  io: CliIo,
  agentName: string,
  line: string,
  yes: boolean,
): Promise<boolean> {
  io.stderr(`${agentName} asks to run: ${line}\n`);
  if (yes) return true;
  if (!stdinIsTty()) {
    throw new AcpCommandNotConfirmedError(
      `${agentName} asks to run a command or environment of its own choosing to sign in (${line}); there is no terminal to ` +
        "confirm on, so it was not run. Pass --yes to run it, or run it yourself.",
    );
  }
  const answer = await askLine("Run it? [y/N] ", false);
  return /^y(es)?$/i.test(answer);
}

/** An API key from stdin (`--api-key-stdin`): everything up to end of input, trimmed; one line expected. */
export async function readStdinSecret(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    // An API key is short; more than this is not one (and must not fill memory).
    if (size > 64 * 1024) break;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8").split(/\r?\n/)[0]?.trim() ?? "";
}

/** One line from the terminal, the question on stderr; a secret is read in raw mode, without echo. */
export function askLine(question: string, hidden: boolean): Promise<string> {
  if (hidden) return readHidden(question);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer.trim());
    }),
  );
}

/** Raw mode: nothing is echoed; Enter ends, Backspace deletes, Ctrl-C cancels (raw mode turns off SIGINT). */
function readHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.setEncoding("utf8");
  stdin.resume();
  let value = "";
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(value.trim());
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === "\r" || char === "\n" || char === "\u0004") return finish();
        if (char === "\u0003") return finish(new AcpCancelledError("Cancelled at the prompt."));
        if (char === "\u007f" || char === "\b") value = value.slice(0, -1);
        else if (char >= " ") value += char;
      }
    };
    stdin.on("data", onData);
  });
}
