/**
 * GitHub simulator: a loopback server behaving like GitHub's OAuth (web and device flows, OAuth Apps and GitHub
 * Apps) and REST endpoints, written from docs.github.com. It serves the GitHub Enterprise Server layout on its
 * origin (HOST/login/oauth/*, HOST/login/device/code, HOST/api/v3/*) and the api.github.com paths without /api/v3,
 * so a github.com preset remapped to it works too.
 *
 * Sources: "Authorizing OAuth apps" (https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps),
 * "Generating a user access token for a GitHub App", "Refreshing user access tokens", "Troubleshooting OAuth app
 * access token request errors", REST "OAuth authorizations"/"Apps", "Rate limits for the REST API".
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { listen, randomHex, readBody, redirect, sendJson, sendText } from "./common.ts";
import { normaliseScope } from "./github-answers.ts";
import { handleRevoke, handleUser } from "./github-rest.ts";
import {
  type GitHubFault,
  GitHubModel,
  type GitHubSimulatorOptions,
  type GitHubStats,
  type GitHubUser,
  type TokenRequestRecord,
} from "./github-state.ts";
import { decideDevice, handleDeviceCode, handleToken } from "./github-token.ts";

export type { GitHubFault, GitHubSimulatorOptions, GitHubStats, GitHubUser, TokenRequestRecord };

export interface GitHubSimulator {
  /** "http://127.0.0.1:PORT": the GHES-style host (REST under /api/v3) and the remapped github.com origins. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** Change who approves, or make the next browser authorizations deny. */
  setBehaviour(change: { approveAs?: string; deny?: boolean; deviceFlowEnabled?: boolean }): void;
  approveDevice(userCode: string, login?: string): void;
  denyDevice(userCode: string): void;
  /** The next n device polls answer slow_down (each adding 5 s to that device code's interval). */
  slowDownNext(n?: number): void;
  /** The next `count` token-endpoint answers are this fault. */
  failNext(kind: GitHubFault, count?: number): void;
  /** The next `count` GET /user answers are this fault. */
  failAccountNext(kind: GitHubFault, count?: number): void;
  /** Moves the simulator's clock forward (expiry of codes, tokens, refresh tokens, device codes). */
  advanceTime(seconds: number): void;
  stats(): GitHubStats;
  isActive(accessToken: string): boolean;
  /** Users holding at least one live token for this app. */
  grantCount(): number;
  lastTokenRequest(): TokenRequestRecord | null;
  close(): Promise<void>;
}

const AUTH_ERRORS =
  "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors";

export async function startGitHubSimulator(
  options: GitHubSimulatorOptions = {},
): Promise<GitHubSimulator> {
  const model = new GitHubModel(options);
  let origin = "";
  const listening = await listen((req, res) => route(model, origin, req, res));
  origin = listening.url;
  const userOf = (login: string | undefined): GitHubUser => {
    const user = model.user(login ?? model.approveAs);
    if (!user) throw new Error(`no simulated GitHub user ${login}`);
    return user;
  };
  return {
    url: origin,
    clientId: model.clientId,
    clientSecret: model.clientSecret,
    setBehaviour(change) {
      if (change.approveAs !== undefined) model.approveAs = change.approveAs;
      if (change.deny !== undefined) model.deny = change.deny;
      if (change.deviceFlowEnabled !== undefined)
        model.deviceFlowEnabled = change.deviceFlowEnabled;
    },
    approveDevice(userCode, login) {
      if (!decideDevice(model, userCode, userOf(login)))
        throw new Error(`no pending device code ${userCode}`);
    },
    denyDevice(userCode) {
      if (!decideDevice(model, userCode, null))
        throw new Error(`no pending device code ${userCode}`);
    },
    slowDownNext(n = 1) {
      model.slowDowns += n;
    },
    failNext(kind, count = 1) {
      for (let i = 0; i < count; i++) model.tokenFaults.push(kind);
    },
    failAccountNext(kind, count = 1) {
      for (let i = 0; i < count; i++) model.accountFaults.push(kind);
    },
    advanceTime: (seconds) => model.clock.advance(seconds),
    stats: () => ({ ...model.counters }),
    isActive: (token) => model.live(token) !== null,
    grantCount: () => model.grantCount(),
    lastTokenRequest: () => model.last,
    close: () => listening.close(),
  };
}

async function route(
  model: GitHubModel,
  origin: string,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const url = new URL(req.url ?? "/", origin);
  const body = await readBody(req);
  if (body === "too_large") return sendText(res, 413, "Payload Too Large", "text/plain");
  // GHES serves the REST API under /api/v3; api.github.com serves the same paths at its root.
  const path = url.pathname.startsWith("/api/v3/")
    ? url.pathname.slice("/api/v3".length)
    : url.pathname;
  const method = req.method ?? "GET";
  if (path === "/login/oauth/authorize" && method === "GET") return authorize(model, url, res);
  if (path === "/login/oauth/access_token" && method === "POST") {
    return handleToken(model, req, res, body, url.searchParams);
  }
  if (path === "/login/device/code" && method === "POST") {
    return handleDeviceCode(model, origin, req, res, body, url.searchParams);
  }
  if (path === "/login/device") return devicePage(model, req, res, body);
  if (path === "/user" && method === "GET") return handleUser(model, origin, req, res);
  const revoke = /^\/applications\/([^/]+)\/(grant|token)$/.exec(path);
  if (revoke && method === "DELETE") {
    // Client ids are plain [A-Za-z0-9.]; the segment is compared undecoded (a bad %-escape cannot throw).
    return handleRevoke(model, req, res, body, revoke[1]!, revoke[2] as "grant" | "token");
  }
  sendJson(res, 404, { message: "Not Found", documentation_url: "https://docs.github.com/rest" });
}

