/** `agentauth providers`: the provider presets, their flows, and what to register with each (the catalog as data). */

import { PRESETS, type PresetEntry } from "../../providers/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";

/** What a preset shows: the catalog's data fields, without its functions. */
export interface PresetListing {
  name: string;
  displayName: string;
  summary: string;
  flows: string[];
  register: string;
  redirectUri: string;
  selfHosted: boolean;
  refresh: string;
  revocation: string;
  docs: string;
}

export async function providersCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: { json: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError("providers takes no arguments");
  const listing = PRESETS.map(listingOf);
  io.stdout(values.json ? jsonLine(listing) : formatText(listing));
  return EXIT.ok;
}

export function listingOf(preset: PresetEntry): PresetListing {
  return {
    name: preset.name,
    displayName: preset.displayName,
    summary: preset.summary,
    flows: [...preset.flows],
    register: preset.register,
    redirectUri: preset.redirectUri,
    selfHosted: preset.selfHosted,
    refresh: preset.refresh,
    revocation: preset.revocation,
    docs: preset.docs,
  };
}

const FLOW_NAMES: Record<string, string> = {
  authorization_code: "browser",
  device: "device",
};

/** A short table (name, flows, self-hosted, summary), then one block per preset with the longer fields. */
function formatText(listing: PresetListing[]): string {
  const rows = listing.map((p) => [
    p.name,
    p.flows.map((f) => FLOW_NAMES[f] ?? f).join(", "),
    p.selfHosted ? "yes" : "no",
    p.summary,
  ]);
  const header = ["NAME", "FLOWS", "SELF-HOSTED", "WHAT"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `${cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd()}\n`;
  const details = listing.map(
    (p) =>
      `\n${p.displayName} (--provider ${p.name})\n` +
      `  register:     ${p.register}\n` +
      `  redirect URI: ${p.redirectUri}\n` +
      `  refresh:      ${p.refresh}\n` +
      `  revocation:   ${p.revocation}\n` +
      `  docs:         ${p.docs}\n`,
  );
  return (
    line(header) +
    rows.map(line).join("") +
    details.join("") +
    "\nSign in: agentauth login --provider NAME --client-id ID [--device | --browser] (see 'agentauth login --help').\n"
  );
}
