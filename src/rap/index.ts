/** RAP authentication: the tool server (with OAuth), the runtime, the example tool, and the wire shapes. */
export * from "./example/index.ts";
export * from "./invocation-auth.ts";
export * from "./mcp-bridge/index.ts";
export * from "./runtime/index.ts";
export * from "./tool/index.ts";
export * from "./wire.ts";
