/** `agentauth ahp host serve --example --issuer URL [--port N]`: the example AHP host, with the ready-line convention. */

import { startExampleHost } from "../../ahp/host/index.ts";
import { createLogger } from "../../core/log.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { untilTerminated } from "../lifecycle.ts";

export async function ahpHostCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "serve") throw new UsageError(`unknown ahp host command '${sub ?? ""}'`);
  const { values } = parseFlags({
    args: rest,
    options: {
      example: { type: "boolean", default: false },
      issuer: { type: "string" },
      port: { type: "string", default: "0" },
    },
    strict: true,
  });
  if (!values.example) throw new UsageError("only the example host can be served: pass --example");
  const issuer = values.issuer;
  if (!issuer || !URL.canParse(issuer))
    throw new UsageError("--issuer must be the authorization server's URL");
  const port = parseInteger(values.port, "--port", 0, 65535);
  const host = await startExampleHost({
    issuer,
    port,
    logger: createLogger({ fields: { component: "ahp-host" }, write: (line) => io.stderr(line) }),
  });
  // Listen for the end before saying ready: whoever reads the ready line may stop us at once.
  const terminated = untilTerminated();
  io.stdout(jsonLine({ event: "ready", url: host.url }));
  await terminated;
  await host.close();
  return EXIT.ok;
}
