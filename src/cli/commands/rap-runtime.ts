/**
 * `agentauth rap runtime serve`: a RAP runtime on loopback. One listener serves the callback receiver
 * (`{public path}/callback/<signed capability>`) and the JSON control API (rap-runtime-control.ts). It signs every
 * request to a tool with the invocation secret `rap tool serve` uses (HMAC by default, same AGENTAUTH_HOME, no
 * flags), keeps its port and public URL across restarts (rap-runtime-settings.ts), and exits at once, closing what
 * it opened, when it cannot start: usage errors exit 2, everything else 1, each with one sentence saying what to do.
 */

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { ensureHome } from "../../core/home.ts";
import { createLogger } from "../../core/log.ts";
import { writeSecretFileSync } from "../../core/secret-file.ts";
import { DATABASE_URL_ENV, databaseUrlFromEnv } from "../../db/index.ts";
import { createRuntime, DB_FILE, type RapRuntime } from "../../rap/runtime/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { escapeForTerminal, jsonForTerminal } from "./rap-inspect.ts";
import { handleControl, send } from "./rap-runtime-control.ts";
import { readSettings, settingsPath, writeSettings } from "./rap-runtime-settings.ts";
import { TOOL_AUTH, type ToolAuthScheme, toolAuth } from "./rap-tool-auth.ts";

/** The command could not start for a reason outside the arguments (a port in use). */
export class RuntimeServeError extends AgentAuthError {
  declare readonly code: "rap_port_in_use" | "rap_listen_failed" | "rap_toolset_unreachable";
}

