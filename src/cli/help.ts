/**
 * The CLI help contract, as pure functions: each area (`vault`, `rap`, …) has a one-screen USAGE and a HELP map
 * keyed by the subcommand words after the area (`"tool serve"`, `""` for the area itself). `agentauth <area>
 * <sub…> --help` prints the longest matching HELP entry, else the area's USAGE.
 */

import type { CliIo, ReportOptions } from "./io.ts";

export interface Area {
  name: string;
  usage: string;
  help: Record<string, string>;
  run: (argv: string[], io: CliIo) => Promise<number>;
  /** How this command reports its errors, when it differs (`token`: JSON errors on stderr, exit codes 3 and 4). */
  report?: Pick<ReportOptions, "jsonTo" | "exitFor">;
}

/** The subcommand words: the leading arguments that are not flags (`rap tool serve --port 1` → tool, serve). */
export function commandWords(args: string[]): string[] {
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith("-") || !/^[a-z][a-z0-9-]*$/.test(arg)) break;
    words.push(arg);
  }
  return words;
}

/** The help text for `words` in `area`: the longest prefix that has an entry, else the area's usage. */
export function helpFor(area: Area, words: string[]): { text: string; key: string } {
  for (let n = words.length; n >= 0; n--) {
    const key = words.slice(0, n).join(" ");
    const text = area.help[key];
    if (text) return { text, key };
  }
  return { text: area.usage, key: "" };
}

/**
 * The area's first subcommand words, from its HELP keys and from the `agentauth <area> <word>` lines of its usage.
 * Empty for commands without subcommands (`login`, `demo`).
 */
export function subcommandsOf(area: Area): string[] {
  const words = new Set<string>();
  for (const key of Object.keys(area.help)) {
    const [first] = key.split(" ");
    if (first) words.add(first);
  }
  const line = new RegExp(`^agentauth ${area.name} ([a-z][a-z0-9-]*)`, "gm");
  for (const match of area.usage.matchAll(line)) if (match[1]) words.add(match[1]);
  return [...words];
}

/** The words that may follow `first` (`rap tool` → serve): from two-word HELP keys and usage lines. */
export function subcommandsAfter(area: Area, first: string): string[] {
  const words = new Set<string>();
  for (const key of Object.keys(area.help)) {
    const [a, b] = key.split(" ");
    if (a === first && b) words.add(b);
  }
  const line = new RegExp(`^agentauth ${area.name} ${first} ([a-z][a-z0-9-]*)(?:\\s|$)`, "gm");
  for (const match of area.usage.matchAll(line)) if (match[1]) words.add(match[1]);
  return [...words];
}
