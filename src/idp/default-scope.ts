/**
 * RFC 6749 §3.3: "If the client omits the scope parameter when requesting authorization, the authorization server
 * MUST either process the request using a pre-defined default value or fail the request indicating an invalid
 * scope." oidc-provider does neither: it asks for consent, then ends the request with `access_denied` ("no scope was
 * granted"), which tells a person who approved that they did not. This server's documented defaults:
 * - a request for a resource (RFC 8707 `resource`): `read`, the least of the scopes a resource may be granted, so
 *   the access token is for that resource and no ID token comes back that the client did not ask for;
 * - any other request: `openid`, the person's identity and nothing more.
 * `offline_access` alone counts as no scope: oidc-provider honours it only with `prompt=consent` (OIDC Core §11), so
 * it grants nothing by itself; it is kept beside the default.
 */

import type { Middleware } from "koa";

export const DEFAULT_RESOURCE_SCOPE = "read";
export const DEFAULT_IDENTITY_SCOPE = "openid";

/** Adds the default scope to GET authorization requests that ask for none (see the module comment). */
export function defaultScope(authorizationPath: string): Middleware {
  return async (ctx, next) => {
    if (ctx.path === authorizationPath && ctx.method === "GET") {
      const scope = typeof ctx.query.scope === "string" ? ctx.query.scope : "";
      const asked = scope.split(" ").filter(Boolean);
      if (ctx.query.scope === undefined || typeof ctx.query.scope === "string") {
        if (asked.every((s) => s === "offline_access")) {
          const fallback = ctx.query.resource ? DEFAULT_RESOURCE_SCOPE : DEFAULT_IDENTITY_SCOPE;
          ctx.query = { ...ctx.query, scope: [fallback, ...asked].join(" ") };
        }
      }
    }
    await next();
  };
}
