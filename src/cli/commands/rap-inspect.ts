/** `agentauth rap inspect <base URL>`: fetches and validates a toolset, and shows which operations need which provider. */

import { escapeUnseenInJson, peerText, peerUrl } from "../../core/display.ts";
import { fetchToolset, ToolsetDiscoveryError } from "../../rap/runtime/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonText, UsageError } from "../io.ts";
import { TOOL_AUTH, type ToolAuthScheme, toolAuth } from "./rap-tool-auth.ts";

export async function inspectCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      json: { type: "boolean", default: false },
      "tool-auth": { type: "string" },
      "tool-secret-file": { type: "string" },
    },
    strict: true,
    allowPositionals: true,
  });
  const base = positionals[0];
  if (!base || positionals.length > 1 || !URL.canParse(base))
    throw new UsageError("rap inspect needs one tool base URL, e.g. http://127.0.0.1:8700");
  const scheme = values["tool-auth"];
  if (scheme !== undefined && !(TOOL_AUTH as readonly string[]).includes(scheme))
    throw new UsageError("--tool-auth must be hmac, bearer or none");
  // Read-only: the default secret file is used when it exists, never created.
  const auth = await toolAuth(
    (scheme ?? "hmac") as ToolAuthScheme,
    values["tool-secret-file"],
    io.env,
    {
      optional: scheme === undefined,
    },
  );
  let loaded: Awaited<ReturnType<typeof fetchToolset>>;
  try {
    // Plain http off loopback is acceptable for a viewer, unless a bearer secret would travel in clear.
    loaded = await fetchToolset(base, {
      allowInsecureHttp: auth?.scheme !== "bearer",
      authFor: () => auth,
    });
  } catch (error) {
    if (error instanceof ToolsetDiscoveryError) {
      io.stderr(`agentauth: ${peerText(error.message, { max: 600 })} [${error.code}]\n`);
      return EXIT.failure;
    }
    throw error;
  }
  const toolset = loaded.toolset;
  if (values.json) {
    io.stdout(`${jsonForTerminal(toolset)}\n`);
    return EXIT.ok;
  }
  const endpoint = peerUrl(toolset.endpoint) ?? "(unusable URL)";
  const description = toolset.description ? `: ${peerText(toolset.description)}` : "";
  io.stdout(`${peerText(toolset.name)}${description}\nendpoint ${endpoint}\n\n`);
  for (const tool of toolset.tools) {
    const provider = tool.annotations?.requiresAuth;
    io.stdout(
      `  ${peerText(tool.name).padEnd(24)} ${provider ? `requires auth: ${peerText(provider)}` : "no auth"}  ${peerText(tool.description)}\n`,
    );
  }
  return EXIT.ok;
}

/**
 * JSON whose text is safe on a terminal with the same data: JSON.stringify escapes C0 controls but leaves DEL, C1
 * controls (U+0080–U+009F, e.g. the one-byte CSI), bidi overrides and invisible characters raw; those are written
 * as \\u escapes too (the list is src/core/display.ts's).
 */
export function jsonForTerminal(value: unknown): string {
  return jsonText(value);
}

/** The same for text that is already JSON (a log line): those characters can only occur inside its strings. */
export function escapeForTerminal(json: string): string {
  return escapeUnseenInJson(json);
}
