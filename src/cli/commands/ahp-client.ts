/**
 * `agentauth ahp status|login <ws-url>`: the AHP client journey against any host. Thin: parses arguments, prints,
 * and calls `connectAhpHost` (src/ahp/client). Tokens are never printed; URLs and codes go to stderr.
 */

import {
  type AhpClient,
  type AuthenticationOutcome,
  connectAhpHost,
  type ClientDialect as Dialect,
  type RenewalEvent,
  type ResourceStatus,
} from "../../ahp/client/index.ts";
import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { Secret } from "../../core/secret.ts";
import { type Spinner, startSpinner } from "../../core/spinner.ts";
import type { DevicePrompt } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

const COMMON = {
  json: { type: "boolean", default: false },
  protocol: { type: "string", default: "auto" },
  subject: { type: "string" },
} as const;

export async function ahpClientCommand(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === "status") return await statusCommand(rest, io);
    if (name === "login") return await loginCommand(rest, io);
  } catch (error) {
    throw sanitised(error);
  }
  throw new UsageError(
    name
      ? `unknown ahp command '${name}' (one of: status, login)`
      : "ahp needs a command: status, login",
  );
}

async function statusCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
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
      env: io.env,
    });
    try {
      const resources = await client.status();
      if (values.json) {
        io.stdout(
          jsonLine({
            url,
            dialect: client.dialect,
            protocolVersion: client.protocolVersion,
            resources,
          }),
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
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      ...COMMON,
      resource: { type: "string", multiple: true },
      stay: { type: "boolean", default: false },
      "client-id": { type: "string", default: "agentauth-cli" },
      "provider-client-id": { type: "string", multiple: true },
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
      env: io.env,
      providers: providerClientIds(values["provider-client-id"] ?? []),
      login: {
        client: {
          clientId: values["client-id"],
          clientSecret: clientSecret ? new Secret(clientSecret) : undefined,
        },
        signal: controller.signal,
        onDevicePrompt: (prompt, resource, covers) => {
          const others = covers.filter((r) => r.id !== resource.id).map((r) => peerText(r.label));
          const what = `${peerText(resource.label)} (${peerText(resource.resource)})`;
          showDevicePrompt(io, prompt, others.length ? `${what} and ${others.join(", ")}` : what);
          spinner = startSpinner(
            io.stderr,
            io.interactive,
            "Waiting for you to approve the sign-in…",
          );
        },
      },
      onRenewal: (event: RenewalEvent) =>
        io.stdout(values.json ? jsonLine(event) : renewalText(event)),
      onRenewalError: (error, resource) =>
        io.stderr(
          `agentauth: renewing ${peerText(resource) || "a resource"} failed: ${peerText(error.message, { max: 600 })}\n`,
        ),
      onDisconnect: (error) => disconnected?.(error),
    });
    try {
      const ids = values.resource ?? client.resources().map((r) => r.id);
      if (ids.length === 0)
        io.stderr("The host advertises no protected resources; nothing to sign in to.\n");
      for (const id of ids) {
        const [outcome] = await client.authenticate([id]);
        spinner?.stop();
        spinner = undefined;
        if (outcome) printOutcome(io, outcome, values.json);
      }
      if (!values.stay) return EXIT.ok;
      process.off("SIGINT", onSignal);
      // Not silent while it works: what it does now, and how it ends.
      io.stderr(
        `Staying connected to ${peerText(client.url)}: each token is renewed before it expires` +
          `${values.json ? " (one JSON line per renewal on stdout)" : ""}. Ctrl-C stops.\n`,
      );
      const ended = await Promise.race([untilTerminated(), lost]);
      if (ended instanceof Error) {
        io.stderr(`agentauth: ${peerText(ended.message, { max: 600 })}\n`);
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

/**
 * Error messages may quote a host or an authorization server (a JSON-RPC message, an `error_description`): they
 * reach the terminal only through `peerText`, whoever built them.
 */
function sanitised(error: unknown): unknown {
  if (!(error instanceof AgentAuthError) || error instanceof UsageError) return error;
  const clean = peerText(error.message, { max: 600 });
  if (clean === error.message) return error;
  return new AgentAuthError(error.code, clean);
}

/** `--provider-client-id github=Iv1.xxxx` → `{ github: { clientId } }` (the environment fills the rest). */
function providerClientIds(pairs: string[]): Record<string, { clientId: string }> {
  const out: Record<string, { clientId: string }> = {};
  for (const pair of pairs) {
    const match = /^([a-z][a-z0-9-]*)=(\S+)$/.exec(pair);
    if (!match?.[1] || !match[2]) {
      throw new UsageError("--provider-client-id takes PRESET=CLIENT_ID, e.g. github=Iv1.0123abcd");
    }
    out[match[1]] = { clientId: match[2] };
  }
  return out;
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

/** Everything here came from the authorization server or the host: URLs through `peerUrl`, text through `peerText`. */
function showDevicePrompt(io: CliIo, prompt: DevicePrompt, what: string): void {
  const minutes = Math.round(prompt.expiresInSeconds / 60);
  const uri = peerUrl(prompt.verificationUri);
  const complete = peerUrl(prompt.verificationUriComplete);
  const code = peerText(prompt.userCode, { max: 64 });
  // RFC 8628 §5.4: name the authorization server, so a page on another host stands out.
  const host = URL.parse(prompt.issuer)?.host;
  const at = host ? ` (authorization server ${peerText(host, { max: 200 })})` : "";
  io.stderr(
    (uri
      ? `To sign in for ${what}${at}, open\n\n  ${uri}\n\nand enter the code\n\n  ${code}\n\n`
      : `To sign in for ${what}${at}, the authorization server sent an unusable verification URL; enter the code\n\n  ${code}\n\nat its device sign-in page.\n`) +
      (complete ? `(or open ${complete} directly)\n` : "") +
      `The code expires in ${minutes} minute${minutes === 1 ? "" : "s"}.\n`,
  );
}

function printOutcome(io: CliIo, outcome: AuthenticationOutcome, json: boolean): void {
  if (json) {
    io.stdout(jsonLine({ event: "authenticated", ...outcome }));
    return;
  }
  const who = peerText(outcome.account.label ?? outcome.subject);
  const left =
    outcome.expiresIn === undefined ? "" : `; the token expires in ${outcome.expiresIn}s`;
  io.stdout(
    `Authenticated for ${peerText(outcome.id)} as ${who} (issuer ${peerText(outcome.issuer)})${left}.\n`,
  );
}

/** One renewal in words: which resource, why, and when the new token expires. */
function renewalText(event: RenewalEvent): string {
  const left =
    event.expiresIn === undefined ? "" : `; the new token expires in ${event.expiresIn}s`;
  return `Renewed ${peerText(event.resource)} (${event.trigger})${left}.\n`;
}

function describeStatus(client: AhpClient, resources: ResourceStatus[]): string {
  const lines = [
    `${peerText(client.url)}: AHP ${client.dialect} (${peerText(client.protocolVersion)})`,
  ];
  if (resources.length === 0) lines.push("  no protected resources");
  for (const r of resources) {
    const id = peerText(r.id);
    const resource = peerText(r.resource);
    lines.push(
      `  ${id}${r.id === r.resource ? "" : ` (${resource})`}: ${peerText(r.label)}${r.required ? "" : " [optional]"}`,
      `    authorization servers: ${r.authorizationServers.map((a) => peerText(a)).join(", ") || "none"}`,
      `    ${readiness(r, client.url)}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** What a person wants to know after `ahp login`: can this machine authenticate to the resource without a sign-in? */
function readiness(r: ResourceStatus, url: string): string {
  const c = r.credential;
  const login = `run 'agentauth ahp login --resource ${peerText(r.id)} ${peerText(url)}'`;
  if (!c.present) return `sign-in needed: ${login} (no credential in the vault)`;
  const who = peerText(c.account ?? c.subject);
  if (c.status === "login_required")
    return `sign-in needed: ${login} (the vault's credential for ${who} was refused)`;
  if (!r.ready)
    return `sign-in needed: ${login} (the token for ${who} expired and cannot be refreshed)`;
  const expiry =
    c.expiresIn === undefined
      ? ""
      : c.expired
        ? ", expired but refreshable"
        : `, expires in ${c.expiresIn}s${c.refreshable ? ", refreshable" : ""}`;
  const held = r.authenticated ? "; authenticated on this connection" : "";
  return `ready: the vault holds a valid token for ${who}${expiry}${held}`;
}
