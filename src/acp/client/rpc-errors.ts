/** The agent's JSON-RPC error answers (the SDK's `RequestError`) and what they mean to the journey. */

import { RequestError } from "@agentclientprotocol/sdk/unstable";
import { AUTH_REQUIRED } from "../wire.ts";
import { AcpAuthRequiredError, AcpRequestError, clip } from "./errors.ts";

export { RequestError };

/** ACP `auth_required` (−32000): "Authentication required". The spec defines no `data`; we never read it. */
export function isAuthRequired(error: unknown): boolean {
  return error instanceof RequestError && error.code === AUTH_REQUIRED;
}

/** JSON-RPC −32601: what SDK agents answer to a method they do not implement. */
export function isMethodNotFound(error: unknown): boolean {
  return error instanceof RequestError && error.code === -32601;
}

/** The agent's error answer to `method` as a typed error (message quoted, `data` never); anything else unchanged. */
export function requestError(method: string, error: unknown): unknown {
  if (!(error instanceof RequestError)) return error;
  if (error.code === AUTH_REQUIRED) {
    return new AcpAuthRequiredError(
      `The agent requires authentication for ${clip(method, 60)}: ${clip(error.message)}; sign in with login().`,
    );
  }
  return new AcpRequestError(
    `The agent answered ${clip(method, 60)} with an error: ${clip(error.message)} (JSON-RPC ${error.code}).`,
    { rpcCode: error.code, cause: error },
  );
}
