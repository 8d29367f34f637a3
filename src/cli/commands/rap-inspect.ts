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
  const given = positionals[0];
  if (!given || positionals.length > 1 || !URL.canParse(given))
    throw new UsageError("rap inspect needs one tool base URL, e.g. http://127.0.0.1:8700");
  // The document's own URL (what a browser shows) names the same tool: its base is what comes before.
  const base = given.replace(/\/\.well-known\/rap-toolset\/?$/, "") || given;
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
      // A runtime's address is the likeliest wrong URL (the demo prints both): say that, not what a tool's
      // refusal would mean (a secret).
      const runtime = await isRapRuntime(base);
      io.stderr(
        runtime
          ? `agentauth: ${peerText(base, { max: 300 })} is a RAP runtime (its callback receiver and control API), not a tool server: rap inspect reads a tool's toolset. Give it the tool's base URL, the one the runtime was started with (rap runtime serve --toolset URL). [rap_not_a_tool]\n`
          : `agentauth: ${peerText(error.message, { max: 600 })} [${error.code}]\n`,
      );
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
  const rows = toolset.tools.map((tool) => {
    const provider = tool.annotations?.requiresAuth;
    return [
      peerText(tool.name, { max: 60 }),
      provider ? `requires auth: ${peerText(provider, { max: 40 })}` : "no auth",
      peerText(tool.description),
    ] as const;
  });
  // Columns as wide as their longest cell, so every row lines up whatever the names.
  const nameWidth = Math.max(0, ...rows.map(([name]) => name.length));
  const authWidth = Math.max(0, ...rows.map(([, auth]) => auth.length));
  for (const [name, auth, description] of rows) {
    io.stdout(
      `${`  ${name.padEnd(nameWidth)}  ${auth.padEnd(authWidth)}  ${description}`.trimEnd()}\n`,
    );
  }
  return EXIT.ok;
}

/** True when `base` answers as agentauth's RAP runtime does (its control API's 401 names its realm). */
async function isRapRuntime(base: string): Promise<boolean> {
  try {
    const answer = await fetch(new URL("/tools", base), {
      redirect: "manual",
      signal: AbortSignal.timeout(5_000),
    });
    await answer.body?.cancel();
    return (
      answer.status === 401 &&
      /realm="agentauth-rap-runtime"/.test(answer.headers.get("www-authenticate") ?? "")
    );
  } catch {
    return false;
  }
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
