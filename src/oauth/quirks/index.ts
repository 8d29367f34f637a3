/** Provider wire quirks handled inside the engine, through oauth4webapi's `customFetch` extension point. */
export { type CustomFetch, quirksFetch } from "./fetch.ts";
export { normaliseTokenAnswer, spaceScopes, type TokenAnswer } from "./normalise.ts";
export { type RateLimit, rateLimitOf } from "./rate-limit.ts";
export type { HttpQuirks } from "./types.ts";
