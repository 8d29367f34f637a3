/**
 * The official MCP SDKs (`@modelcontextprotocol/client` and `/server`) are optional peer dependencies: agentauth's
 * entry points load without them, and code that needs one at run time loads it here, on first use. Only the package
 * itself missing becomes the typed `mcp_sdk_missing` (saying what to install); any other failure (a broken install,
 * a package of the wrong shape) is passed on as it is, so it is not mistaken for a missing package.
 */

import { AgentAuthError } from "../core/errors.ts";

export type McpClientSdk = typeof import("@modelcontextprotocol/client");
export type McpServerSdk = typeof import("@modelcontextprotocol/server");

const CLIENT = "@modelcontextprotocol/client";
const SERVER = "@modelcontextprotocol/server";

/** The SDK is not installed. `component` says who needed it, so the message can say what to restart. */
export class McpSdkMissingError extends AgentAuthError {
  declare readonly code: "mcp_sdk_missing";
}

/** Whether `error` is the module loader's "package not found" for `name` (not for a file inside it). */
export function isMissingPackage(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = String((error as { message?: unknown } | undefined)?.message ?? "");
  return code === "ERR_MODULE_NOT_FOUND" && message.includes(`'${name}'`);
}

/**
 * Imports `name` (through `load`, which a test replaces), turning a missing package into `McpSdkMissingError` whose
 * message names the package and what needed it.
 */
export async function loadOptionalSdk<T>(
  name: string,
  neededBy: string,
  load: () => Promise<unknown> = () => import(name),
): Promise<T> {
  try {
    return (await load()) as T;
  } catch (error) {
    if (isMissingPackage(error, name)) {
      throw new McpSdkMissingError(
        "mcp_sdk_missing",
        `${neededBy} needs the official MCP SDK ${name}, which is not installed; run 'npm install ${name}' and start it again.`,
        { cause: error },
      );
    }
    throw error;
  }
}

let client: Promise<McpClientSdk> | undefined;

/** The client SDK, imported once per process (a failed import is tried again next time). */
export function loadMcpClientSdk(neededBy: string): Promise<McpClientSdk> {
  client ??= loadOptionalSdk<McpClientSdk>(CLIENT, neededBy).catch((error: unknown) => {
    client = undefined;
    throw error;
  });
  return client;
}

/** The server SDK; `load` and `name` let a test stand in a package that is not there. */
export function loadMcpServerSdk(
  neededBy: string,
  load?: () => Promise<unknown>,
  name = SERVER,
): Promise<McpServerSdk> {
  return loadOptionalSdk<McpServerSdk>(name, neededBy, load);
}
