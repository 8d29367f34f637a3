/** `agentauth rap tool serve | runtime serve | inspect`: the RAP halves as long-running commands, and a toolset viewer. */

import { parseArgs } from "node:util";
import { createLogger } from "../../core/log.ts";
import { startExampleTool } from "../../rap/example/index.ts";
import { openVault } from "../../vault/index.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { parseInteger } from "./idp.ts";
import { inspectCommand } from "./rap-inspect.ts";
import { runtimeServeCommand } from "./rap-runtime.ts";

export const RAP_USAGE = `agentauth rap tool serve --example --issuer URL [--port N] [--client-id ID]
  The example RAP tool (echo; whoami needs OAuth at the issuer and calls a protected API). Tokens go to the vault.
agentauth rap runtime serve --toolset URL [--toolset URL…] [--port N] [--db PATH]
  A RAP runtime: callback receiver (signed per-call URLs) and a small JSON API to invoke tools as the model would.
agentauth rap inspect <tool base URL> [--json]
  The toolset, and which operations require which auth provider.`;

export async function rapCommand(argv: string[], io: CliIo): Promise<number> {
  const [area, action, ...rest] = argv;
  if (area === "inspect")
    return inspectCommand(
      [action, ...rest].filter((a): a is string => a !== undefined),
      io,
    );
  if (area === "tool" && action === "serve") return toolServe(rest, io);
  if (area === "runtime" && action === "serve") return runtimeServeCommand(rest, io);
  throw new UsageError(`unknown rap command '${[area, action].filter(Boolean).join(" ")}'`);
}

async function toolServe(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      example: { type: "boolean", default: false },
      issuer: { type: "string" },
      port: { type: "string", default: "0" },
      "client-id": { type: "string" },
    },
    strict: true,
  });
  if (!values.example)
    throw new UsageError("rap tool serve needs --example (the only built-in tool)");
  if (!values.issuer) throw new UsageError("rap tool serve --example needs --issuer URL");
  const store = openVault({ env: io.env });
  const tool = await startExampleTool({
    issuer: values.issuer,
    store,
    port: parseInteger(values.port, "--port", 0, 65535),
    clientId: values["client-id"],
    logger: createLogger({ fields: { component: "rap-tool" } }),
  });
  io.stdout(`${JSON.stringify({ event: "ready", url: tool.url, api: tool.api.url })}\n`);
  await untilTerminated();
  await tool.close();
  await store.close();
  return EXIT.ok;
}
