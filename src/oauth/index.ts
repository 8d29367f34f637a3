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
export { clientParts, type OAuthClient } from "./client.ts";
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
} from "./discovery.ts";
export {
  AuthorizationResponseError,
  CancelledError,
  DeviceFlowError,
  DiscoveryError,
  LoginRequiredError,
  TokenEndpointError,
  TransportError,
} from "./errors.ts";
export { assertSecureUrl, isLoopback } from "./http.ts";
export {
  DEFAULT_LOGIN_SCOPE,
  type LoginOptions,
  type LogoutResult,
  login,
  logout,
} from "./login.ts";
export { type LoopbackListener, listenOnLoopback } from "./loopback.ts";
export { MemoryPendingStore, type PendingStore } from "./pending.ts";
export { type MintedToken, TokenRefresher, type TokenRefresherOptions } from "./refresh.ts";
export {
  type RegisterClientOptions,
  type RegisteredClient,
  registerClient,
} from "./registration.ts";
export {
  type IntrospectOptions,
  introspectToken,
  type RevocationOutcome,
  type RevokeOptions,
  revokeTokens,
} from "./revoke.ts";
export { accountFromClaims, credentialFromTokens, type TokenSet, toTokenSet } from "./tokens.ts";
export {
  createTokenVerifier,
  TokenVerificationError,
  type TokenVerifier,
  type TokenVerifierOptions,
  type VerifiedToken,
} from "./verifier.ts";
