/** `connectAhpHost`: open, negotiate a dialect, read what the host protects, hand back an `AhpClient`. */

import { randomUUID } from "node:crypto";
import { AhpClient, type ConnectAhpOptions } from "./auth-client.ts";
import { negotiate } from "./negotiate.ts";
import { mapError } from "./rpc-socket.ts";

/**
 * Connects to an AHP host, negotiates a dialect and reads what it protects.
 *
 * @example
 * ```ts
 * const client = await connectAhpHost("ws://127.0.0.1:7000", { store: openVault() });
 * await client.authenticate();          // stored credentials, refreshed when due
 * await client.request("whoami", {});   // -32007 → authenticate → one retry
 * await client.close();
 * ```
 */
export async function connectAhpHost(url: string, options: ConnectAhpOptions): Promise<AhpClient> {
  const { socket, negotiated } = await negotiate(url, {
    ...options,
    clientId: options.clientId ?? randomUUID(),
  });
  const client = new AhpClient(
    url,
    socket,
    negotiated.dialect,
    negotiated.protocolVersion,
    options,
  );
  try {
    if (negotiated.dialect === "official")
      await client.loadRootState(negotiated.rootSnapshot?.state);
    else client.addResources(negotiated.resources);
  } catch (error) {
    await client.close();
    throw mapError(error, "subscribe");
  }
  return client;
}
