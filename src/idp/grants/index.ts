/** Grants the embedded server adds to oidc-provider's through its extension point (`registerGrantType`). */
export {
  JWT_BEARER_GRANT,
  registerJwtBearerGrant,
  type TrustedAssertionIssuer,
} from "./jwt-bearer.ts";
export {
  type IdJagOptions,
  registerIdJagExchange,
  TOKEN_EXCHANGE_GRANT,
} from "./token-exchange.ts";