/**
 * "Authorizing OAuth apps" §"Redirect URLs": the redirect_uri's host and port must match the callback URL's
 * exactly and its path must be the callback path or a subdirectory of it; §"Loopback redirect urls": for a
 * loopback callback the port may be anything.
 */
function redirectAllowed(callback: URL, candidate: string): boolean {
  let uri: URL;
  try {
    uri = new URL(candidate);
  } catch {
    return false;
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(callback.hostname);
  if (uri.protocol !== callback.protocol || uri.hostname !== callback.hostname) return false;
  if (!loopback && uri.port !== callback.port) return false;
  if (uri.username || uri.password || uri.hash) return false;
  const base = callback.pathname.endsWith("/") ? callback.pathname : `${callback.pathname}/`;
  return uri.pathname === callback.pathname || uri.pathname.startsWith(base);
}

function withParams(target: string, params: Record<string, string | undefined>): string {
  const url = new URL(target);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** GET /login/oauth/authorize: the consent page, clicked through as `approveAs` (or Cancel when `deny`). */
function authorize(model: GitHubModel, url: URL, res: ServerResponse) {
  const q = url.searchParams;
  // An unknown client_id gets GitHub's 404 page; there is no application to send the person back to.
  if (q.get("client_id") !== model.clientId) {
    return sendText(
      res,
      404,
      "<html><body><h1>404</h1><p>Not Found</p></body></html>",
      "text/html",
    );
  }
  model.counters.authorizations++;
  const state = q.get("state") ?? undefined;
  const requested = q.get("redirect_uri");
  // "Troubleshooting authorization request errors" §"Redirect URI mismatch": back to the registered callback URL.
  if (requested !== null && !redirectAllowed(model.callbackUrl, requested)) {
    return redirect(
      res,
      withParams(model.callbackUrl.toString(), {
        error: "redirect_uri_mismatch",
        error_description:
          "The redirect_uri MUST match the registered callback URL for this application.",
        error_uri: `${AUTH_ERRORS}#redirect-uri-mismatch`,
        state,
      }),
    );
  }
  const target = requested ?? model.callbackUrl.toString();
  // §1 parameters: code_challenge_method "Must be S256 - the plain code challenge method is not supported".
  const challenge = q.get("code_challenge");
  const method = q.get("code_challenge_method");
  if (challenge !== null && (method !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(challenge))) {
    return redirect(
      res,
      withParams(target, {
        error: "invalid_request",
        error_description:
          "code_challenge_method must be S256 and code_challenge 43 characters long.",
        state,
      }),
    );
  }
  // "Troubleshooting authorization request errors" §"Access denied".
  if (model.deny) {
    return redirect(
      res,
      withParams(target, {
        error: "access_denied",
        error_description: "The user has denied your application access.",
        error_uri: `${AUTH_ERRORS}#access-denied`,
        state,
      }),
    );
  }
  const user = model.user(model.approveAs);
  if (!user) return sendText(res, 500, `no simulated user ${model.approveAs}`, "text/plain");
  const code = randomHex(10);
  model.codes.set(code, {
    user,
    redirectUri: requested,
    scope: model.appKind === "github_app" ? "" : normaliseScope(q.get("scope") ?? undefined),
    challenge,
    // §2: "The code ... will expire after 10 minutes."
    expiresAt: model.clock.now() + 10 * 60 * 1000,
  });
  // §1: "GitHub redirects back to your site with a temporary code in a code parameter as well as the state you
  // provided" (no `iss`).
  redirect(res, withParams(target, { code, state }));
}

/**
 * GET /login/device: the page where the person types the user code; POST with `user_code` plays them typing it
 * and clicking Authorize as `approveAs` (or Cancel when `deny`), so a test can drive the device flow over HTTP.
 */
function devicePage(model: GitHubModel, req: IncomingMessage, res: ServerResponse, body: Buffer) {
  if (req.method === "POST") {
    const code = new URLSearchParams(body.toString("utf8")).get("user_code") ?? "";
    const user = model.deny ? null : (model.user(model.approveAs) ?? null);
    const ok = decideDevice(model, code, user);
    const text = !ok
      ? "That code is not valid."
      : user
        ? "Congratulations, you're all set!"
        : "Access denied.";
    return sendText(res, ok ? 200 : 422, `<html><body><p>${text}</p></body></html>`, "text/html");
  }
  sendText(
    res,
    200,
    '<html><body><h1>Device Activation</h1><form method="post"><input name="user_code"></form></body></html>',
    "text/html",
  );
}
