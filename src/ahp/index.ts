/** AHP authentication: the host-side auth layer and the client, for both the official dialect and the seed's. */
export * from "./client/index.ts";
export * from "./host/index.ts";
export * from "./version.ts";
export * from "./wire.ts";
