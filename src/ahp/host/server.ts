/**
 * The WebSocket shell: an HTTP server on loopback by default whose upgrades pass the transport gate, then one
 * `AhpConnection` per socket. `maxPayload` is the hard cap (the socket closes with 1009); the connection's own
 * `maxMessageBytes` is the soft one, answered per JSON-RPC.
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, STATUS_CODES } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { isLoopback } from "../../oauth/index.ts";
import { AhpConnection } from "./connection.ts";
import type { HostContext } from "./context.ts";
import { checkGate, type TransportGateOptions } from "./gate.ts";

export interface ListenOptions {
  /** Default 127.0.0.1: AHP's threat model asks for loopback unless the transport is secured. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  gate?: TransportGateOptions;
  /** Hard cap per frame; larger frames close the socket (1009). Default 1 MiB. */
  maxPayloadBytes?: number;
}

export interface RunningAhpHost {
  url: string;
  port: number;
  connectionCount(): number;
  close(): Promise<void>;
}

export interface ServeHooks {
  onConnection(connection: AhpConnection): void;
  onClose(connection: AhpConnection): void;
}

export async function serve(
  host: HostContext,
  options: ListenOptions,
  hooks: ServeHooks,
): Promise<RunningAhpHost> {
  const bind = options.host ?? "127.0.0.1";
  const gate = options.gate ?? {};
  if (
    !isLoopback(new URL(`http://${bind.includes(":") ? `[${bind}]` : bind}`)) &&
    gate.bearer === undefined
  ) {
    host.logger.warn("ahp.exposed_without_gate", {
      host: bind,
      message:
        "Listening beyond loopback with no bearer gate: anyone who can reach the port can connect.",
    });
  }
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayloadBytes ?? 1024 * 1024,
  });
  const sockets = new Set<WebSocket>();
  const http = createServer((_req, res) => {
    res
      .writeHead(426, { upgrade: "websocket", "content-type": "text/plain" })
      .end("Upgrade Required\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    checkGate(req.headers, gate).then(
      (verdict) => {
        if (!verdict.ok) {
          host.logger.info("ahp.upgrade_refused", {
            status: verdict.status,
            reason: verdict.reason,
          });
          return refuseUpgrade(socket, verdict.status, verdict.headers);
        }
        wss.handleUpgrade(req, socket, head, (ws) => accept(ws));
      },
      (error: unknown) => {
        host.logger.error("ahp.gate_failed", { error });
        refuseUpgrade(socket, 500, {});
      },
    );
  });

  const accept = (ws: WebSocket) => {
    sockets.add(ws);
    const connection = new AhpConnection(randomUUID(), host, {
      send: (message) => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
      },
      close: (code, reason) => ws.close(code, reason),
    });
    host.logger.info("ahp.connected", { connection: connection.id });
    hooks.onConnection(connection);
    // One frame at a time per connection keeps answers in request order for synchronous handlers; async ones
    // (authenticate, commands) may interleave, as JSON-RPC allows.
    ws.on("message", (data, isBinary) => {
      const frame = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      connection.receive(frame, isBinary).catch((error: unknown) => {
        host.logger.error("ahp.receive_failed", { connection: connection.id, error });
      });
    });
    ws.on("error", (error) =>
      host.logger.info("ahp.socket_error", { connection: connection.id, error }),
    );
    ws.on("close", () => {
      sockets.delete(ws);
      connection.closed();
      hooks.onClose(connection);
    });
  };

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, bind, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  const hostPart = bind.includes(":") ? `[${bind}]` : bind;
  return {
    url: `ws://${hostPart}:${port}`,
    port,
    connectionCount: () => sockets.size,
    close: async () => {
      for (const ws of sockets) ws.close(1001, "host shutting down");
      await new Promise<void>((resolve) => {
        wss.close(() => resolve());
      });
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}

function refuseUpgrade(socket: Duplex, status: number, headers: Record<string, string>): void {
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "connection: close",
    "content-length: 0",
  ];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  socket.end(`${lines.join("\r\n")}\r\n\r\n`);
}
