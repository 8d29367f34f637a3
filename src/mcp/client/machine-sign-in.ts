/**
 * A sign-in without a person (grants.ts): discover and check the MCP server's authorization server as for a person's
 * sign-in (discovery.ts, the mix-up rule included), run the host's grant with the host's client there, and keep the
 * token in the vault under the provider's subject, bound to a new DPoP key when the policy asks for one. A refresh
 * token is not kept (RFC 6749 §4.4.3: these grants should not issue one; the grant is simply run again), so no
 * secret of the client's is needed later.
 */

import {
  credentialFromTokens,
  dpopHandle,
  generateDpopKey,
  isReservedSubject,
  MetadataCache,
} from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import { discoverMcpAuthorization, type McpDiscoveryOptions } from "./discovery.ts";
import { assertBound, type DpopPolicy, wantsDpop } from "./dpop-policy.ts";
import { McpAuthError } from "./errors.ts";
import type { McpGrant } from "./grants.ts";
import type { RegistrationOptions } from "./registration.ts";
import { displayMcpServerUrl } from "./server-url.ts";
import { scopesFor } from "./sign-in.ts";

export interface MachineSignInOptions extends Pick<RegistrationOptions, "clientFor" | "discovery"> {
  canonicalUri: string;
  subject: string;
  store: CredentialStore;
  hints: UnauthorizedHints;
  grant: McpGrant;
  dpop?: DpopPolicy;
  crossOriginEndpoints?: McpDiscoveryOptions["crossOriginEndpoints"];
}

export async function signInWithGrant(options: MachineSignInOptions): Promise<CredentialRecord> {
  const { canonicalUri, hints, grant } = options;
  if (isReservedSubject(options.subject)) {
    throw new McpAuthError(
      "invalid_subject",
      'Subjects starting with "agentauth:" are agentauth\'s own vault records; choose another subject.',
    );
  }
  const target = await discoverMcpAuthorization(canonicalUri, hints, {
    ...options.discovery,
    cache: new MetadataCache(),
    crossOriginEndpoints: options.crossOriginEndpoints,
  });
  const { as } = target;
  const client = options.clientFor?.(as.issuer);
  if (!client) {
    throw new McpAuthError(
      "registration_unavailable",
      `The ${grant.name} grant signs in to the MCP server ${displayMcpServerUrl(canonicalUri)} as a client registered at ${as.issuer}; pass that client with clientFor (these grants have no registration of their own).`,
    );
  }
  const dpopKey = wantsDpop(options.dpop, hints, as, canonicalUri)
    ? await generateDpopKey()
    : undefined;
  // offline_access asks for a refresh token, which these grants do not use.
  const scope = scopesFor(hints, target.prm, as)
    .split(" ")
    .filter((s) => s && s !== "offline_access")
    .join(" ");
  const tokens = await grant.obtain({
    as,
    client,
    resource: target.resource,
    scope: scope || undefined,
    dpop: dpopKey ? await dpopHandle(dpopKey) : undefined,
    discovery: options.discovery,
  });
  const input = credentialFromTokens(
    { ...tokens, refreshToken: undefined },
    {
      subject: options.subject,
      issuer: as.issuer,
      resource: target.resource,
      clientId: client.clientId,
    },
    { dpopKey },
  );
  return assertBound(options.dpop, await options.store.put(input), options.store, canonicalUri);
}