export async function runtimeServeCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    options: {
      toolset: { type: "string", multiple: true, default: [] },
      port: { type: "string" },
      "public-url": { type: "string" },
      db: { type: "string" },
      "key-file": { type: "string" },
      "call-timeout": { type: "string" },
      "tool-auth": { type: "string" },
      "tool-secret-file": { type: "string" },
      "tool-auth-origin": { type: "string", multiple: true, default: [] },
    },
    strict: true,
  });
  // Every usage check before anything is opened or created.
  if (values.toolset.length === 0)
    throw new UsageError("rap runtime serve needs at least one --toolset URL");
  for (const url of values.toolset) {
    if (!isHttpUrl(url)) {
      throw new UsageError(
        `--toolset ${peerText(url, { max: 80 })} is not a URL; pass a tool server's base URL, e.g. http://127.0.0.1:8700`,
      );
    }
  }
  const flagPort =
    values.port === undefined ? undefined : parseInteger(values.port, "--port", 0, 65535);
  const flagPublicUrl = values["public-url"];
  if (flagPublicUrl !== undefined && !isHttpUrl(flagPublicUrl))
    throw new UsageError("--public-url must be an http(s) URL, e.g. https://agent.example.com/rap");
  const callTimeoutMs = values["call-timeout"]
    ? parseInteger(values["call-timeout"], "--call-timeout", 1, 86_400) * 1000
    : undefined;
  const scheme = values["tool-auth"] ?? "hmac";
  if (!(TOOL_AUTH as readonly string[]).includes(scheme))
    throw new UsageError("--tool-auth must be hmac, bearer or none");
  if (scheme === "none" && values["tool-secret-file"] !== undefined)
    throw new UsageError("--tool-secret-file has no use with --tool-auth none; drop one of them");
  const authOrigins = values["tool-auth-origin"];
  for (const origin of authOrigins) {
    const url = URL.parse(origin);
    if (!url || !/^https?:$/.test(url.protocol) || url.href !== `${url.origin}/`) {
      throw new UsageError(
        `--tool-auth-origin ${peerText(origin, { max: 80 })} is not an origin; write it as https://host[:port], without a path`,
      );
    }
  }

  const databaseUrl = databaseUrlFromEnv(io.env);
  if (databaseUrl !== undefined && values.db !== undefined) {
    throw new UsageError(
      `--db names a SQLite file, but ${DATABASE_URL_ENV} is set, so the runtime uses PostgreSQL; drop one of them`,
    );
  }

  const home = ensureHome(io.env);
  const dbPath = values.db ?? join(home, DB_FILE);
  const settingsFile = settingsPath(dbPath);
  const kept = readSettings(settingsFile);
  const auth = await toolAuth(scheme as ToolAuthScheme, values["tool-secret-file"], io.env, {
    create: true,
  });
  const publicUrl = (flagPublicUrl ?? kept.publicUrl)?.replace(/\/+$/, "");
  const port = flagPort ?? kept.port ?? 0;

  // Log lines carry tool-supplied names; JSON leaves C1 controls and bidi overrides raw, so they are escaped here.
  const logger = createLogger({
    fields: { component: "rap-runtime" },
    write: (line) => process.stderr.write(escapeForTerminal(line)),
  });
  const server = createServer();
  await listen(
    server,
    port,
    flagPort === undefined && kept.port !== undefined ? settingsFile : undefined,
  );
  const actualPort = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${actualPort}`;
  let runtime: RapRuntime | undefined;
  try {
    runtime = await createRuntime({
      toolsets: values.toolset.map((toolset) => ({
        url: toolset,
        ...(auth ? { auth, authOrigins } : {}),
      })),
      ...(databaseUrl !== undefined ? { databaseUrl } : { dbPath }),
      ...(values["key-file"] !== undefined ? { keyPath: values["key-file"] } : {}),
      env: io.env,
      publicBaseUrl: publicUrl ?? url,
      callTimeoutMs,
      logger,
      hooks: {
        // The hand-off: a terminal prints the link; the runtime itself keeps no copy. Everything here came from a
        // tool, so it is printed through the peer sanitisers (no terminal escapes, no bidi tricks).
        onAuthorizationRequired: (event) => {
          const link = peerUrl(event.authUrl) ?? "(the tool sent a URL that cannot be shown)";
          io.stderr(
            `Authorization required for ${peerText(event.operation)} (call ${peerText(event.id)}): open ${link}\n`,
          );
        },
      },
    });
    const [failure, ...more] = runtime.problems().failures;
    if (failure) {
      throw new RuntimeServeError(
        "rap_toolset_unreachable",
        `${peerText(failure.message, { max: 600 })}${more.length ? ` (${more.length} more toolset(s) failed too; see the log)` : ""}`,
      );
    }
    writeSettings(settingsFile, { port: actualPort, ...(publicUrl ? { publicUrl } : {}) });
  } catch (error) {
    await runtime?.close();
    await closeServer(server);
    throw error;
  }
  if (kept.port !== undefined && kept.port !== actualPort && !publicUrl) {
    io.stderr(
      `agentauth: now on port ${actualPort} instead of ${kept.port}; callback URLs issued before no longer reach this runtime.\n`,
    );
  }
  const control = randomBytes(32).toString("base64url");
  const controlTokenFile = join(home, "rap-runtime-control.token");
  // Owner-only on every start, not only when created: a file left readable by others gets the new token too.
  writeSecretFileSync(controlTokenFile, control);
  const callbackPrefix = `${new URL(publicUrl ?? url).pathname.replace(/\/+$/, "")}/callback/`;
  const started = runtime;
  server.on("request", (req, res) => {
    if (req.url?.startsWith(callbackPrefix)) return started.handleCallback(req, res);
    handleControl(started, control, req, res).catch((error) => {
      logger.error("rap.control_failed", { error });
      send(res, 500, { error: "internal_error", message: "Retry later." });
    });
  });
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(
    `${jsonForTerminal({
      event: "ready",
      url,
      ...(publicUrl ? { publicUrl } : {}),
      store: started.storage.kind,
      // The URL without its password: which database this instance shares with the others.
      ...(started.storage.kind === "postgres" ? { database: started.storage.label } : {}),
      controlTokenFile,
      tools: started.listTools().map((t) => peerText(t.name)),
    })}\n`,
  );
  await terminated;
  await closeServer(server);
  await started.close();
  return EXIT.ok;
}

function isHttpUrl(raw: string): boolean {
  return URL.canParse(raw) && ["http:", "https:"].includes(new URL(raw).protocol);
}

/** Listens on 127.0.0.1:port; a taken port is a sentence, not a stack. `keptIn`: the port came from that file. */
async function listen(server: Server, port: number, keptIn: string | undefined): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
      throw new RuntimeServeError(
        "rap_port_in_use",
        keptIn
          ? `port ${port} (kept in ${keptIn} so that callback URLs already given to tools stay valid) is in use; ` +
              "stop the program using it, or pass --port 0 to move to a free port (callback URLs issued before will " +
              "then stop working)."
          : `port ${port} is in use; pass --port 0 for a free one.`,
      );
    }
    throw new RuntimeServeError(
      "rap_listen_failed",
      `Cannot listen on 127.0.0.1:${port} (${code ?? "error"}); pass --port 0 for a free port.`,
    );
  }
}

function closeServer(server: Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
