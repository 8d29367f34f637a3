/**
 * startDemo: the whole system on loopback, in one data folder. Order: the authorization server → the vault → the
 * protected API and the example RAP tool → the RAP runtime → the example AHP host → the console. Each part that
 * started is closed again in reverse order, by close() and by a start that fails half-way (no server is left).
 */

import { join, resolve } from "node:path";
import { EXAMPLE_ALPHA, EXAMPLE_BETA, startExampleHost } from "../ahp/host/index.ts";
import {
  ActivityLog,
  CONSOLE_LINK_FILE,
  type ConnectTarget,
  type ConsolePanel,
  hooksFor,
  PendingBoard,
  startConsole,
} from "../console/index.ts";
import type { Logger } from "../core/log.ts";
import { silentLogger } from "../core/log.ts";
import { selfArgv, shellCommand } from "../core/self-command.ts";
import { databaseUrlFromEnv } from "../db/index.ts";
import { CONSOLE_CLIENT_ID, EXAMPLE_TOOL_CLIENT_ID, startIdp } from "../idp/index.ts";
import { presetNames } from "../providers/index.ts";
import { startExampleTool } from "../rap/example/index.ts";
import { DEFAULT_INVOCATION_SECRET_FILE, loadInvocationSecret } from "../rap/invocation-auth.ts";
import { createRuntime, DB_FILE, type RapRuntime } from "../rap/runtime/index.ts";
import { DEFAULT_REPLAY_LEDGER_FILE, openSqliteReplayLedger } from "../rap/tool/index.ts";
import { openVault } from "../vault/index.ts";
import type { CredentialStore } from "../vault/types.ts";
import { isDemoFolder, prepareDataFolder } from "./data-folder.ts";
import { acquireDemoLock, alreadyRunningMessage, DemoRunningError, runningDemo } from "./lock.ts";
import { createAcpPanel } from "./panels/acp.ts";
import { createAhpPanel } from "./panels/ahp.ts";
import { createRapPanel } from "./panels/rap.ts";
import { choosePorts, type DemoPorts, readSavedPorts, savePorts } from "./ports.ts";
import type { DemoProgress, DemoStep, DemoUrls } from "./progress.ts";

export const DEFAULT_AHP_TOKEN_TTL_SECONDS = 120;

export interface DemoOptions {
  /** Everything lives here; `fresh` empties it first (only a folder marked as the demo's). */
  dataDir: string;
  fresh?: boolean;
  /** Script mode: the authorization server signs in and consents as this user. */
  autoApproveAs?: string;
  /** The console's port (0 = any free one); default: the saved one, else a free one. */
  consolePort?: number;
  onProgress?: (step: DemoProgress) => void;
  logger?: Logger;
  /** Short tokens for the AHP resources so expiry and renewal show (default 120). */
  ahpTokenTtlSeconds?: number;
}

export type { DemoUrls };

export interface RunningDemo {
  dataDir: string;
  urls: DemoUrls;
  ports: DemoPorts;
  /** Components whose saved port was taken, so they moved this time. */
  moved: string[];
  /** The example tool's protected API as an RFC 8707 resource: what its users' credentials are stored for. */
  apiResource: string;
  /** The demo vault (dataDir/vault.db). */
  store: CredentialStore;
  runtime: RapRuntime;
  board: PendingBoard;
  activity: ActivityLog;
  /** argv that starts the example ACP agent against this demo (run it with AGENTAUTH_HOME=dataDir). */
  acpAgentCommand: string[];
  /** What the summary screen prints. */
  commands: { label: string; command: string }[];
  close(): Promise<void>;
}

/** How many times a start is tried when a port it chose was taken before its server listened on it. */
const START_ATTEMPTS = 3;

