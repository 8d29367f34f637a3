/** The OAuth engine: discovery, PKCE authorization code, device flow, single-flight refresh, revocation, challenges. */
export {
  type CompleteAuthorizationOptions,
  completeAuthorization,
  type PendingAuthorization,
  type StartAuthorizationOptions,
  type StartedAuthorization,
  startAuthorization,
} from "./authorization-code.ts";
export { type AuthorizationBearer, parseAuthorizationBearer } from "./bearer.ts";
export { readCappedText } from "./body.ts";
export {
  type BearerChallenge,
  type BearerChallengeOptions,
  type BearerErrorCode,
  buildBearerChallenge,
  type Challenge,
  ChallengeBuildError,
  ChallengeParseError,
  challengeError,
  challengeErrorDescription,
  challengeResourceMetadata,
  challengeScope,
  findBearerChallenge,
  parseWwwAuthenticate,
} from "./challenge.ts";
export {
  type ClientAuthMethod,
  clientParts,
  clientSecretBasic,
  type OAuthClient,
} from "./client.ts";
export { type ClientCredentialsOptions, clientCredentialsGrant } from "./client-credentials.ts";
export { type DeviceLoginOptions, type DevicePrompt, deviceLogin } from "./device.ts";
export {
  type AuthorizationServer,
  assertPkceS256,
  DEFAULT_METADATA_TTL_MS,
  type DiscoveryOptions,
  defaultMetadataCache,
  discoverAuthorizationServer,
  discoverProtectedResource,
  MetadataCache,
  type ProtectedResourceMetadata,
  pkceUndocumented,
} from "./discovery.ts";
export {
  DPOP_ALGORITHM,
  type DpopHandle,
  dpopHandle,
  generateDpopKey,
  supportsDpop,
  withDpopNonce,
} from "./dpop.ts";
export {
  AuthorizationResponseError,
  CancelledError,
  DeviceFlowError,
  DiscoveryError,
  LoginRequiredError,
  RateLimitedError,
  TokenEndpointError,
  TransportError,
} from "./errors.ts";
export {
  assertSecureUrl,
  isLoopback,
  type QuirkyServer,
  type RequestPolicy,
  requestOptions,
  serverFetch,
} from "./http.ts";
export { JWT_BEARER_GRANT, type JwtBearerOptions, jwtBearerGrant } from "./jwt-bearer.ts";
export {
  DEFAULT_LOGIN_SCOPE,
  type LoginOptions,
  type LogoutResult,
  login,
  logout,
  mergeAccount,
  readAccount,
  storeSignIn,
} from "./login.ts";
export { type LoopbackListener, listenOnLoopback } from "./loopback.ts";
export { MemoryPendingStore, type PendingStore } from "./pending.ts";
export type {
  AccountContext,
  Provider,
  ProviderAccount,
  ProviderFlow,
  ProviderRef,
  ProviderResolver,
  RefreshBehaviour,
  Revocation,
  RevokeContext,
  ScopeFormat,
  TokenResponseBody,
} from "./provider.ts";
export { ACCESS_TOKEN_REJECTED } from "./provider.ts";
export {
  type CustomFetch,
  type HttpQuirks,
  normaliseTokenAnswer,
  quirksFetch,
  type RateLimit,
  rateLimitOf,
  spaceScopes,
} from "./quirks/index.ts";
export { type MintedToken, TokenRefresher, type TokenRefresherOptions } from "./refresh.ts";
export {
  type RegisterClientOptions,
  type RegisteredClient,
  registerClient,
} from "./registration.ts";
export {
  deleteStoredRegistration,
  forgetRegistration,
  isRegistrationRecord,
  isReservedSubject,
  REGISTRATION_SUBJECT,
  RESERVED_SUBJECT_PREFIX,
  type RegistrationMetadata,
  registrationKey,
  type StoredRegistration,
  type StoredRegistrationOptions,
  storedRegistration,
} from "./registration-store.ts";
export {
  type IntrospectOptions,
  introspectToken,
  type RevocationOutcome,
  type RevokeOptions,
  revokeTokens,
} from "./revoke.ts";
export { clientOf, providerOf } from "./stored-provider.ts";
export {
  assertUsableProviderSubject,
  assertUsableSubject,
  ReservedSubjectError,
} from "./subject.ts";
export {
  type ExchangedToken,
  ID_JAG_TOKEN_TYPE,
  ID_TOKEN_TYPE,
  TOKEN_EXCHANGE_GRANT,
  type TokenExchangeOptions,
  tokenExchange,
} from "./token-exchange.ts";
export { accountFromClaims, credentialFromTokens, type TokenSet, toTokenSet } from "./tokens.ts";
export {
  createTokenVerifier,
  TokenVerificationError,
  type TokenVerifier,
  type TokenVerifierOptions,
  type VerifiedToken,
} from "./verifier.ts";
