/** `agentauth idp serve`: the embedded authorization server, with the ready-line convention every server follows. */

import { createLogger } from "../../core/log.ts";
import { startIdp } from "../../idp/index.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

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