export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const dir = resolve(options.dataDir);
  // Before anything is printed or changed: a demo already running here is named, and nothing else happens.
  const holder = runningDemo(dir);
  if (holder)
    throw new DemoRunningError(
      "demo_already_running",
      alreadyRunningMessage(dir, holder, shellCommand()),
    );
  // A folder used before keeps its authorization server's port (lock.ts, ports.ts): decided once, before a retry
  // below sees the ports a failed first attempt saved.
  const pinIssuer = !options.fresh && isDemoFolder(dir) && readSavedPorts(dir).idp !== undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options, pinIssuer);
    } catch (error) {
      // choosePorts saw every port free, but another process (a second demo starting at the same moment, which
      // prefers the same IdP port) took one before our server listened on it. The failed start closed what it
      // had started; the next one sees that port taken and moves that server (named in `moved`), or for an
      // explicit console port says demo_port_taken.
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt === START_ATTEMPTS)
        throw error;
    }
  }
}

async function startOnce(options: DemoOptions, pinIssuer: boolean): Promise<RunningDemo> {
  const logger = options.logger ?? silentLogger;
  // The demo keeps everything in its data folder. A PostgreSQL URL from the shell would put the vault there while
  // the runtime stays in the folder, and the ACP agent it starts (which inherits this environment) would follow the
  // URL too: the parts would no longer see one another's credentials. So the demo ignores it, says so, and its
  // printed commands unset it.
  const databaseUrlIgnored = databaseUrlFromEnv(process.env) !== undefined;
  if (databaseUrlIgnored) {
    logger.warn("demo.database_url_ignored", {
      why: "the demo keeps its vault and RAP state in its data folder; AGENTAUTH_DATABASE_URL is for deployments",
    });
    delete process.env.AGENTAUTH_DATABASE_URL;
  }
  const report = options.onProgress ?? (() => {});
  const closers: { step: string; close: () => Promise<void> }[] = [];
  const closeAll = async () => {
    for (const { step, close } of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        logger.warn("demo.close_failed", { step, error });
      }
    }
  };
  const step = async <T>(name: DemoStep, run: () => Promise<T>, url?: (value: T) => string) => {
    report({ step: name, phase: "start" });
    try {
      const value = await run();
      report({ step: name, phase: "done", ...(url ? { url: url(value) } : {}) });
      return value;
    } catch (error) {
      report({ step: name, phase: "failed", detail: failureText(error) });
      throw error;
    }
  };

  try {
    // The lock is taken before --fresh empties a marked folder (which keeps the lock), else right after creating it.
    const dir = resolve(options.dataDir);
    let lock = isDemoFolder(dir) ? acquireDemoLock(dir) : undefined;
    if (lock) closers.push({ step: "lock", close: async () => lock?.release() });
    const folder = await step("folder", async () =>
      prepareDataFolder(options.dataDir, { fresh: options.fresh }),
    );
    const dataDir = folder.dir;
    if (!lock) {
      lock = acquireDemoLock(dataDir);
      closers.push({ step: "lock", close: async () => lock?.release() });
    }
    const { ports, moved } = await choosePorts(
      readSavedPorts(dataDir),
      options.consolePort !== undefined ? { console: options.consolePort } : {},
      undefined,
      pinIssuer,
    );
    savePorts(dataDir, ports);

    const ttl = options.ahpTokenTtlSeconds ?? DEFAULT_AHP_TOKEN_TTL_SECONDS;
    const idp = await step(
      "idp",
      () =>
        startIdp({
          port: ports.idp,
          dataDir,
          showDemoAccounts: true,
          autoApproveAs: options.autoApproveAs,
          resourceTokenTtlSeconds: { [EXAMPLE_ALPHA]: ttl, [EXAMPLE_BETA]: ttl },
          deviceIntervalSeconds: 2,
          logger: logger.child({ component: "idp" }),
        }),
      (value) => value.issuer,
    );
    closers.push({ step: "idp", close: () => idp.close() });

    const store = await step("vault", async () =>
      // The folder's key file, or AGENTAUTH_VAULT_KEY when set: the same key the printed commands
      // (AGENTAUTH_HOME=<folder> agentauth …) and the example agent use, so all of them read one vault.
      openVault({ home: dataDir, env: process.env }),
    );
    closers.push({ step: "vault", close: () => store.close() });

    // HMAC invocation auth (what `rap tool serve` defaults to), one secret file shared by the tool and the runtime,
    // and the tool's replay ledger in the folder too (a restarted demo still refuses a replayed invocation).
    const { tool, invocationAuth, replay } = await step(
      "tool",
      async () => {
        const invocationAuth = {
          scheme: "hmac-sha256" as const,
          secret: await loadInvocationSecret(join(dataDir, DEFAULT_INVOCATION_SECRET_FILE), {
            create: true,
          }),
        };
        const replay = openSqliteReplayLedger(join(dataDir, DEFAULT_REPLAY_LEDGER_FILE));
        try {
          const tool = await startExampleTool({
            issuer: idp.issuer,
            store,
            port: ports.tool,
            apiPort: ports.api,
            clientId: EXAMPLE_TOOL_CLIENT_ID,
            invocationAuth,
            replay,
            logger: logger.child({ component: "rap-tool" }),
          });
          return { tool, invocationAuth, replay };
        } catch (error) {
          await replay.close();
          throw error;
        }
      },
      (value) => value.tool.url,
    );
    closers.push({
      step: "tool",
      close: async () => {
        await tool.close();
        await replay.close();
      },
    });

    const board = new PendingBoard();
    const activity = new ActivityLog();
    let runtime: RapRuntime | undefined;
    const rapPanel = createRapPanel({ runtime: () => runtime, board });
    closers.push({ step: "rap-panel", close: () => rapPanel.close() });
    const started = await step(
      "runtime",
      async () => {
        const created = await createRuntime({
          toolsets: [{ url: tool.url, auth: invocationAuth }],
          dbPath: join(dataDir, DB_FILE),
          hooks: hooksFor(board, activity, rapPanel.hooks),
          logger: logger.child({ component: "rap-runtime" }),
        });
        try {
          const listening = await created.listen({ port: ports.runtime, host: "127.0.0.1" });
          return { created, listening };
        } catch (error) {
          await created.close();
          throw error;
        }
      },
      (value) => value.listening.url,
    );
    runtime = started.created;
    closers.push({ step: "runtime", close: () => started.created.close() });
    await rapPanel
      .load()
      .catch((error: unknown) => logger.warn("demo.rap_panel_load_failed", { error }));

    const ahp = await step(
      "ahp",
      () =>
        startExampleHost({
          issuer: idp.issuer,
          port: ports.ahp,
          logger: logger.child({ component: "ahp-host" }),
        }),
      (value) => value.url,
    );
    closers.push({ step: "ahp", close: () => ahp.close() });

    // The ACP and AHP panels (src/demo/panels): each closes what it started (agent processes, connections).
    // This Node and this build's CLI (src/cli/main.ts in a checkout, dist/cli/main.js installed).
    const acpAgentCommand = [...selfArgv(), "acp", "example-agent", "--issuer", idp.issuer];
    const autoApprove = options.autoApproveAs !== undefined;
    const peerPanels: ConsolePanel[] = [];
    const acpPanel = createAcpPanel({
      issuer: idp.issuer,
      dataDir,
      store,
      activity,
      logger: logger.child({ component: "acp-panel" }),
      agentCommand: acpAgentCommand,
      terminalCommand: acpStatusCommand(dataDir, idp.issuer, databaseUrlIgnored),
      autoApprove,
    });
    peerPanels.push(acpPanel);
    closers.push({ step: "acp-panel", close: async () => acpPanel.close?.() });
    const ahpPanel = createAhpPanel({
      ahpUrl: ahp.url,
      issuer: idp.issuer,
      dataDir,
      store,
      activity,
      logger: logger.child({ component: "ahp-panel" }),
      autoApprove,
    });
    peerPanels.push(ahpPanel);
    closers.push({ step: "ahp-panel", close: async () => ahpPanel.close?.() });

    const connectTarget: ConnectTarget = {
      id: "demo-idp",
      label: "Demo authorization server (OpenID profile)",
      issuer: idp.issuer,
      clientId: CONSOLE_CLIENT_ID,
      scope: "openid profile email offline_access",
    };
    const consoleServer = await step(
      "console",
      () =>
        startConsole({
          store,
          board,
          activity,
          connectTargets: [connectTarget],
          panels: [rapPanel as ConsolePanel, ...peerPanels],
          port: ports.console,
          linkFile: join(dataDir, CONSOLE_LINK_FILE),
          names: {
            issuers: { [idp.issuer]: "Demo authorization server" },
            resources: {
              [tool.api.resource]: "Demo API",
              [EXAMPLE_ALPHA]: "Alpha API",
              [EXAMPLE_BETA]: "Beta API",
            },
            presets: presetNames(),
          },
          linkCommand: consoleLinkCommand(dataDir),
          logger: logger.child({ component: "console" }),
        }),
      (value) => value.url,
    );
    closers.push({ step: "console", close: () => consoleServer.close() });
    lock.setConsole(consoleServer.url);

    const urls: DemoUrls = {
      issuer: idp.issuer,
      api: tool.api.url,
      tool: tool.url,
      runtime: started.listening.url,
      ahp: ahp.url,
      console: consoleServer.url,
      consoleLogin: consoleServer.loginUrl,
    };
    return {
      dataDir,
      urls,
      apiResource: tool.api.resource,
      ports,
      moved,
      store,
      runtime: started.created,
      board,
      activity,
      acpAgentCommand,
      commands: demoCommands(dataDir, urls, databaseUrlIgnored),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/**
 * The printed commands' start: the demo folder as AGENTAUTH_HOME, then how this installation runs from a shell
 * (`npx agentauth` installed in a project, `agentauth` installed globally, `npm run agentauth --` in a checkout).
 */
function cliPrefix(dataDir: string, unsetDatabaseUrl: boolean, cli: string): string {
  const unset = unsetDatabaseUrl ? "AGENTAUTH_DATABASE_URL= " : "";
  return `AGENTAUTH_HOME=${shellWord(dataDir)} ${unset}${cli}`;
}

/** What prints a fresh console link for this demo (the printed one works once). */
export function consoleLinkCommand(dataDir: string, cli = shellCommand()): string {
  return `${cliPrefix(dataDir, false, cli)} console --link`;
}

/** `agentauth` as the agent command is the same agentauth that runs `acp` (src/cli/commands/acp.ts). */
function exampleAgentWords(issuer: string): string {
  return `agentauth acp example-agent --issuer ${issuer}`;
}

/** What the ACP panel suggests for a terminal: the same `acp status` the summary prints. */
export function acpStatusCommand(
  dataDir: string,
  issuer: string,
  unsetDatabaseUrl = false,
  cli = shellCommand(),
): string {
  return `${cliPrefix(dataDir, unsetDatabaseUrl, cli)} acp status -- ${exampleAgentWords(issuer)}`;
}

/** Pure: the commands the summary prints, one per protocol, each against this demo's folder and addresses. */
export function demoCommands(
  dataDir: string,
  urls: DemoUrls,
  /** The shell has AGENTAUTH_DATABASE_URL, which the demo ignored: the commands unset it too. */
  unsetDatabaseUrl = false,
  /** How this agentauth runs from a shell (core/self-command.ts). */
  cli = shellCommand(),
): { label: string; command: string }[] {
  const prefix = cliPrefix(dataDir, unsetDatabaseUrl, cli);
  const agent = exampleAgentWords(urls.issuer);
  return [
    {
      label: "a fresh console link (the one above works once; this one too, for 10 minutes)",
      command: `${prefix} console --link`,
    },
    { label: "the accounts in the demo vault", command: `${prefix} vault list` },
    {
      label: "ACP: the example agent's sign-in state",
      command: acpStatusCommand(dataDir, urls.issuer, unsetDatabaseUrl, cli),
    },
    { label: "ACP: sign in to the example agent", command: `${prefix} acp login -- ${agent}` },
    { label: "AHP: what the example host protects", command: `${prefix} ahp status ${urls.ahp}` },
    { label: "AHP: authenticate to the example host", command: `${prefix} ahp login ${urls.ahp}` },
    { label: "RAP: the example tool's operations", command: `${prefix} rap inspect ${urls.tool}` },
    {
      label: "RAP: a runtime of your own against the example tool",
      command: `${prefix} rap runtime serve --toolset ${urls.tool} --db ${shellWord(join(dataDir, "cli-rap-runtime.db"))}`,
    },
  ];
}

/** A path as one shell word: single-quoted when it holds anything but safe characters. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

function failureText(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
