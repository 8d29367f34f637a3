/**
 * Checks every ```mermaid block in the repository's Markdown with mermaid's own parser, so a diagram that GitHub
 * would show as "Unable to render" fails `npm run check` instead (issue 8 §4.2: a `;` inside a sequence message
 * ends the statement in mermaid's grammar).
 *
 * Usage: node scripts/check-mermaid.ts [file.md …]   (default: every *.md tracked by git)
 */

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import DOMPurify from "dompurify";
import mermaid from "mermaid";

// Outside a browser DOMPurify has no DOM and exports a stub without addHook/sanitize, which mermaid's flowchart
// parser calls on labels. Parsing does not need sanitised labels (nothing is rendered), so identity stand-ins are
// enough; the grammar check is mermaid's own.
const purify = DOMPurify as unknown as Record<string, unknown>;
if (typeof purify.addHook !== "function") {
  purify.addHook = () => {};
  purify.removeHook = () => {};
  purify.removeHooks = () => {};
  purify.sanitize = (text: unknown) => text;
}

export interface MermaidBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
}

/** The fenced ```mermaid blocks of one Markdown text. */
export function mermaidBlocks(file: string, markdown: string): MermaidBlock[] {
  const blocks: MermaidBlock[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```mermaid\s*$/.test(lines[i] ?? "")) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i] ?? ""); i++)
      body.push(lines[i] ?? "");
    blocks.push({ file, line: start + 1, text: body.join("\n") });
  }
  return blocks;
}

/** Parses each block; returns one line per failure ("file:line: message"). */
export async function checkBlocks(blocks: MermaidBlock[]): Promise<string[]> {
  const failures: string[] = [];
  for (const block of blocks) {
    try {
      await mermaid.parse(block.text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push(`${block.file}:${block.line}: ${message.split("\n").slice(0, 3).join(" | ")}`);
    }
  }
  return failures;
}

function trackedMarkdown(): string[] {
  return execFileSync("git", ["ls-files", "*.md"], { encoding: "utf8" })
    .split("\n")
    .filter((file) => file && !file.startsWith("node_modules/"));
}

if (import.meta.main) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : trackedMarkdown();
  const blocks = files.flatMap((file) => mermaidBlocks(file, readFileSync(file, "utf8")));
  const failures = await checkBlocks(blocks);
  for (const failure of failures) process.stderr.write(`${failure}\n`);
  if (failures.length > 0) {
    process.stderr.write(
      `${failures.length} of ${blocks.length} mermaid diagrams do not parse; fix them (a ';' inside a message ends it: write ',' or '#59;').\n`,
    );
    process.exitCode = 1;
  } else {
    process.stdout.write(`${blocks.length} mermaid diagrams in ${files.length} files parse.\n`);
  }
}
