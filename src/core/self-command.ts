/**
 * This installation of agentauth as a command: the CLI entry beside this module (src/cli/main.ts in a checkout,
 * dist/cli/main.js in an installed package, where no .ts ships), the argv that runs it as a child process, and the
 * words a person types in a shell to run it. The demo and `agentauth acp` start the example agent with it, and the
 * demo prints commands with it, so both work from an installed package as from a checkout.
 */

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** `.ts` when this module runs from the sources, `.js` when compiled: the entry is the one of the same build. */
const EXTENSION = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

/** The CLI's entry file in this layout (`<root>/src/cli/main.ts` or `<root>/dist/cli/main.js`). */
export function cliEntry(): string {
  return fileURLToPath(new URL(`../cli/main${EXTENSION}`, import.meta.url));
}

/** argv that runs this agentauth as a child process: this Node (the one that runs now) and the entry. */
export function selfArgv(): [string, string] {
  return [process.execPath, cliEntry()];
}

/** Where this installation sits and how it was started: what `shellCommandFor` reads. */
export interface Installation {
  /** The package's folder (`<root>` of `<root>/src/core/self-command.ts`), symlinks resolved (Node's main module). */
  packageRoot: string;
  /** The script path the process was started with (`process.argv[1]`, symlinks not resolved). */
  invokedAs?: string;
  /** Whether `<packageRoot>/../.bin/agentauth` exists: a project's bin beside an npm-layout install. */
  binBeside: boolean;
  /** `npm_config_user_agent` ("pnpm/9.12.0 npm/? node/v24…" under pnpm, "npm/10.9.0 …" under npm/npx). */
  userAgent?: string;
}

/**
 * How a person runs this installation from a shell, for printed commands (`shellCommandFor` on this process).
 */
export function shellCommand(): string {
  const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  return shellCommandFor({
    packageRoot: root,
    ...(process.argv[1] ? { invokedAs: process.argv[1] } : {}),
    binBeside: existsSync(join(dirname(root), ".bin", "agentauth")),
    ...(process.env.npm_config_user_agent ? { userAgent: process.env.npm_config_user_agent } : {}),
  });
}

/**
 * The words that run this installation again, by where it sits. Pure.
 * - pnpm's layout (`node_modules/.pnpm/agentauth@x/node_modules/agentauth`): `pnpm dlx agentauth` from its dlx
 *   cache, `agentauth` from its global folder (`$PNPM_HOME/global/…`, the bin is on PATH), `pnpm exec agentauth` in
 *   a project;
 * - npm's layout: `npx agentauth` in a project (its `node_modules/.bin/agentauth` beside it; also npx's cache), or
 *   `pnpm exec agentauth` when pnpm started it (`node-linker=hoisted`), `agentauth` when installed globally;
 * - a checkout started through a bin elsewhere (`npm link`): `agentauth` through the global bin, `npx agentauth`
 *   through a project's `node_modules/.bin` (`npm link agentauth` there);
 * - a checkout run from itself: `npm run agentauth --` (the `agentauth` script; run from its folder).
 */
export function shellCommandFor(where: Installation): string {
  const parts = segments(where.packageRoot);
  const underPnpm = where.userAgent?.startsWith("pnpm/") === true;
  if (parts.includes("node_modules")) {
    if (parts.includes(".pnpm")) {
      if (parts.includes("dlx")) return "pnpm dlx agentauth";
      if (parts.includes("global")) return "agentauth";
      return "pnpm exec agentauth";
    }
    if (!where.binBeside) return "agentauth";
    return underPnpm ? "pnpm exec agentauth" : "npx agentauth";
  }
  const invoked = where.invokedAs ? segments(where.invokedAs) : [];
  const insideRoot = invoked.length > 0 && startsWith(invoked, parts);
  if (invoked.length > 0 && !insideRoot) {
    const bin = invoked.at(-2) === ".bin" && invoked.at(-3) === "node_modules";
    if (bin) return underPnpm ? "pnpm exec agentauth" : "npx agentauth";
    if (/^agentauth(\.(cmd|ps1|exe))?$/i.test(invoked.at(-1) ?? "")) return "agentauth";
  }
  return "npm run agentauth --";
}

/** A path's folders and name, split on either separator (Windows paths, and POSIX ones in tests on any platform). */
function segments(path: string): string[] {
  return path.split(/[\\/]+/).filter(Boolean);
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.every((part, i) => path[i] === part);
}
