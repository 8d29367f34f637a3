/** `agentauth console`: the local web page over the vault (docs/console.md). Flags in, startConsole, Ctrl-C closes. */

import { type ConnectTarget, startConsole } from "../../console/index.ts";
import { createLogger } from "../../core/log.ts";
import { resolveProvider } from "../../providers/index.ts";
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
