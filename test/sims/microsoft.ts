/** Microsoft Entra ID (identity platform v2.0) simulator: per-tenant discovery and keys, authorize, token (code, refresh, device), devicecode, and Graph /v1.0/me, /oidc/userinfo, /v1.0/me/revokeSignInSessions on one loopback origin at the real paths, written from learn.microsoft.com/entra/identity-platform. */

import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import {
  CONSUMERS_TID,
  discovery,
  graphError,
  LOGIN,
  MICROSOFT_DEFAULT_USERS,
  MULTI_TENANT,
  matchesRedirect,
} from "./microsoft-meta.ts";
import { microsoftErr, microsoftTokenEndpoints, RESOURCE_REFUSED } from "./microsoft-token.ts";
import {
  type BaseOptions,
  type BaseSimulator,
  type DeviceControls,
  SimCore,
  splitScopes,
} from "./sim-core-b.ts";
import type { SimUser } from "./sim-grants-b.ts";
import {
  bearerToken,
  listen,
  RsaSigner,
  randomToken,
  redirect,
  type SimRequest,
  sendJson,
  sendText,
  withQuery,
} from "./sim-kit-b.ts";

export interface MicrosoftSimulatorOptions extends BaseOptions {
  /** "public" (default: mobile/desktop, no secret) or "confidential" (web app: client_secret required). */
  clientType?: "public" | "confidential";
  /** Refresh-token lifetime: 90 days by default (refresh-tokens doc, "Token lifetime"). */
  refreshTokenTtlSeconds?: number;
}

export interface MicrosoftSimulator extends BaseSimulator, DeviceControls {
  jwks(): { keys: Record<string, unknown>[] };
}

