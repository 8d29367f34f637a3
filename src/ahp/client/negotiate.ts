/**
 * The negotiation shell: opens a WebSocket per attempt and runs `initialize` in each allowed dialect, in order.
 * A refusal closes that socket (official hosts close after -32005 anyway) and the next dialect gets a fresh one.
 */

import { AhpMethods } from "../wire.ts";
import {
  DEFAULT_DIALECTS,
  initializeParams,
  isDialectRefusal,
  type Negotiated,
  readInitializeResult,
  supportedVersionsOf,
} from "./dialect.ts";
import { AhpRequestError, AhpVersionError, clip } from "./errors.ts";
import type { Dialect } from "./resources.ts";
import { RpcErrorAnswer, RpcSocket, type RpcSocketOptions } from "./rpc-socket.ts";

export interface NegotiateOptions extends RpcSocketOptions {
  /** Dialects to try, in order. Default `["official", "seed"]`. */
  dialects?: readonly Dialect[];
  clientId: string;
}

export async function negotiate(
  url: string,
  options: NegotiateOptions,
): Promise<{ socket: RpcSocket; negotiated: Negotiated }> {
  const dialects = options.dialects ?? DEFAULT_DIALECTS;
  if (dialects.length === 0) throw new AhpVersionError("No AHP dialect was allowed.");
  const refusals: string[] = [];
  const supported: (string | number)[] = [];
  for (const dialect of dialects) {
    const socket = await RpcSocket.open(url, options);
    try {
      const result = await socket.request(
        AhpMethods.initialize,
        initializeParams(dialect, options.clientId),
      );
      const negotiated = readInitializeResult(dialect, result, dialects);
      if (negotiated) return { socket, negotiated };
      refusals.push(
        `${dialect}: answered version ${clip(JSON.stringify((result as { protocolVersion?: unknown }).protocolVersion))}`,
      );
    } catch (error) {
      await socket.close();
      if (error instanceof RpcErrorAnswer && isDialectRefusal(error.rpc)) {
        refusals.push(`${dialect}: ${error.rpc.code} ${clip(error.rpc.message, 80)}`);
        supported.push(...supportedVersionsOf(error.rpc));
        continue;
      }
      if (error instanceof RpcErrorAnswer) {
        throw new AhpRequestError(`The host refused initialize: ${clip(error.rpc.message)}.`, {
          rpcCode: error.rpc.code,
        });
      }
      throw error;
    }
    await socket.close();
  }
  const names = supported.length ? ` The host supports: ${supported.map(String).join(", ")}.` : "";
  throw new AhpVersionError(
    `The AHP host speaks none of the dialects offered (${refusals.join("; ")}).${names}`,
    supported,
  );
}
