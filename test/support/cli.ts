/** Test support: the `agentauth` CLI as a real child process, killed when the test ends if it is still running. */

import { spawn } from "node:child_process";
import { join } from "node:path";
import { after } from "node:test";
import type { Secret } from "../../src/core/secret.ts";
import { openVault } from "../../src/vault/index.ts";

export const REPO_ROOT = join(import.meta.dirname, "..", "..");
const MAIN = join(REPO_ROOT, "src", "cli", "main.ts");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  readonly pid: number | undefined;
  /** Everything the process has printed so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves with the first match of `pattern` on the stream; rejects if the process exits first. */
  waitFor(stream: "stdout" | "stderr", pattern: RegExp): Promise<RegExpExecArray>;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<CliResult>;
}

/**
 * Spawns `node src/cli/main.ts ...args` with the parent's environment minus anything agentauth reads, plus `env`.
 * `process.execPath` is the project's Node 24 when the suite runs under node_modules/.bin/node.
 */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
  const base = { ...process.env };
  for (const name of Object.keys(base)) {
    if (name.startsWith("AGENTAUTH_") || name === "NODE_TEST_CONTEXT") delete base[name];
  }
  const child = spawn(process.execPath, [MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...base, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const text = { stdout: "", stderr: "" };
  const listeners = new Set<() => void>();
  for (const stream of ["stdout", "stderr"] as const) {
    child[stream].setEncoding("utf8");
    child[stream].on("data", (chunk: string) => {
      text[stream] += chunk;
      for (const listener of listeners) listener();
    });
  }
  // "close" (not "exit"): both pipes are drained, so nothing printed can still be on its way.
  let closed = false;
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      closed = true;
      resolve({ code, signal, ...text });
      for (const listener of listeners) listener();
    });
  });
  return {
    pid: child.pid,
    output: () => ({ ...text }),
    waitFor(stream, pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = new RegExp(pattern.source, pattern.flags.replace("g", "")).exec(
            text[stream],
          );
          if (match) {
            listeners.delete(check);
            resolve(match);
          } else if (closed) {
            listeners.delete(check);
            reject(
              new Error(
                `agentauth ${args.join(" ")} exited before printing ${pattern} on ${stream}\n` +
                  `stdout: ${text.stdout}\nstderr: ${text.stderr}`,
              ),
            );
          }
        };
        listeners.add(check);
        check();
      });
    },
    kill: (signal) => child.kill(signal),
    exited,
  };
}

/** Runs the CLI to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return startCli(args, env).exited;
}

/**
 * `agentauth login --device` against an auto-approving server: waits for the verification URL on stderr and
 * opens it the way a person's browser would. Returns the finished command's output.
 */
export async function cliDeviceLogin(issuer: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const login = startCli(["login", "--issuer", issuer, "--device"], env);
  const [url] = await login.waitFor(
    "stderr",
    /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=[A-Z-]+/,
  );
  const page = await fetch(url);
  await page.arrayBuffer();
  return login.exited;
}

/** The vault id printed by a successful `agentauth login`. */
export function vaultIdOf(stdout: string): string {
  const id = /; vault id (\S+)\.$/m.exec(stdout)?.[1];
  if (!id) throw new Error(`no vault id in ${JSON.stringify(stdout)}`);
  return id;
}

/** The stored tokens of one credential, read the way another process on the machine would. */
export async function readStoredTokens(
  home: string,
  id: string,
): Promise<{ accessToken?: Secret; refreshToken?: Secret; idToken?: Secret }> {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const record = await vault.getById(id);
    if (!record) throw new Error(`no credential ${id} in ${home}`);
    return record.tokens;
  } finally {
    await vault.close();
  }
}