export async function startMicrosoftSimulator(
  options: MicrosoftSimulatorOptions = {},
): Promise<MicrosoftSimulator> {
  // https://learn.microsoft.com/en-us/entra/identity-platform/refresh-tokens: "Refresh tokens replace themselves
  // with a fresh token upon every use. The Microsoft identity platform doesn't revoke old refresh tokens when used
  // to fetch new access tokens." So: rotate, and the old one lives until its own expiry (90 days).
  const core = new SimCore(
    { redirectUris: ["http://127.0.0.1/callback", "http://localhost/callback"], ...options },
    {
      rotate: true,
      oldTokenValid: "until_expiry",
      ttlSeconds: options.refreshTokenTtlSeconds ?? 90 * 86400,
    },
    { clientId: randomUUID(), clientSecret: randomToken("Q~", 30), users: MICROSOFT_DEFAULT_USERS },
  );
  const { grants, counters, clientId } = core;
  const signer = new RsaSigner();
  const sim: MicrosoftSimulator = core.handle({ jwks: () => signer.jwks() });
  const tids = new Set(core.users.map((u) => u.extra?.tid ?? ""));
  const err = microsoftErr;
  const endpoints = microsoftTokenEndpoints({
    core,
    signer,
    accessTtl: options.accessTokenTtlSeconds ?? 3599,
    confidential: options.clientType === "confidential",
    deviceIntervalSeconds: options.deviceIntervalSeconds ?? 5,
    deviceCodeTtlSeconds: options.deviceCodeTtlSeconds ?? 900,
  });

  /** Which users a tenant segment admits (auth-code doc, "tenant" parameter). */
  const admits = (tenant: string, u: SimUser) => {
    const tid = u.extra?.tid;
    if (tenant === "common") return true;
    if (tenant === "consumers") return tid === CONSUMERS_TID;
    if (tenant === "organizations") return tid !== CONSUMERS_TID;
    return tid === tenant;
  };
  const knownTenant = (t: string) => MULTI_TENANT.has(t) || tids.has(t);

  // https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-auth-code-flow#request-an-authorization-code
  const authorize = (tenant: string, req: SimRequest, res: ServerResponse) => {
    const q = req.query;
    const redirectUri = q.get("redirect_uri") ?? "";
    // A wrong client or redirect URI is shown on Microsoft's sign-in page, not redirected (AADSTS700016, AADSTS50011).
    if (q.get("client_id") !== clientId)
      return sendText(
        res,
        400,
        "<html><p>AADSTS700016: Application was not found in the directory.</p></html>",
      );
    if (!matchesRedirect(core.options.redirectUris ?? [], redirectUri)) {
      return sendText(
        res,
        400,
        "<html><p>AADSTS50011: The redirect URI specified in the request does not match the redirect URIs configured for the application.</p></html>",
      );
    }
    counters.authorizations!++;
    const state = q.get("state") ?? undefined;
    const fail = (error: string, code: number, msg: string) =>
      redirect(
        res,
        withQuery(redirectUri, { error, error_description: `AADSTS${code}: ${msg}`, state }),
      );
    // AADSTS901002 on the authorize leg too (see RESOURCE_REFUSED in microsoft-token.ts for the doc pages).
    if (q.has("resource")) return fail(...RESOURCE_REFUSED);
    const scopes = splitScopes(q.get("scope"));
    const method =
      q.get("code_challenge_method") ?? (q.get("code_challenge") ? "plain" : undefined);
    if (q.get("response_type") !== "code")
      return fail(
        "unsupported_response_type",
        700054,
        "response_type 'id_token' is not enabled for the application.",
      );
    if (scopes.length === 0)
      return fail(
        "invalid_request",
        900144,
        "The request body must contain the following parameter: 'scope'.",
      );
    if (method !== undefined && !["plain", "S256"].includes(method))
      return fail("invalid_request", 501491, "Invalid size of Code_Challenge parameter.");
    if (sim.deny)
      return fail("access_denied", 65004, "User declined to consent to access the app.");
    const user = core.findUser(sim.approveAs);
    if (!admits(tenant, user))
      return fail(
        "invalid_request",
        50020,
        "User account from identity provider does not exist in tenant.",
      );
    const grant = grants.create(user, clientId, scopes, q.get("nonce") ?? undefined);
    const challenge = q.get("code_challenge") ?? undefined;
    const code = core.issueCode(
      { grant, redirectUri, challenge, method, extra: { tenant } },
      "0.AX",
    );
    redirect(res, withQuery(redirectUri, { code, state }));
  };

  // Graph (https://learn.microsoft.com/en-us/graph/api/user-get): GET /v1.0/me; GET /oidc/userinfo (OIDC doc,
  // "UserInfo endpoint"); POST /v1.0/me/revokeSignInSessions invalidates every refresh token of the user
  // (https://learn.microsoft.com/en-us/graph/api/user-revokesigninsessions). Microsoft has no RFC 7009 endpoint.
  const graph = (req: SimRequest, res: ServerResponse) => {
    counters.accountCalls!++;
    const t = bearerToken(req.headers);
    const grant = t ? grants.grantOfAccess(t) : undefined;
    if (!grant) {
      const msg = t
        ? "Lifetime validation failed, the token is expired."
        : "Access token is empty.";
      return sendJson(res, 401, graphError("InvalidAuthenticationToken", msg), {
        "www-authenticate": `Bearer realm="", authorization_uri="${LOGIN}/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"`,
      });
    }
    const u = grant.user;
    if (req.path === "/oidc/userinfo")
      return sendJson(res, 200, {
        sub: u.id,
        name: u.name,
        family_name: u.name.split(" ").slice(1).join(" "),
        given_name: u.name.split(" ")[0],
        email: u.email,
      });
    if (req.path === "/v1.0/me/revokeSignInSessions") {
      counters.revocations!++;
      for (let g = grants.findGrant(u.id, clientId); g; g = grants.findGrant(u.id, clientId)) {
        grants.revokeGrant(g.id);
      }
      return sendJson(res, 200, {
        "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#Edm.Boolean",
        value: true,
      });
    }
    sendJson(res, 200, {
      "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users/$entity",
      id: u.extra?.oid,
      displayName: u.name,
      givenName: u.name.split(" ")[0],
      surname: u.name.split(" ").slice(1).join(" "),
      userPrincipalName: u.login,
      mail: u.email,
      businessPhones: [],
      jobTitle: null,
      mobilePhone: null,
      officeLocation: null,
      preferredLanguage: null,
    });
  };

  const server = await listen((req, res) => {
    if (["/v1.0/me", "/oidc/userinfo"].includes(req.path) && req.method === "GET")
      return graph(req, res);
    if (req.path === "/v1.0/me/revokeSignInSessions" && req.method === "POST")
      return graph(req, res);
    const m = /^\/([A-Za-z0-9.-]{1,64})\/(.+)$/.exec(req.path);
    const tenant = m?.[1] ?? "";
    const rest = `${req.method} /${m?.[2] ?? ""}`;
    if (m && !knownTenant(tenant)) {
      return err(
        res,
        400,
        "invalid_tenant",
        90002,
        `Tenant '${tenant}' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.`,
      );
    }
    if (rest === "GET /v2.0/.well-known/openid-configuration")
      return sendJson(res, 200, discovery(tenant));
    if (rest === "GET /discovery/v2.0/keys") return sendJson(res, 200, signer.jwks());
    if (rest === "GET /oauth2/v2.0/authorize") return authorize(tenant, req, res);
    if (rest === "POST /oauth2/v2.0/token") return endpoints.token(req, res);
    if (rest === "POST /oauth2/v2.0/devicecode") return endpoints.deviceCode(req, res);
    sendText(res, 404, "<html><p>404 Not Found</p></html>");
  });
  sim.url = server.url;
  sim.close = server.close;
  return sim;
}
