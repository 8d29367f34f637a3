/** Shared test fixtures for the vault suites: temp homes, sample credentials, raw database access, child processes. */

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { TestContext } from "node:test";
import { secret } from "../../src/core/secret.ts";
import type { CredentialInput } from "../../src/vault/index.ts";

/** A fresh folder under the OS temp dir, removed when the test ends. */
export function tempHome(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "agentauth-vault-test-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A random, unmistakable token: if it shows up somewhere it should not, the test can grep for it. */
export function token(kind: string): string {
  return `${kind}-SECRET-${randomBytes(12).toString("hex")}`;
}

export function sampleInput(overrides: Partial<CredentialInput> = {}): CredentialInput {
  return {
    subject: "alice",
    issuer: "https://as.example.com",
    resource: "https://mcp.example.com",
    clientId: "agentauth-cli",
    tokens: {
      accessToken: secret(token("at")),
      refreshToken: secret(token("rt")),
      idToken: secret(token("id")),
      tokenType: "Bearer",
    },
    expiresAt: 1_900_000_000_000,
    scopes: ["openid", "tools:read"],
    account: { label: "work", name: "Alice", email: "alice@example.com", organization: "Example" },
    status: "active",
    ...overrides,
  };
}

/** Every token value the input carries, for "must not appear" checks. */
export function tokenValues(input: CredentialInput): string[] {
  const { accessToken, refreshToken, idToken } = input.tokens;
  return [accessToken, refreshToken, idToken].filter((s) => s !== undefined).map((s) => s.reveal());
}

/** A 32-byte key as AGENTAUTH_VAULT_KEY expects it. */
export function newKey(): string {
  return randomBytes(32).toString("base64");
}

/** A second handle on the database file, bypassing the store: how the tests corrupt and inspect rows. */
export function rawDb(path: string): DatabaseSync {
  return new DatabaseSync(path, { timeout: 5000 });
}

/** A manually driven clock, so lease expiry and timestamps are tested without sleeping. */
export function fakeClock(start = 1_700_000_000_000): {
  now: () => number;
  advance: (ms: number) => void;
} {
  let time = start;
  return {
    now: () => time,
    advance: (ms) => {
      time += ms;
    },
  };
}

const WORKER = new URL("./fixtures/vault-worker.ts", import.meta.url).pathname;

export interface Worker {
  child: ChildProcess;
  /** Every JSON line the worker printed so far. */
  lines: Record<string, unknown>[];
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first line matching `predicate`. */
  waitFor(
    predicate: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
}

/** Runs fixtures/vault-worker.ts in a real OS process with this same Node binary. */
export function startWorker(t: TestContext, args: string[], env: NodeJS.ProcessEnv = {}): Worker {
  const child = spawn(process.execPath, [WORKER, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    predicate: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  let buffered = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of waiters.filter((w) => w.predicate(line))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    // "close", not "exit": by then stdout has been read to the end.
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return {
    child,
    lines,
    exited,
    waitFor(predicate, timeoutMs = 20_000) {
      const seen = lines.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `worker ${args[0]} printed no matching line in ${timeoutMs} ms; stderr: ${stderr}`,
              ),
            ),
          timeoutMs,
        );
        exited.then(({ code }) => {
          clearTimeout(timer);
          const late = lines.find(predicate);
          if (late) resolve(late);
          else
            reject(
              new Error(
                `worker ${args[0]} exited (${code}) without a matching line; stderr: ${stderr}`,
              ),
            );
        });
        waiters.push({
          predicate,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}
