import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { checkBlocks, mermaidBlocks } from "../../scripts/check-mermaid.ts";
import { REPO_ROOT } from "../support/cli.ts";

const fence = (body: string) => `# Doc\n\n\`\`\`mermaid\n${body}\n\`\`\`\n`;

test("[DOCS-mermaid-parse] a ';' inside a sequence message is reported with its file and line", async () => {
  const blocks = mermaidBlocks(
    "doc.md",
    fence("sequenceDiagram\n  A->>B: verify JWT (JWKS cached; aud = resource)"),
  );
  assert.equal(blocks.length, 1);
  const failures = await checkBlocks(blocks);
  assert.equal(failures.length, 1);
  assert.match(failures[0] ?? "", /^doc\.md:3: Parse error/);
});

test("[DOCS-mermaid-parse] valid sequence and flowchart diagrams pass", async () => {
  const blocks = [
    ...mermaidBlocks("a.md", fence("sequenceDiagram\n  A->>B: verify JWT (JWKS cached, aud)")),
    ...mermaidBlocks("b.md", fence("flowchart TB\n  cli[CLI] --> core[core]")),
  ];
  assert.equal(blocks.length, 2);
  assert.deepEqual(await checkBlocks(blocks), []);
});

test("[DOCS-mermaid-parse] an unknown diagram type and hostile text fail cleanly", async () => {
  const hostile = [
    "notADiagram\n  x",
    `sequenceDiagram\n  A->>B: ${"(".repeat(5000)}`,
    "sequenceDiagram\n  A->>B: \u001b[31mred\u0000",
  ];
  const failures = await checkBlocks(hostile.map((text, i) => ({ file: "h.md", line: i, text })));
  assert.ok(failures.length >= 1);
  for (const failure of failures) assert.match(failure, /^h\.md:\d+: /);
});

test("[DOCS-mermaid-parse] every diagram in the repository's Markdown parses", () => {
  // The script itself, as `npm run check` runs it: exit 0 and a count on stdout.
  const out = execFileSync(process.execPath, ["scripts/check-mermaid.ts"], {
    cwd: REPO_ROOT,
    encoding: "utf8",
  });
  assert.match(out, /^\d+ mermaid diagrams in \d+ files parse\.\n$/);
});
