/** ACP authentication: the agent kit (what an agent author installs) and the client journey (what an editor installs). */
export * from "./agent/index.ts";
export * from "./client/index.ts";
export * from "./wire.ts";
