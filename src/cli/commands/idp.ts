/** `agentauth idp serve`: the embedded authorization server, with the ready-line convention every server follows. */

import { createLogger } from "../../core/log.ts";
import { startIdp } from "../../idp/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

export const IDP_USAGE = `agentauth idp serve [--port N] [--auto-approve-as USER] [--access-token-ttl SECONDS] [--device-interval SECONDS] [--client-metadata-documents] [--client-metadata-loopback]
  Runs the embedded OAuth/OIDC authorization server on 127.0.0.1. Prints one JSON ready line on stdout,
  logs on stderr, exits on SIGTERM. --auto-approve-as signs in and consents as a demo user (alice, bob,
  carol) on every authorization or device page: for tests and unattended demos only.`;

const SERVE_HELP = `agentauth idp serve [options]
  Runs the embedded OAuth 2.0 / OpenID Connect authorization server (oidc-provider) on 127.0.0.1, with demo users
  alice, bob and carol (password = name; its login page lists them: a demo server). Prints one JSON ready line on stdout,
  {"event":"ready","issuer":"http://127.0.0.1:PORT"}, logs JSON lines on stderr, and exits on SIGTERM (0) or
  Ctrl-C (130).

  --port N                     port to listen on (default 0: a free one)
  --auto-approve-as USER       sign in and consent as USER (alice, bob, carol) on every page: tests and demos only
  --access-token-ttl SECONDS   access token lifetime, 1 to 86400 (default the server's)
  --device-interval SECONDS    the device flow's polling interval, 1 to 60 (default the server's)
  --client-metadata-documents  accept client_id URLs (Client ID Metadata Documents, as MCP clients use them) and
                               advertise client_id_metadata_document_supported; https documents on public hosts only
  --client-metadata-loopback   with --client-metadata-documents, also http://127.0.0.1 documents: tests and demos only

  Clients: the public client agentauth-cli (PKCE, redirects to http://127.0.0.1/callback on any port, device flow),
  and RFC 7591 dynamic registration at /reg. An authorization request without a scope gets "read" when it names a
  resource (RFC 8707), else "openid" (RFC 6749 §3.3).

  Example:
    agentauth idp serve --port 4444 --auto-approve-as alice`;

export const IDP_HELP: Record<string, string> = { "": IDP_USAGE, serve: SERVE_HELP };

export async function idpCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "serve") throw new UsageError(`unknown idp command '${sub ?? ""}'`);
  const { values } = parseFlags({
    args: rest,
    options: {
      port: { type: "string", default: "0" },
      "auto-approve-as": { type: "string" },
      "access-token-ttl": { type: "string" },
      "device-interval": { type: "string" },
      "client-metadata-documents": { type: "boolean", default: false },
      "client-metadata-loopback": { type: "boolean", default: false },
    },
    strict: true,
  });
  const port = parseInteger(values.port, "--port", 0, 65535);
  if (values["client-metadata-loopback"] && !values["client-metadata-documents"]) {
    throw new UsageError("--client-metadata-loopback goes with --client-metadata-documents");
  }
  const idp = await startIdp({
    port,
    autoApproveAs: values["auto-approve-as"],
    accessTokenTtlSeconds: values["access-token-ttl"]
      ? parseInteger(values["access-token-ttl"], "--access-token-ttl", 1, 86400)
      : undefined,
    deviceIntervalSeconds: values["device-interval"]
      ? parseInteger(values["device-interval"], "--device-interval", 1, 60)
      : undefined,
    // The demo server: its login page lists the demo accounts.
    showDemoAccounts: true,
    clientIdMetadataDocuments: values["client-metadata-documents"]
      ? { allowHttpLoopback: values["client-metadata-loopback"] }
      : undefined,
    logger: createLogger({ fields: { component: "idp" } }),
  });
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(jsonLine({ event: "ready", issuer: idp.issuer }));
  await terminated;
  await idp.close();
  return EXIT.ok;
}

export function parseInteger(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}`);
  return n;
}
