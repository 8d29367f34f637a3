/** Shared setup for the RAP tool tests: a tool server on loopback with captured logs, and invocation helpers. */

import { randomUUID } from "node:crypto";
import { after } from "node:test";
import { createLogger } from "../../src/core/index.ts";
import {
  createToolServer,
  type ToolServer,
  type ToolServerOptions,
} from "../../src/rap/tool/index.ts";

/** Small, so retry tests finish quickly; still the real backoff code. */
export const FAST_DELIVERY = { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, maxTotalMs: 5_000 };

export interface RunningTool {
  tool: ToolServer;
  url: string;
  /** Every log line the tool wrote. */
  logs: string[];
}

export async function startTool(
  options: Omit<ToolServerOptions, "toolset"> & { toolset?: ToolServerOptions["toolset"] },
): Promise<RunningTool> {
  const logs: string[] = [];
  const tool = createToolServer({
    toolset: { name: "test-tools", description: "RAP tool under test" },
    delivery: FAST_DELIVERY,
    logger: createLogger({ write: (line) => logs.push(line), level: "debug" }),
    ...options,
  });
  const { url, close } = await tool.listen();
  after(close);
  return { tool, url, logs };
}

export function invocation(
  callbackUrl: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    operation: "echo",
    arguments: { text: "hi" },
    id: `call_${randomUUID()}`,
    call_id: null,
    callback_url: callbackUrl,
    group_id: "thread_1",
    ...fields,
  };
}

/** POSTs a body (an object is sent as JSON) and returns the status and the body text. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = { "content-type": "application/json" },
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

export const ECHO = {
  name: "echo",
  description: "Echoes its text argument.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", maxLength: 1000 } },
    required: ["text"],
    additionalProperties: false,
  },
  handler: async ({ arguments: args }: { arguments: Record<string, unknown> }) =>
    `echo: ${String(args.text)}`,
};
