/**
 * Flag parsing for every `agentauth` command. node:util's message for an unknown flag is about positionals that
 * start with '-' ("place it at the end of the command after '--'", with its closing quote missing), which does not
 * help someone who typed `--jsn`: this names the command's options and the closest one. Every command parses with
 * `parseFlags`; main.ts adds the command's name and its --help (it knows which command ran), for text and --json.
 */

import { type ParseArgsConfig, parseArgs } from "node:util";
import { peerText } from "../core/display.ts";
import { UsageError } from "./io.ts";

/** The longest flag name shown: enough for any real one, and a 10 KB one cannot flood the terminal. */
const SHOWN_MAX = 40;

/**
 * A flag the command does not have. `flag` is already safe to print; `options` are the command's own flags. Its
 * --json code is `usage`, like every other mistake in how a command was called (scripts already match on it).
 */
export class UnknownOptionError extends UsageError {
  readonly flag: string;
  readonly options: readonly string[];

  constructor(flag: string, options: readonly string[]) {
    super(unknownOptionMessage(flag, options));
    this.flag = flag;
    this.options = options;
  }
}

/** node:util `parseArgs`, whose unknown flags throw UnknownOptionError (other flag errors are left as they are). */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    if (!isParseArgsError(error, "ERR_PARSE_ARGS_UNKNOWN_OPTION")) throw error;
    const names = Object.keys(config.options ?? {}).map((name) => `--${name}`);
    throw new UnknownOptionError(unknownFlagOf(error as Error, config.args ?? []), names);
  }
}

/**
 * What to print: the flag, the command it was given to, the closest option (two edits at most: a swapped pair,
 * a missing or extra letter) and the command's options when known.
 */
export function unknownOptionMessage(
  flag: string,
  options: readonly string[],
  command?: string,
): string {
  const near = closest(flag, options);
  return (
    `unknown option '${flag}'${command ? ` for 'agentauth ${command}'` : ""}` +
    (near ? ` (did you mean ${near}?)` : "") +
    (options.length > 0 ? `; its options are ${options.join(", ")}` : "")
  );
}

export function isParseArgsError(error: unknown, code = "ERR_PARSE_ARGS"): boolean {
  const actual = (error as { code?: unknown } | undefined)?.code;
  return error instanceof Error && typeof actual === "string" && actual.startsWith(code);
}

/**
 * The flag node:util refused, safe to print. Taken from argv when one argument is it (`--jsn`, `--jsn=1`: the value
 * is never shown), else from node's message (a letter of a short group, `-x` of `-xy`).
 */
export function unknownFlagOf(error: Error, args: readonly string[]): string {
  const prefix = "Unknown option '";
  let flag: string | undefined;
  for (const arg of args) {
    if (arg === "--") break;
    const name = arg.split("=")[0] ?? "";
    if (arg.startsWith("-") && error.message.startsWith(`${prefix}${name}'`)) flag = name;
    if (flag) break;
  }
  flag ??= /^Unknown option '(-[^']*)'/.exec(error.message)?.[1] ?? "";
  return peerText(flag, { max: SHOWN_MAX });
}

function closest(typed: string, names: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(typed, name);
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Damerau–Levenshtein (optimal string alignment): a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return Number.POSITIVE_INFINITY;
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

/** An integer flag's value, from `min` to `max`; anything else is a usage error naming the flag and the range. */
export function parseInteger(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}
