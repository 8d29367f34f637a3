/**
 * Slack simulator: a loopback server behaving like Slack's OAuth v2 ("Installing with OAuth") and the Web API
 * methods an integration uses around it, written from Slack's documentation (docs.slack.dev, formerly
 * api.slack.com). One origin serves every Slack host at the real paths: slack.com/oauth/v2/authorize as
 * /oauth/v2/authorize and slack.com/api/* as /api/*.
 *
 * PKCE: Slack documents `code_verifier` on oauth.v2.access ("Used for PKCE"), so a `code_challenge` (S256) sent to
 * the authorize page is recorded and the exchange must carry the matching verifier. The client secret is still
 * required at the exchange (the method's errors table has bad_client_secret and no public-client mode is modelled).
 *
 * Sources: https://docs.slack.dev/authentication/installing-with-oauth,
 * https://docs.slack.dev/reference/methods/oauth.v2.access, https://docs.slack.dev/authentication/using-token-rotation,
 * https://docs.slack.dev/reference/methods/auth.revoke, https://docs.slack.dev/reference/methods/auth.test,
 * https://docs.slack.dev/apis/web-api/rate-limits.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import {
  listen,
  randomDigits,
  randomHex,
  readBody,
  redirect,
  sendJson,
  sendText,
} from "./common.ts";
import { handleAccess, handleAuthTest, handleRevoke, handleUsersIdentity } from "./slack-api.ts";
import {
  type SlackFault,
  SlackModel,
  type SlackSimulatorOptions,
  type SlackStats,
  type SlackTeam,
  type SlackTokenRequest,
  type SlackUser,
} from "./slack-state.ts";

export type {
  SlackFault,
  SlackSimulatorOptions,
  SlackStats,
  SlackTeam,
  SlackTokenRequest,
  SlackUser,
};

export interface SlackSimulator {
  /** "http://127.0.0.1:PORT", standing for https://slack.com. */
  url: string;
  clientId: string;
  clientSecret: string;
  setBehaviour(change: { approveAs?: string; deny?: boolean }): void;
  /** The next `count` oauth.v2.access answers are this fault. */
  failNext(kind: SlackFault, count?: number): void;
  /** The next `count` auth.test / users.identity answers are this fault. */
  failAccountNext(kind: SlackFault, count?: number): void;
  /** Moves the simulator's clock forward (code and rotating-token expiry). */
  advanceTime(seconds: number): void;
  stats(): SlackStats;
  isActive(accessToken: string): boolean;
  /** Users holding at least one usable user token. */
  grantCount(): number;
  lastTokenRequest(): SlackTokenRequest | null;
  close(): Promise<void>;
}

export async function startSlackSimulator(
  options: SlackSimulatorOptions = {},
): Promise<SlackSimulator> {
  const model = new SlackModel(options);
  let origin = "";
  const listening = await listen((req, res) => route(model, origin, req, res));
  origin = listening.url;
  return {
    url: origin,
    clientId: model.clientId,
    clientSecret: model.clientSecret,
    setBehaviour(change) {
      if (change.approveAs !== undefined) model.approveAs = change.approveAs;
      if (change.deny !== undefined) model.deny = change.deny;
    },
    failNext(kind, count = 1) {
      for (let i = 0; i < count; i++) model.tokenFaults.push(kind);
    },
    failAccountNext(kind, count = 1) {
      for (let i = 0; i < count; i++) model.accountFaults.push(kind);
    },
    advanceTime: (seconds) => model.clock.advance(seconds),
    stats: () => ({ ...model.counters }),
    isActive: (token) => model.check(token) === "ok",
    grantCount: () => model.grantCount(),
    lastTokenRequest: () => model.last,
    close: () => listening.close(),
  };
}

