/** AHP authentication: the host-side auth layer and the client, for both the 1.x dialect and the seed's. */
export * from "./client/index.ts";
export * from "./host/index.ts";
export * from "./wire.ts";
