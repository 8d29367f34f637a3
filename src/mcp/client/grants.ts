/**
 * Signing in without a person: the grants MCP's authorization extensions name, for `agentAuthProvider({ grant })`.
 * Each is a description the provider runs when it needs a token (at the first 401, and again when the token has
 * expired, since these grants give no refresh token as a rule):
 * - `clientCredentials()`: the client credentials grant (io.modelcontextprotocol/oauth-client-credentials, SEP-1046;
 *   RFC 6749 §4.4), the client authenticating with a secret or a private key (private_key_jwt, RFC 7523 §2.2);
 * - `workloadIdentity({ assertion })`: the JWT bearer grant (RFC 7523 §2.1) with a token the workload's platform
 *   issued (SEP-1933, workload identity federation: a Kubernetes service account token, a cloud identity token);
 * - `enterpriseManaged({ idp, idToken })`: enterprise-managed authorization (SEP-990): the person's ID token is
 *   exchanged at the enterprise identity provider for an ID-JAG (RFC 8693; draft-ietf-oauth-identity-assertion-
 *   authz-grant) naming the MCP server's authorization server and resource, then redeemed there with the JWT bearer
 *   grant.
 * The client comes from the provider's `clientFor(issuer)`; assertions and ID tokens are credentials, taken as
 * functions (a fresh one per sign-in) and never stored or logged. A refusal reaches the host as it is: no retry, no
 * other grant (an assertion refused once is refused again).
 */

import { Secret } from "../../core/secret.ts";
import {
  type AuthorizationServer,
  clientCredentialsGrant,
  type DiscoveryOptions,
  type DpopHandle,
  discoverAuthorizationServer,
  ID_JAG_TOKEN_TYPE,
  ID_TOKEN_TYPE,
  jwtBearerGrant,
  type OAuthClient,
  type TokenSet,
  tokenExchange,
} from "../../oauth/index.ts";

/** What a grant is given to run once. */
export interface McpGrantContext {
  /** The MCP server's authorization server, discovered and checked. */
  as: AuthorizationServer;
  /** The client at that server (`clientFor`), pre-registered: these grants have no registration of their own. */
  client: OAuthClient;
  /** The RFC 8707 resource: the MCP server. */
  resource: string;
  scope?: string;
  dpop?: DpopHandle;
  discovery?: DiscoveryOptions;
}

export interface McpGrant {
  /** For messages: "client credentials", "workload identity", "enterprise-managed authorization". */
  readonly name: string;
  obtain(context: McpGrantContext): Promise<TokenSet>;
}

type Credential = string | Secret;
type CredentialSource = Credential | (() => Credential | Promise<Credential>);

async function read(source: CredentialSource): Promise<Secret> {
  const value = typeof source === "function" ? await source() : source;
  return value instanceof Secret ? value : new Secret(value);
}

/** The client credentials grant: the client (`clientFor`) must be confidential (a secret or a private key). */
export function clientCredentials(): McpGrant {
  return {
    name: "client credentials",
    obtain: ({ as, client, resource, scope, dpop }) =>
      clientCredentialsGrant({ as, client, resource, scope, dpop }),
  };
}

/** The JWT bearer grant with the workload's own token, read anew for each sign-in (it is often short-lived). */
export function workloadIdentity(options: { assertion: CredentialSource }): McpGrant {
  return {
    name: "workload identity",
    obtain: async ({ as, client, resource, scope, dpop }) =>
      jwtBearerGrant({
        as,
        client,
        assertion: await read(options.assertion),
        resource,
        scope,
        dpop,
      }),
  };
}

export interface EnterpriseIdentityProvider {
  /** The enterprise identity provider's issuer (its metadata is discovered, exact issuer match). */
  issuer: string;
  /** This application's client at the identity provider (often public: its id only). */
  client: OAuthClient;
}

/** Enterprise-managed authorization: ID token → ID-JAG at the identity provider → access token at the MCP server's. */
export function enterpriseManaged(options: {
  idp: EnterpriseIdentityProvider;
  /** The person's ID token from the identity provider, as the host's own sign-in there obtained it. */
  idToken: CredentialSource;
}): McpGrant {
  return {
    name: "enterprise-managed authorization",
    obtain: async ({ as, client, resource, scope, dpop, discovery }) => {
      const idp = await discoverAuthorizationServer(options.idp.issuer, discovery);
      const grant = await tokenExchange({
        as: idp,
        client: options.idp.client,
        subjectToken: await read(options.idToken),
        subjectTokenType: ID_TOKEN_TYPE,
        requestedTokenType: ID_JAG_TOKEN_TYPE,
        // The draft: the ID-JAG's audience is the authorization server that redeems it, its resource the server.
        audience: as.issuer,
        resource,
        scope,
      });
      return jwtBearerGrant({ as, client, assertion: grant.token, resource, scope, dpop });
    },
  };
}
