/** `agentauth ahp …`: `host serve` runs an example host; `status` and `login` are the client journey. */

import type { CliIo } from "../io.ts";
import { ahpClientCommand } from "./ahp-client.ts";
import { ahpHostCommand } from "./ahp-host.ts";

export function ahpCommand(argv: string[], io: CliIo): Promise<number> {
  const [area, ...rest] = argv;
  return area === "host" ? ahpHostCommand(rest, io) : ahpClientCommand(argv, io);
}
