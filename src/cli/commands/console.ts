/** `agentauth console`: the local web page over the vault (docs/console.md). Flags in, startConsole, Ctrl-C closes. */

import { type ConnectTarget, startConsole } from "../../console/index.ts";
import { createLogger } from "../../core/log.ts";
import { resolveProvider } from "../../providers/index.ts";
import { openVault } from "../../vault/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";
import { parseInteger } from "./idp.ts";

export const CONSOLE_USAGE = `agentauth console [--port N] [--json] [--connect-issuer URL --connect-client-id ID [--connect-scope S]]
  A local web page (127.0.0.1 only) over the credential vault: connected accounts, Disconnect (revoke, then
  delete), Connect, and what happened lately. Prints a one-time login link on stdout; Ctrl-C stops it.`;

const CONSOLE_FULL_HELP = `agentauth console [options]
  Serves the console on http://127.0.0.1:PORT/ over the vault in $AGENTAUTH_HOME. It prints a login link with a
  one-time token on stdout (for you, never logged): open it in your browser; the token works once and becomes a
  session cookie. To get a new link, stop the console and start it again. Ctrl-C stops it (exit 130).

  --port N                 port to listen on (default 0: a free one)
  --json                   print one JSON ready line {"event":"ready","url":…,"loginUrl":…} instead of text
  --connect-issuer URL     offer "Connect" to this authorization server (authorization code + PKCE)
  --connect-client-id ID   its public client, which must allow http://127.0.0.1/connect/callback on any port
  --connect-scope S        the scope asked for (default "openid profile email offline_access")

  Example:
    agentauth console --port 4480 --connect-issuer http://127.0.0.1:4444 --connect-client-id agentauth-console`;

export const CONSOLE_HELP: Record<string, string> = { "": CONSOLE_FULL_HELP };

export async function consoleCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      port: { type: "string", default: "0" },
      json: { type: "boolean", default: false },
      "connect-issuer": { type: "string" },
      "connect-client-id": { type: "string" },
      "connect-scope": { type: "string" },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  const port = parseInteger(values.port, "--port", 0, 65535);
  const connectTargets = connectTargetsFrom(values);
  const store = openVault({ env: io.env });
  try {
    const running = await startConsole({
      store,
      providers: resolveProvider,
      connectTargets,
      port,
      logger: createLogger({ fields: { component: "console" } }),
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
