/**
 * The RFC 7523 §2.1 JWT bearer grant at the embedded server (off unless `IdpOptions.jwtBearer` names trusted
 * issuers): an assertion signed by a trusted issuer is exchanged for an access token for its subject. It plays the
 * authorization server of MCP's workload identity extension (SEP-1933: a platform's token for a workload) and of
 * enterprise-managed authorization (SEP-990: an ID-JAG from the enterprise identity provider).
 *
 * RFC 7523 §3, as checked here: a signature by a key of the issuer named in `iss`; `aud` naming this server (its
 * issuer or its token endpoint); `exp` in the future (30 s of skew) and at most an hour away; `sub`; a `jti`, used
 * once. An ID-JAG (`typ` oauth-id-jag+jwt, draft-ietf-oauth-identity-assertion-authz-grant §4) must also name the
 * client presenting it (`client_id`) and the resource asked for. A `resource` (RFC 8707) is required: the token is
 * for it, with the requested scopes it may be granted (default `read`). Refusals are `invalid_grant` without
 * detail beyond the rule broken; the assertion is never logged.
 */

import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  type JWK,
  jwtVerify,
} from "jose";
import type Provider from "oidc-provider";
import { errors, type KoaContextWithOIDC } from "oidc-provider";
import { DEFAULT_RESOURCE_SCOPE } from "../default-scope.ts";

export const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ID_JAG_TYPE = "oauth-id-jag+jwt";
const MAX_ASSERTION_LENGTH = 16_384;
const MAX_LIFETIME_SECONDS = 3600;
const MAX_REMEMBERED = 10_000;

export interface TrustedAssertionIssuer {
  /** The `iss` of assertions accepted (a workload platform, an enterprise identity provider). */
  issuer: string;
  /** Its public keys, as a JWKS; or `jwksUri`, fetched (and cached by jose). */
  jwks?: { keys: JWK[] };
  jwksUri?: string;
}

type ResourceServerInfo = (resource: string) => { scope: string } & Record<string, unknown>;

export function registerJwtBearerGrant(
  provider: Provider,
  options: {
    issuer: string;
    trusted: TrustedAssertionIssuer[];
    resourceServer: ResourceServerInfo;
  },
): void {
  const keys = new Map(
    options.trusted.map((t) => [
      t.issuer,
      t.jwks ? createLocalJWKSet(t.jwks) : createRemoteJWKSet(new URL(t.jwksUri as string)),
    ]),
  );
  const used = new Map<string, number>();
  const audiences = [options.issuer, `${options.issuer}/token`];

  const handler = async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, unknown>;
    const client = ctx.oidc.client;
    if (!client) throw new errors.InvalidClient("client authentication is required");
    const assertion = params.assertion;
    if (
      typeof assertion !== "string" ||
      assertion === "" ||
      assertion.length > MAX_ASSERTION_LENGTH
    ) {
      throw new errors.InvalidRequest("assertion is missing or too long");
    }
    const resource = params.resource;
    if (typeof resource !== "string") {
      throw new errors.InvalidTarget(
        "this server issues JWT bearer tokens for one resource (RFC 8707): name it",
      );
    }
    let claims: Record<string, unknown>;
    let type: unknown;
    try {
      const iss = decodeJwt(assertion).iss;
      const keySet = typeof iss === "string" ? keys.get(iss) : undefined;
      if (!keySet) throw new Error("untrusted issuer");
      type = decodeProtectedHeader(assertion).typ;
      const verified = await jwtVerify(assertion, keySet, {
        issuer: iss,
        audience: audiences,
        clockTolerance: 30,
        requiredClaims: ["sub", "exp"],
      });
      claims = verified.payload as Record<string, unknown>;
    } catch {
      throw new errors.InvalidGrant(
        "the assertion is not valid here (issuer, signature, audience or time)",
      );
    }
    const now = Math.floor(Date.now() / 1000);
    if (Number(claims.exp) - now > MAX_LIFETIME_SECONDS) {
      throw new errors.InvalidGrant("the assertion lives too long (at most an hour)");
    }
    if (type === ID_JAG_TYPE) {
      if (claims.client_id !== client.clientId)
        throw new errors.InvalidGrant("the ID-JAG names another client");
      if (claims.resource !== undefined && claims.resource !== resource) {
        throw new errors.InvalidGrant("the ID-JAG names another resource");
      }
    }
    remember(
      used,
      `${String(claims.iss)} ${String(claims.jti ?? assertion)}`,
      Number(claims.exp),
      now,
    );
    const info = options.resourceServer(resource);
    const allowed = new Set(info.scope.split(" "));
    const asked = typeof params.scope === "string" ? params.scope.split(" ").filter(Boolean) : [];
    const scopes =
      asked.length > 0 ? asked.filter((s) => allowed.has(s)) : [DEFAULT_RESOURCE_SCOPE];
    if (asked.length > 0 && scopes.length < asked.length) {
      throw new errors.InvalidScope(
        "a requested scope cannot be granted for this resource",
        asked.join(" "),
      );
    }
    const accountId = String(claims.sub);
    const grant = new provider.Grant({ accountId, clientId: client.clientId });
    grant.addResourceScope(resource, scopes.join(" "));
    const grantId = await grant.save();
    const token = new provider.AccessToken({
      accountId,
      client,
      grantId,
      gty: "jwt_bearer",
      scope: scopes.join(" "),
    });
    token.resourceServer = new provider.ResourceServer(resource, info);
    ctx.body = {
      access_token: await token.save(),
      token_type: "Bearer",
      expires_in: token.expiration,
      scope: scopes.join(" "),
    };
  };
  provider.registerGrantType(JWT_BEARER_GRANT, handler, ["assertion", "scope", "resource"]);
}

/** RFC 7523 §3 item 7: one use per assertion (`iss` and `jti`) until it expires; bounded. */
function remember(used: Map<string, number>, key: string, exp: number, now: number): void {
  const until = used.get(key);
  if (until !== undefined && until > now)
    throw new errors.InvalidGrant("the assertion was already used");
  if (used.size >= MAX_REMEMBERED) {
    for (const [k, e] of used) if (e <= now) used.delete(k);
    while (used.size >= MAX_REMEMBERED) used.delete(used.keys().next().value as string);
  }
  used.set(key, exp);
}
