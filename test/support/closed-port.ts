/**
 * Test support: a loopback port that refuses connections.
 *
 * "Bind port 0, close, reuse the number" is racy: tests run in parallel processes that all bind
 * port 0, so the kernel may hand the same number to another test's server a moment later, and the
 * connection is then accepted and hangs (seen in CI as "timed out" instead of ECONNREFUSED). This
 * picks a port below the kernel's ephemeral range, which no test server is given, and checks that
 * a connection to it is refused right now.
 */

import { readFileSync } from "node:fs";
import { connect } from "node:net";

function ephemeralLow(): number {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/);
    const value = Number(low);
    return Number.isInteger(value) && value > 12_000 ? value : 32_768;
  } catch {
    return 32_768;
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

export async function closedPort(): Promise<number> {
  const high = ephemeralLow();
  const low = high - 10_000;
  for (let i = 0; i < 50; i++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await refused(port)) return port;
  }
  throw new Error("no closed loopback port found below the ephemeral range");
}
