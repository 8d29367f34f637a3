/** `agentauth ahp …`: `host serve` runs an example host; `status` and `login` are the client journey. */

import type { CliIo } from "../io.ts";
import { AHP_CLIENT_USAGE, ahpClientCommand } from "./ahp-client.ts";
import { AHP_HOST_USAGE, ahpHostCommand } from "./ahp-host.ts";

export const AHP_USAGE = `${AHP_CLIENT_USAGE}\n${AHP_HOST_USAGE}`;

export function ahpCommand(argv: string[], io: CliIo): Promise<number> {
  const [area, ...rest] = argv;
  return area === "host" ? ahpHostCommand(rest, io) : ahpClientCommand(argv, io);
}
