/** `agentauth rap inspect <base URL>`: fetches and validates a toolset, and shows which operations need which provider. */

import { parseArgs } from "node:util";
import { TOOLSET_PATH, ToolsetSchema } from "../../rap/wire.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export async function inspectCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { json: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: true,
  });
  const base = positionals[0];
  if (!base || positionals.length > 1 || !URL.canParse(base))
    throw new UsageError("rap inspect needs one tool base URL");
  const url = `${base.replace(/\/$/, "")}${TOOLSET_PATH}`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  if (!response?.ok) {
    io.stderr(`agentauth: could not fetch ${url}${response ? ` (HTTP ${response.status})` : ""}\n`);
    return EXIT.failure;
  }
  const parsed = ToolsetSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    io.stderr(
      `agentauth: ${url} is not a valid RAP toolset (${parsed.error.issues[0]?.message ?? "invalid"})\n`,
    );
    return EXIT.failure;
  }
  const toolset = parsed.data;
  if (values.json) {
    io.stdout(`${JSON.stringify(toolset)}\n`);
    return EXIT.ok;
  }
  io.stdout(
    `${toolset.name}${toolset.description ? `: ${toolset.description}` : ""}\nendpoint ${toolset.endpoint}\n\n`,
  );
  for (const tool of toolset.tools) {
    const auth = tool.annotations?.requiresAuth;
    io.stdout(
      `  ${tool.name.padEnd(24)} ${auth ? `requires auth: ${auth}` : "no auth"}  ${tool.description}\n`,
    );
  }
  return EXIT.ok;
}
