/** `agentauth rap tool serve | runtime serve | inspect`: the RAP halves as long-running commands, and a toolset viewer. */

import { join } from "node:path";
import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { agentauthHome } from "../../core/home.ts";
import { createLogger } from "../../core/log.ts";
import { DatabaseError, databaseUrlFromEnv } from "../../db/index.ts";
import { startExampleTool } from "../../rap/example/index.ts";
import {
  DEFAULT_INVOCATION_SECRET_FILE,
  type InvocationAuth,
  loadInvocationSecret,
} from "../../rap/invocation-auth.ts";
import {
  DEFAULT_REPLAY_LEDGER_FILE,
  openPostgresToolState,
  openSqliteReplayLedger,
  type ReplayLedger,
  ReplayLedgerError,
  type ToolStateStore,
} from "../../rap/tool/index.ts";
import { loadKeyring, openVault } from "../../vault/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { inspectCommand } from "./rap-inspect.ts";
import { runtimeServeCommand } from "./rap-runtime.ts";

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
  const { values } = parseFlags({
    args: argv,
    options: {
      example: { type: "boolean", default: false },
      issuer: { type: "string" },
      port: { type: "string", default: "0" },
      "client-id": { type: "string" },
      "invocation-auth": { type: "string", default: "hmac" },
      "invocation-secret-file": { type: "string" },
    },
    strict: true,
  });
  if (!values.example)
    throw new UsageError("rap tool serve needs --example (the only built-in tool)");
  if (!values.issuer) throw new UsageError("rap tool serve --example needs --issuer URL");
  const issuer = URL.parse(values.issuer);
  if (!issuer || (issuer.protocol !== "https:" && issuer.protocol !== "http:")) {
    throw new UsageError(
      `--issuer must be an http(s) URL, such as https://login.example.com (got "${peerText(values.issuer)}")`,
    );
  }
  const mode = values["invocation-auth"];
  if (mode !== "hmac" && mode !== "bearer" && mode !== "none") {
    throw new UsageError(
      `--invocation-auth must be hmac, bearer or none (got "${peerText(mode)}")`,
    );
  }
  const port = parseInteger(values.port, "--port", 0, 65535);
  const secretFile =
    values["invocation-secret-file"] ?? join(agentauthHome(io.env), DEFAULT_INVOCATION_SECRET_FILE);
  let invocationAuth: InvocationAuth | undefined;
  if (mode === "none") {
    io.stderr(
      "agentauth: WARNING: serving without invocation authentication: any program or web page that reaches this port can run the tool's operations as any user. Use it only on a trusted test machine.\n",
    );
  } else {
    const secret = await loadInvocationSecret(secretFile, { create: true });
    invocationAuth =
      mode === "hmac" ? { scheme: "hmac-sha256", secret } : { scheme: "bearer", secret };
  }
  const store = openVault({ env: io.env });
  // AGENTAUTH_DATABASE_URL: pending sign-ins and undelivered results live in PostgreSQL, shared by every instance
  // with the same URL and vault key, and survive a restart. Without it they live in this process's memory.
  const databaseUrl = databaseUrlFromEnv(io.env);
  let state: ToolStateStore | undefined;
  // Signed invocations already accepted: in the database with it, else in a file beside the vault, so a replay is
  // refused after a restart too (issue 20 §1.3).
  let replay: ReplayLedger | undefined;
  let tool: Awaited<ReturnType<typeof startExampleTool>>;
  try {
    state = databaseUrl
      ? await openPostgresToolState({ url: databaseUrl, keyring: loadKeyring({ env: io.env }) })
      : undefined;
    replay =
      state || invocationAuth?.scheme !== "hmac-sha256"
        ? undefined
        : openSqliteReplayLedger(join(agentauthHome(io.env), DEFAULT_REPLAY_LEDGER_FILE));
    tool = await startExampleTool({
      issuer: values.issuer,
      store,
      state,
      replay,
      port,
      clientId: values["client-id"],
      invocationAuth,
      logger: createLogger({ fields: { component: "rap-tool" } }),
    });
  } catch (error) {
    await replay?.close();
    await state?.close();
    await store.close();
    io.stderr(`agentauth: ${startFailure(error, values.issuer, port)}\n`);
    return EXIT.failure;
  }
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(
    jsonLine({
      event: "ready",
      url: tool.url,
      api: tool.api.url,
      invocationAuth: invocationAuth?.scheme ?? "none",
      state: state ? state.label : "memory",
      ...(invocationAuth ? { invocationSecretFile: secretFile } : {}),
      ...(invocationAuth?.scheme === "hmac-sha256"
        ? { replayLedger: state ? state.label : replay?.label }
        : {}),
    }),
  );
  await terminated;
  await tool.close();
  await replay?.close();
  await state?.close();
  await store.close();
  return EXIT.ok;
}

/** One sentence: what failed and what to do (issue 8 §4.3). */
function startFailure(error: unknown, issuer: string, port: number): string {
  const code = (error as { code?: unknown }).code;
  // The database's own message names the redacted URL and what to check.
  if (error instanceof DatabaseError || error instanceof ReplayLedgerError) {
    return `${error.message} [${error.code}]`;
  }
  if (code === "EADDRINUSE" || code === "EACCES") {
    return `The example tool could not listen on port ${port} (${code}); choose another --port.`;
  }
  if (
    error instanceof AgentAuthError &&
    /^(discovery|network|timeout|server_error|registration)/.test(error.code)
  ) {
    return `The example tool could not start because the issuer ${peerText(issuer)} did not answer as an OAuth authorization server (${error.code}); check that it is running and that --issuer is its exact URL.`;
  }
  const reason =
    error instanceof AgentAuthError
      ? `${error.message.replace(/\.$/, "")} [${error.code}]`
      : "an unexpected error";
  return `The example tool could not start (${reason}); check --issuer and try again.`;
}
