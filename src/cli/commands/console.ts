/** `agentauth console`: the local web page over the vault (docs/console.md). Flags in, startConsole, Ctrl-C closes. */

import { join } from "node:path";
import {
  CONSOLE_LINK_FILE,
  type ConnectTarget,
  linkFileCandidates,
  requestLoginLink,
  startConsole,
} from "../../console/index.ts";
import { peerText } from "../../core/display.ts";
import { agentauthHome, ensureHome } from "../../core/home.ts";
import { createLogger } from "../../core/log.ts";
import { shellCommand } from "../../core/self-command.ts";
import { presetNames, resolveProvider } from "../../providers/index.ts";
import { openVault } from "../../vault/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

export async function consoleCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      port: { type: "string", default: "0" },
      json: { type: "boolean", default: false },
      link: { type: "boolean", default: false },
      "connect-issuer": { type: "string" },
      "connect-client-id": { type: "string" },
      "connect-scope": { type: "string" },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (values.link) return freshLink(io, values);
  const port = parseInteger(values.port, "--port", 0, 65535);
  const connectTargets = connectTargetsFrom(values);
  const store = openVault({ env: io.env });
  try {
    const running = await startConsole({
      store,
      providers: resolveProvider,
      connectTargets,
      port,
      linkFile: join(ensureHome(io.env), CONSOLE_LINK_FILE),
      names: { presets: presetNames() },
      // How this installation runs from a shell (npx agentauth in a project), as the demo's commands say it.
      linkCommand: `${io.env.AGENTAUTH_HOME ? `AGENTAUTH_HOME=${io.env.AGENTAUTH_HOME} ` : ""}${shellCommand()} console --link`,
      logger: values.json
        ? createLogger({ fields: { component: "console" } })
        : createLogger({ level: "warn", write: (line) => io.stderr(logLineInWords(line)) }),
    });
    const terminated = untilTerminated();
    if (values.json) {
      io.stdout(jsonLine({ event: "ready", url: running.url, loginUrl: running.loginUrl }));
    } else {
      io.stdout(
        `agentauth console is running at ${running.url}\n` +
          `Open this link in your browser (it works once):\n  ${running.loginUrl}\n` +
          "Ctrl-C stops it.\n",
      );
    }
    await terminated;
    await running.close();
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

/** `--link`: a fresh one-time link from the console already running over this home (link-file.ts). */
async function freshLink(
  io: CliIo,
  values: { json: boolean; port: string; [flag: string]: unknown },
): Promise<number> {
  const others = ["connect-issuer", "connect-client-id", "connect-scope"].filter(
    (flag) => values[flag] !== undefined,
  );
  if (values.port !== "0" || others.length > 0) {
    throw new UsageError(
      "--link asks a running console for a link; it takes no other option but --json",
    );
  }
  const link = await requestLoginLink(linkFileCandidates(agentauthHome(io.env)));
  if (values.json) io.stdout(jsonLine({ url: link.url, loginUrl: link.loginUrl }));
  else {
    io.stdout(
      `A fresh link to the console at ${link.url} (it works once, within 10 minutes):\n  ${link.loginUrl}\n`,
    );
  }
  return EXIT.ok;
}

/** A JSON log line as a person reads it in a terminal: "console: warning: connect_failed: why". */
function logLineInWords(line: string): string {
  try {
    const record = JSON.parse(line) as {
      level?: string;
      event?: string;
      error?: { message?: string };
    };
    const why = record.error?.message ? `: ${peerText(record.error.message, { max: 300 })}` : "";
    return `agentauth console: ${record.level === "error" ? "error" : "warning"}: ${peerText(String(record.event))}${why}\n`;
  } catch {
    return "";
  }
}

function connectTargetsFrom(values: {
  "connect-issuer"?: string;
  "connect-client-id"?: string;
  "connect-scope"?: string;
}): ConnectTarget[] {
  const issuer = values["connect-issuer"];
  const clientId = values["connect-client-id"];
  if (issuer === undefined && clientId === undefined) {
    if (values["connect-scope"] !== undefined) {
      throw new UsageError("--connect-scope needs --connect-issuer and --connect-client-id");
    }
    return [];
  }
  if (!issuer || !clientId) {
    throw new UsageError("--connect-issuer and --connect-client-id go together");
  }
  const url = URL.parse(issuer);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new UsageError("--connect-issuer must be an http(s) URL");
  }
  return [
    {
      id: "connect",
      label: `Sign in at ${url.host}`,
      issuer,
      clientId,
      scope: values["connect-scope"] ?? "openid profile email offline_access",
    },
  ];
}
