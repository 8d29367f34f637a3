/**
 * `agentauth demo` (what `npm start` runs): starts the embedded authorization server and signs in against it with
 * the device flow. With --auto-approve the command also plays the person, so it completes unattended.
 */

import { parseArgs } from "node:util";
import { createLogger } from "../../core/log.ts";
import { CLI_CLIENT_ID, type RunningIdp, startIdp } from "../../idp/index.ts";
import { type CliIo, EXIT } from "../io.ts";
import { parseInteger } from "./idp.ts";
import { printAccount, runLogin } from "./login.ts";

export const DEMO_USAGE = `agentauth demo [--auto-approve] [--port N] [--json]
  Starts the embedded authorization server (default port 4444, or a free one) and logs in with the device
  flow. Sign in as alice/alice in your browser, or pass --auto-approve to let the command do it.`;

export const DEMO_HELP: Record<string, string> = {
  "": `agentauth demo [--auto-approve] [--port N] [--json]
  Starts the embedded authorization server and signs in against it with the device flow, storing the tokens in
  the vault (what \`npm start\` runs). Open the printed URL and sign in as alice/alice, or let --auto-approve do it.

  --auto-approve   sign in and consent as alice automatically (unattended runs, CI)
  --port N         the authorization server's port (default 4444, or a free one when 4444 is taken; 0 = any)
  --json           print the stored credential (never a token) as JSON on stdout; errors as JSON too

  Example:
    agentauth demo --auto-approve`,
};

const DEFAULT_PORT = 4444;

export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "auto-approve": { type: "boolean", default: false },
      port: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const autoApprove = values["auto-approve"];
  const logger = createLogger({ level: "warn", fields: { component: "idp" } });
  const options = {
    autoApproveAs: autoApprove ? "alice" : undefined,
    logger,
    deviceIntervalSeconds: 2,
  };
  let idp: RunningIdp;
  if (values.port) {
    idp = await startIdp({ ...options, port: parseInteger(values.port, "--port", 0, 65535) });
  } else {
    // A stable port keeps the vault entry stable across runs; fall back to any free port when it is taken.
    idp = await startIdp({ ...options, port: DEFAULT_PORT }).catch(() =>
      startIdp({ ...options, port: 0 }),
    );
  }
  try {
    io.stderr(
      `Embedded authorization server running at ${idp.issuer}${autoApprove ? " (auto-approving as alice)" : ""}.\n`,
    );
    const record = await runLogin(io, {
      issuer: idp.issuer,
      client: { clientId: CLI_CLIENT_ID },
      flow: "device",
      scope: "openid profile email org offline_access",
      autoApprove,
    });
    printAccount(io, record, values.json);
    return EXIT.ok;
  } finally {
    await idp.close();
  }
}
