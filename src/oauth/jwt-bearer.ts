/**
 * The JWT bearer authorization grant (RFC 7523 §2.1): a signed assertion from a party the authorization server trusts
 * is exchanged for an access token. Workload identity (MCP SEP-1933: a platform's token for the workload, such as a
 * Kubernetes service account or a cloud instance identity) and enterprise-managed authorization (an ID-JAG from the
 * enterprise's identity provider, token-exchange.ts) both end here. The assertion is a credential: it is taken as a
 * `Secret` and never logged. No retry and no other grant after a refusal (`invalid_grant`, `invalid_scope`,
 * `unauthorized_client` reach the caller as they are), since an assertion refused once is refused again.
 */

import * as oauth from "oauth4webapi";
import type { Secret } from "../core/secret.ts";
import { clientParts, type OAuthClient } from "./client.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { type DpopHandle, withDpopNonce } from "./dpop.ts";
import { toOAuthError } from "./errors.ts";
import { type RequestPolicy, requestOptions } from "./http.ts";
import { type TokenSet, toTokenSet } from "./tokens.ts";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";

export interface JwtBearerOptions extends RequestPolicy {
  as: AuthorizationServer;
  /** The client asking: public (`none`, its id in the body) or confidential. */
  client: OAuthClient;
  assertion: Secret;
  scope?: string;
  resource?: string;
  dpop?: DpopHandle;
}

export async function jwtBearerGrant(options: JwtBearerOptions): Promise<TokenSet> {
  const { as } = options;
  const { client, auth } = clientParts(options.client);
  const params = new URLSearchParams({ assertion: options.assertion.reveal() });
  if (options.scope) params.set("scope", options.scope);
  if (options.resource) params.set("resource", options.resource);
  try {
    const tokens = await withDpopNonce(options.dpop, async () => {
      const response = await oauth.genericTokenEndpointRequest(
        as,
        client,
        auth,
        JWT_BEARER_GRANT,
        params,
        {
          ...requestOptions(as.token_endpoint ?? as.issuer, options, as),
          DPoP: options.dpop,
        },
      );
      return oauth.processGenericTokenEndpointResponse(as, client, response);
    });
    return toTokenSet(tokens, options.scope);
  } catch (error) {
    throw toOAuthError(error, "JWT bearer grant");
  }
}
