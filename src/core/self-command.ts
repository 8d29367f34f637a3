/**
 * This installation of agentauth as a command: the CLI entry beside this module (src/cli/main.ts in a checkout,
 * dist/cli/main.js in an installed package, where no .ts ships), the argv that runs it as a child process, and the
 * words a person types in a shell to run it. The demo and `agentauth acp` start the example agent with it, and the
 * demo prints commands with it, so both work from an installed package as from a checkout.
 */

import { existsSync } from "node:fs";
import { dirname, join, sep } from "node:path";
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

/**
 * How a person runs this installation from a shell, for printed commands: `npx agentauth` when it is installed in a
 * project (its `node_modules/.bin/agentauth` beside it; also npx's own cache), `agentauth` when installed globally
 * (the binary is on PATH), and `npm run agentauth --` in a checkout (the `agentauth` script; run from its folder).
 */
export function shellCommand(): string {
  const root = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
  if (!root.includes(`${sep}node_modules${sep}`)) return "npm run agentauth --";
  return existsSync(join(dirname(root), ".bin", "agentauth")) ? "npx agentauth" : "agentauth";
}
