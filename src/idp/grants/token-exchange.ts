/**
 * RFC 8693 token exchange at the embedded server, for one use: an enterprise identity provider issuing ID-JAGs
 * (draft-ietf-oauth-identity-assertion-authz-grant; MCP's enterprise-managed authorization, SEP-990). Off unless
 * `IdpOptions.idJag` names the authorization servers it may issue them for. The subject token must be an ID token
 * this server issued to the client asking (`aud`), not expired; the ID-JAG it returns (`typ` oauth-id-jag+jwt, five
 * minutes) names the person (`sub`), the authorization server (`aud`), the client there (`client_id`, from the
 * configuration) and the resource asked for, signed with this server's key. Nothing else is exchanged here.
 */

import { createLocalJWKSet, importJWK, type JWK, jwtVerify, SignJWT } from "jose";
import type Provider from "oidc-provider";
import { errors, type KoaContextWithOIDC } from "oidc-provider";

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG = "urn:ietf:params:oauth:token-type:id-jag";
const ID_JAG_LIFETIME_SECONDS = 300;

export interface IdJagOptions {
  /** Authorization servers (issuers) an ID-JAG may be issued for, and the client id it names at each. */
  audiences: Record<string, { clientId: string }>;
}

export function registerIdJagExchange(
  provider: Provider,
  options: IdJagOptions & { issuer: string; signingKey: JWK },
): void {
  const { d: _private, ...publicKey } = options.signingKey;
  const ownKeys = createLocalJWKSet({ keys: [publicKey as JWK] });
  const signing = importJWK(options.signingKey, "ES256");

  const handler = async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, unknown>;
    const client = ctx.oidc.client;
    if (!client) throw new errors.InvalidClient("client authentication is required");
    if (params.requested_token_type !== ID_JAG) {
      throw new errors.InvalidRequest(
        "this server exchanges ID tokens for ID-JAGs only (requested_token_type)",
      );
    }
    if (params.subject_token_type !== ID_TOKEN || typeof params.subject_token !== "string") {
      throw new errors.InvalidRequest("the subject token must be an ID token (subject_token_type)");
    }
    const audience = params.audience;
    const target = typeof audience === "string" ? options.audiences[audience] : undefined;
    if (!target) throw new errors.InvalidTarget("no ID-JAG is issued for that audience here");
    const resource = params.resource;
    if (typeof resource !== "string")
      throw new errors.InvalidTarget("name the resource (RFC 8707)");
    let sub: string;
    try {
      const { payload } = await jwtVerify(params.subject_token, ownKeys, {
        issuer: options.issuer,
        audience: client.clientId,
        requiredClaims: ["sub", "exp"],
      });
      sub = String(payload.sub);
    } catch {
      throw new errors.InvalidGrant(
        "the subject token is not a valid ID token of this server for this client",
      );
    }
    const key = await signing;
    const jag = await new SignJWT({
      client_id: target.clientId,
      resource,
      ...(typeof params.scope === "string" ? { scope: params.scope } : {}),
      jti: crypto.randomUUID(),
    })
      .setProtectedHeader({ alg: "ES256", kid: options.signingKey.kid, typ: "oauth-id-jag+jwt" })
      .setIssuer(options.issuer)
      .setSubject(sub)
      .setAudience(audience as string)
      .setIssuedAt()
      .setExpirationTime(`${ID_JAG_LIFETIME_SECONDS}s`)
      .sign(key);
    ctx.body = {
      access_token: jag,
      issued_token_type: ID_JAG,
      token_type: "N_A",
      expires_in: ID_JAG_LIFETIME_SECONDS,
    };
  };
  provider.registerGrantType(TOKEN_EXCHANGE_GRANT, handler, [
    "subject_token",
    "subject_token_type",
    "requested_token_type",
    "audience",
    "resource",
    "scope",
  ]);
}
