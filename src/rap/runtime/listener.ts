/** The runtime's own HTTP listener for the callback receiver: one loopback (by default) server per `listen()`. */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Listening } from "./api.ts";

/** Listens on `host:port` (default 127.0.0.1, a free port) and serves `handler`; `close` ends open connections. */
export async function listenWith(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: { port?: number; host?: string } = {},
): Promise<Listening> {
  const host = options.host ?? "127.0.0.1";
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
