/**
 * `agentauth ahp status|login <ws-url>`: the AHP client journey against any host. Thin: parses arguments, prints,
 * and calls `connectAhpHost` (src/ahp/client). Tokens are never printed; URLs and codes go to stderr.
 */

import { parseArgs } from "node:util";
import {
  type AhpClient,
  type AuthenticationOutcome,
  connectAhpHost,
  type ClientDialect as Dialect,
  type RenewalEvent,
  type ResourceStatus,
} from "../../ahp/client/index.ts";
import { Secret } from "../../core/secret.ts";
import { type Spinner, startSpinner } from "../../core/spinner.ts";
import type { DevicePrompt } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

export const AHP_CLIENT_USAGE = `agentauth ahp status [--json] [--protocol auto|official|seed] [--subject S] <ws-url>
  Connects to an AHP host and lists the resources it protects with this machine's state for each
  (credential in the vault, expiry, account; authenticated on this connection or not).
agentauth ahp login [--resource R]… [--stay] [--json] [--client-id ID] [--subject S] [--protocol …] <ws-url>
  Authenticates to the host for each resource (default: all it advertises): a stored credential, refreshed
  when due, else a device login at the resource's authorization server (URL and code on stderr). With
  --stay, keeps the connection and renews tokens until interrupted, one JSON line per renewal on stdout.`;

const COMMON = {
  json: { type: "boolean", default: false },
  protocol: { type: "string", default: "auto" },
  subject: { type: "string" },
} as const;

export async function ahpClientCommand(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === "status") return statusCommand(rest, io);
  if (name === "login") return loginCommand(rest, io);
  throw new UsageError(
    name
      ? `unknown ahp command '${name}' (one of: status, login)`
      : "ahp needs a command: status, login",
  );
}

async function statusCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: COMMON,
    allowPositionals: true,
  });
  const url = oneUrl(positionals);
  const store = openVault({ env: io.env });
  try {
    const client = await connectAhpHost(url, {
      store,
      subject: values.subject,
      dialects: dialectsOf(values.protocol),
    });
    try {
      const resources = await client.status();
      if (values.json) {
        io.stdout(
          `${JSON.stringify({ url, dialect: client.dialect, protocolVersion: client.protocolVersion, resources })}\n`,
        );
      } else {
        io.stdout(describeStatus(client, resources));
      }
      return EXIT.ok;
    } finally {
      await client.close();
    }
  } finally {
    await store.close();
  }
}

async function loginCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...COMMON,
      resource: { type: "string", multiple: true },
      stay: { type: "boolean", default: false },
      "client-id": { type: "string", default: "agentauth-cli" },
    },
    allowPositionals: true,
  });
  const url = oneUrl(positionals);
  const clientSecret = io.env.AGENTAUTH_CLIENT_SECRET;
  const store = openVault({ env: io.env });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once("SIGINT", onSignal);
  let spinner: Spinner | undefined;
  let disconnected: ((error: Error) => void) | undefined;
  const lost = new Promise<Error>((resolve) => {
    disconnected = resolve;
  });
  try {
    const client = await connectAhpHost(url, {
      store,
      subject: values.subject,
      dialects: dialectsOf(values.protocol),
      renewBeforeExpiry: values.stay,
      login: {
        client: {
          clientId: values["client-id"],
          clientSecret: clientSecret ? new Secret(clientSecret) : undefined,
        },
        signal: controller.signal,
        onDevicePrompt: (prompt, resource) => {
          showDevicePrompt(io, prompt, `${resource.label} (${resource.resource})`);
          spinner = startSpinner(
            io.stderr,
            io.interactive,
            "Waiting for you to approve the sign-in…",
          );
        },
      },
      onRenewal: (event: RenewalEvent) => io.stdout(`${JSON.stringify(event)}\n`),
      onRenewalError: (error, resource) =>
        io.stderr(`agentauth: renewing ${resource || "a resource"} failed: ${error.message}\n`),
      onDisconnect: (error) => disconnected?.(error),
    });
    try {
      const ids = values.resource ?? client.resources().map((r) => r.id);
      if (ids.length === 0) io.stderr("The host advertises no protected resources.\n");
      for (const id of ids) {
        const [outcome] = await client.authenticate([id]);
        spinner?.stop();
        spinner = undefined;
        if (outcome) printOutcome(io, outcome, values.json);
      }
      if (!values.stay) return EXIT.ok;
      process.off("SIGINT", onSignal);
      const ended = await Promise.race([untilTerminated(), lost]);
      if (ended instanceof Error) {
        io.stderr(`agentauth: ${ended.message}\n`);
        return EXIT.failure;
      }
      return EXIT.ok;
    } finally {
      await client.close();
    }
  } finally {
    spinner?.stop();
    process.off("SIGINT", onSignal);
    await store.close();
  }
}

function oneUrl(positionals: string[]): string {
  if (positionals.length !== 1 || !positionals[0]) {
    throw new UsageError("give exactly one host URL (ws://… or wss://)");
  }
  return positionals[0];
}

function dialectsOf(protocol: string): Dialect[] {
  if (protocol === "auto") return ["official", "seed"];
  if (protocol === "official" || protocol === "seed") return [protocol];
  // Deprecated spelling from before the rename (the official AHP has 0.9 and 1.x baselines).
  if (protocol === "1.x") return ["official"];
  throw new UsageError("--protocol must be auto, official or seed");
}

function showDevicePrompt(io: CliIo, prompt: DevicePrompt, what: string): void {
  const minutes = Math.round(prompt.expiresInSeconds / 60);
  io.stderr(
    `To sign in for ${what}, open\n\n  ${prompt.verificationUri}\n\nand enter the code\n\n  ${prompt.userCode}\n\n` +
      (prompt.verificationUriComplete
        ? `(or open ${prompt.verificationUriComplete} directly)\n`
        : "") +
      `The code expires in ${minutes} minute${minutes === 1 ? "" : "s"}.\n`,
  );
}

function printOutcome(io: CliIo, outcome: AuthenticationOutcome, json: boolean): void {
  if (json) {
    io.stdout(`${JSON.stringify({ event: "authenticated", ...outcome })}\n`);
    return;
  }
  const who = outcome.account.label ?? outcome.subject;
  const left =
    outcome.expiresIn === undefined ? "" : `; the token expires in ${outcome.expiresIn}s`;
  io.stdout(`Authenticated for ${outcome.id} as ${who} (issuer ${outcome.issuer})${left}.\n`);
}

function describeStatus(client: AhpClient, resources: ResourceStatus[]): string {
  const lines = [`${client.url}: AHP ${client.dialect} (${client.protocolVersion})`];
  if (resources.length === 0) lines.push("  no protected resources");
  for (const r of resources) {
    const c = r.credential;
    const credential = !c.present
      ? "no credential in the vault"
      : `${c.status === "login_required" ? "needs a new login" : "stored"} for ${c.account ?? c.subject}` +
        (c.expiresIn === undefined
          ? ""
          : c.expired
            ? ", expired"
            : `, expires in ${c.expiresIn}s`) +
        (c.refreshable ? ", refreshable" : "");
    lines.push(
      `  ${r.id}${r.id === r.resource ? "" : ` (${r.resource})`}: ${r.label}${r.required ? "" : " [optional]"}`,
      `    authorization servers: ${r.authorizationServers.join(", ") || "none"}`,
      `    vault: ${credential}`,
      `    this connection: ${r.authenticated ? "authenticated" : "not authenticated"}`,
    );
  }
  return `${lines.join("\n")}\n`;
}