async function route(model: SlackModel, origin: string, req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? "/", origin);
  const body = await readBody(req);
  if (body === "too_large") return sendText(res, 413, "Payload Too Large", "text/plain");
  const q = url.searchParams;
  // Web API methods accept GET or POST ("Web API basics" §"POST bodies").
  switch (url.pathname) {
    case "/oauth/v2/authorize":
      return authorize(model, q, res);
    case "/api/oauth.v2.access":
      return handleAccess(model, req, res, body, q);
    case "/api/auth.revoke":
      return handleRevoke(model, req, res, body, q);
    case "/api/auth.test":
      return handleAuthTest(model, req, res, body, q);
    case "/api/users.identity":
      return handleUsersIdentity(model, req, res, body, q);
    default:
      // An unknown method answers {"ok": false, "error": "unknown_method"} with HTTP 200 like every method.
      if (url.pathname.startsWith("/api/"))
        return sendJson(res, 200, { ok: false, error: "unknown_method" });
      sendText(res, 404, "<html><body><h1>Page not found</h1></body></html>", "text/html");
  }
}

/**
 * "Installing with OAuth" §"Redirect URLs": the redirect_uri must match a configured Redirect URL or be a
 * subdirectory of one. Any port on a loopback Redirect URL is a simulator option (see loopbackAnyPort).
 */
function redirectAllowed(model: SlackModel, candidate: string): boolean {
  let uri: URL;
  try {
    uri = new URL(candidate);
  } catch {
    return false;
  }
  return model.redirectUrls.some((registered) => {
    const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(registered.hostname);
    if (uri.protocol !== registered.protocol || uri.hostname !== registered.hostname) return false;
    if (uri.port !== registered.port && !(loopback && model.loopbackAnyPort)) return false;
    const base = registered.pathname.endsWith("/")
      ? registered.pathname
      : `${registered.pathname}/`;
    return uri.pathname === registered.pathname || uri.pathname.startsWith(base);
  });
}

/** Slack's scopes are comma-separated in the authorize URL; spaces are accepted too. */
function scopeList(value: string | null): string {
  return (value ?? "")
    .split(/[\s,]+/)
    .filter((s) => s.length > 0)
    .join(",");
}

function errorPage(res: ServerResponse, message: string) {
  const escaped = message.replace(/[<&>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  sendText(
    res,
    400,
    `<html><body><h1>Oops, something went wrong.</h1><p>${escaped}</p></body></html>`,
    "text/html",
  );
}

/** GET /oauth/v2/authorize: the install/consent page, clicked through as `approveAs` (or Cancel when `deny`). */
function authorize(model: SlackModel, q: URLSearchParams, res: ServerResponse) {
  if (q.get("client_id") !== model.clientId) return errorPage(res, "Invalid client_id parameter");
  model.counters.authorizations++;
  const requested = q.get("redirect_uri");
  // A redirect_uri that matches no Redirect URL stops at Slack's error page (no redirect to an unknown place).
  if (requested !== null && !redirectAllowed(model, requested)) {
    return errorPage(
      res,
      `redirect_uri did not match any configured URIs. Passed URI: ${requested}`,
    );
  }
  const target = new URL(requested ?? model.redirectUrls[0]!.toString());
  const state = q.get("state");
  if (state !== null) target.searchParams.set("state", state);
  const botScope = scopeList(q.get("scope"));
  const userScope = scopeList(q.get("user_scope"));
  if (!botScope && !userScope)
    return errorPage(res, "Invalid permissions requested: no scope or user_scope.");
  const challenge = q.get("code_challenge");
  if (challenge !== null && (q.get("code_challenge_method") ?? "S256") !== "S256") {
    return errorPage(res, "Invalid code_challenge_method: only S256 is supported.");
  }
  // §"Asking for scopes": when the person cancels, the redirect carries error=access_denied (and the state).
  if (model.deny) {
    target.searchParams.set("error", "access_denied");
    return redirect(res, target.toString());
  }
  const user = model.user(model.approveAs);
  if (!user) return sendText(res, 500, `no simulated Slack user ${model.approveAs}`, "text/plain");
  const code = `${randomDigits(10)}.${randomDigits(13)}.${randomHex(32)}`;
  model.codes.set(code, {
    user,
    redirectUri: requested,
    userScope,
    botScope,
    challenge,
    // §"Exchanging a temporary authorization code": the code expires after ten minutes.
    expiresAt: model.clock.now() + 10 * 60 * 1000,
  });
  target.searchParams.set("code", code);
  redirect(res, target.toString());
}
