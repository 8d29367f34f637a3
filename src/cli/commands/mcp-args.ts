/**
 * Flag parsing for `agentauth mcp …`. node:util's message for an unknown flag is about positionals that start with
 * '-' ("place it at the end of the command after '--'"), which does not help someone who typed `--scpoe`: this one
 * names the command's options and the closest one.
 */

import { type ParseArgsOptionsConfig, parseArgs } from "node:util";
import { peerText } from "../../core/display.ts";
import { UsageError } from "../io.ts";

export function parseMcpArgs<T extends ParseArgsOptionsConfig>(
  command: string,
  args: string[],
  options: T,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") throw error;
    const flag = args.find((arg) => arg.startsWith("-") && !known(arg, options)) ?? "";
    const shown = peerText(flag.split("=")[0] ?? "", { max: 40 });
    const names = Object.keys(options).map((name) => `--${name}`);
    const near = closest(shown, names);
    throw new UsageError(
      `unknown option '${shown}' for 'agentauth ${command}'${near ? ` (did you mean ${near}?)` : ""}; ` +
        `its options are ${names.join(", ")}`,
    );
  }
}

function known(arg: string, options: ParseArgsOptionsConfig): boolean {
  if (arg === "--") return true;
  const name = arg.replace(/^--?/, "").split("=")[0] ?? "";
  return Object.hasOwn(options, name);
}

/** The option within two edits of what was typed (a swap, a missing or extra letter), if any. */
function closest(typed: string, names: string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(typed, name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Damerau–Levenshtein (optimal string alignment): a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const above = d[i - 1] as number[];
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] as number, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}
