/**
 * The tools a runtime exposes, and `prepare`: the local checks before an invocation (RAP §Invocation: the runtime
 * MUST check the operation names a loaded tool and SHOULD validate the arguments against its inputSchema), plus
 * the `requiresAuth` flag so the caller can warn the user before anything is sent.
 */

import { MAX_JSON_DEPTH, nestedDeeperThan } from "../wire.ts";
import type { Discovery, LoadedTool } from "./discovery.ts";
import { InvocationRefusedError } from "./errors.ts";
import { describeIssues } from "./input-schema.ts";

/** A tool as `listTools()` shows it. */
export interface ToolInfo {
  name: string;
  description: string;
  toolset: string;
  inputSchema: Record<string, unknown>;
  annotations: LoadedTool["annotations"];
  /** Set when the tool declares `annotations.requiresAuth`: invoking it may ask the user to authorize. */
  requiresAuth?: string;
  destructive?: boolean;
  readOnly?: boolean;
}

export interface PrepareRequest {
  /** When given, the operation must come from this toolset (by name). */
  toolset?: string;
  operation: string;
  arguments: Record<string, unknown>;
}

export interface PreparedCall {
  tool: LoadedTool;
  /** The provider the user may have to authorize, from `annotations.requiresAuth`. */
  requiresAuth?: string;
  /** RAP §Toolsets: the runtime SHOULD ask for confirmation before a destructive operation. */
  destructive: boolean;
}

export function toolInfo(tool: LoadedTool): ToolInfo {
  return {
    name: tool.name,
    description: tool.description,
    toolset: tool.toolset,
    inputSchema: tool.inputSchema,
    annotations: tool.annotations,
    ...(tool.requiresAuth ? { requiresAuth: tool.requiresAuth } : {}),
    ...(tool.annotations?.destructive !== undefined
      ? { destructive: tool.annotations.destructive }
      : {}),
    ...(tool.annotations?.readOnly !== undefined ? { readOnly: tool.annotations.readOnly } : {}),
  };
}

/** Pure: resolves and checks an invocation against the current discovery, or throws InvocationRefusedError. */
export function prepareCall(discovery: Discovery, request: PrepareRequest): PreparedCall {
  const tool = discovery.tools.get(request.operation);
  if (!tool) {
    const clash = discovery.clashes.find((c) => c.name === request.operation);
    if (clash) {
      throw new InvocationRefusedError(
        "rap_name_clash",
        `The RAP operation "${request.operation}" is declared by several toolsets (${clash.toolsets.join(", ")}), ` +
          "so none of them is exposed (RAP: tool names must be unique across toolsets). Rename one of them.",
      );
    }
    throw new InvocationRefusedError(
      "rap_unknown_operation",
      `No loaded RAP toolset has an operation "${request.operation}". Check listTools() for what is available.`,
    );
  }
  if (request.toolset !== undefined && request.toolset !== tool.toolset) {
    throw new InvocationRefusedError(
      "rap_toolset_mismatch",
      `The RAP operation "${request.operation}" belongs to toolset "${tool.toolset}", not "${request.toolset}".`,
    );
  }
  const args = request.arguments as unknown;
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new InvocationRefusedError(
      "rap_invalid_arguments",
      `The arguments for "${request.operation}" must be a JSON object.`,
      { issues: ["(arguments): must be object"] },
    );
  }
  // Before the schema check and the store: past this depth, serialising the call would overflow the stack, which
  // is the caller's input problem, not a disk failure.
  if (nestedDeeperThan(args, MAX_JSON_DEPTH)) {
    throw new InvocationRefusedError(
      "rap_invalid_arguments",
      `The arguments for "${request.operation}" are nested more than ${MAX_JSON_DEPTH} levels deep. Nothing was ` +
        "sent to the tool; flatten the arguments and call again.",
      { issues: [`(arguments): nested more than ${MAX_JSON_DEPTH} levels`] },
    );
  }
  if (!tool.validate(args)) {
    const issues = describeIssues(tool.validate.errors);
    throw new InvocationRefusedError(
      "rap_invalid_arguments",
      `The arguments for "${request.operation}" do not match its inputSchema (${issues.join("; ")}). Nothing ` +
        "was sent to the tool; correct the arguments and call again.",
      { issues },
    );
  }
  return {
    tool,
    ...(tool.requiresAuth ? { requiresAuth: tool.requiresAuth } : {}),
    destructive: tool.annotations?.destructive === true,
  };
}
