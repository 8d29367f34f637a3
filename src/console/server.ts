/**
 * The console's HTTP server (node:http, 127.0.0.1 only): a thin routes table over the pure checks in security.ts,
 * the state builder, Connect/Disconnect, the panels, and a server-sent-events stream of the whole state.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { peerText } from "../core/display.ts";
import { AgentAuthError } from "../core/errors.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import type { ProviderResolver } from "../oauth/index.ts";
import type { CredentialStore } from "../vault/types.ts";
import { ActivityLog } from "./activity.ts";
import { Connector, type ConnectTarget, disconnect } from "./connect.ts";
import { ConsoleError } from "./errors.ts";
import { eventStreams } from "./event-stream.ts";
import { readJsonObject, send, sendError, sendJson, stringField } from "./http.ts";
import { writeLinkFile } from "./link-file.ts";
import { type ConsoleNames, providerName } from "./names.ts";
import { CONSOLE_SCRIPT } from "./page/bundle.ts";
import { callbackPage, consolePage, helpPage, signedOutPage } from "./page/html.ts";
import { CONSOLE_CSS } from "./page/style.ts";
import { PendingBoard } from "./pending.ts";
import {
  CONNECT_COOKIE,
  type ConsoleSession,
  checkCsrf,
  checkHost,
  checkJsonContentType,
  checkLinkKey,
  checkSite,
  connectCookie,
  cookieValue,
  type Refusal,
  randomToken,
  SessionBook,
  sessionCookie,
} from "./security.ts";
import { buildState, type ConsolePanel, panelViews } from "./state.ts";
import { watchVault } from "./vault-watch.ts";
import type { ConsoleState } from "./wire.ts";

export interface ConsoleOptions {
  /** The vault it shows and disconnects from. */
  store: CredentialStore;
  /** resolveProvider from agentauth/providers (credentials issued by a provider preset). */
  providers?: ProviderResolver;
  /** What "Connect" offers. */
  connectTargets?: ConnectTarget[];
  /** Pending RAP authorizations (fed by a runtime's hooks: `hooksFor(board, activity)`). */
  board?: PendingBoard;
  /** Shared with whoever else reports events; created when absent. */
  activity?: ActivityLog;
  panels?: ConsolePanel[];
  /** 0 (default) = a free one; always binds 127.0.0.1. */
  port?: number;
  /** How often the vault is listed for changes by other processes. Default 1000. */
  vaultPollMs?: number;
  /**
   * Where to keep `console.json` (link-file.ts) so `agentauth console --link` can ask this console for a fresh
   * one-time link; without it, no fresh link can be asked for.
   */
  linkFile?: string;
  /** The command that prints a fresh link, as the sign-in-needed page names it. */
  linkCommand?: string;
  /** Names for issuers, resources and presets, so the page shows "GitHub" or "Demo API", not URLs (names.ts). */
  names?: ConsoleNames;
  logger?: Logger;
}

export interface RunningConsole {
  /** http://127.0.0.1:PORT/ */
  url: string;
  /** url + "?token=<one-time token>": printed to the person, never logged. */
  loginUrl: string;
  activity: ActivityLog;
  close(): Promise<void>;
}

const SCRIPT = CONSOLE_SCRIPT;

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const logger = options.logger ?? silentLogger;
  const activity = options.activity ?? new ActivityLog();
  const board = options.board ?? new PendingBoard();
  const panels = options.panels ?? [];
  const sessions = new SessionBook();
  const linkKey = randomToken();
  const signedOut = () => signedOutPage(options.linkFile ? options.linkCommand : undefined);
  const connector = new Connector({
    targets: options.connectTargets ?? [],
    store: options.store,
    providers: options.providers,
    logger,
  });
  const watch = await watchVault({
    store: options.store,
    activity,
    intervalMs: options.vaultPollMs,
    names: options.names,
    logger,
  });

  const state = (): ConsoleState =>
    buildState({
      credentials: watch.current(),
      unreadable: watch.unreadable(),
      pending: board.list(),
      activity: activity.list(),
      connectTargets: connector.targets,
      panels: panelViews(panels, logger),
      now: Date.now(),
      names: options.names,
    });

  const streams = eventStreams(state);
  const changed = () => streams.changed();
  const unsubscribe = [
    activity.subscribe(changed),
    board.onChange(changed),
    watch.onChange(changed),
    ...panels.map((panel) => panel.onChange(changed)),
  ];

  let port = 0;
  let publicUrl = "";
  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      logger.error("console.request_failed", { error });
      sendError(response, { status: 500, code: "console_failed", message: "The console failed." });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const refused = (refusal: Refusal | undefined) => {
      if (refusal) sendError(response, refusal);
      return refusal !== undefined;
    };
    if (refused(checkHost(request.headers.host, port))) return void request.resume();
    const url = URL.parse(request.url ?? "/", `http://127.0.0.1:${port}`);
    if (!url) {
      request.resume();
      return sendError(response, {
        status: 400,
        code: "console_bad_request",
        message: "The request's target is not a valid path.",
      });
    }
    const path = url.pathname;
    const site = {
      origin: header(request, "origin"),
      // The AS sends the browser back to the callback from its own site: `state` protects that route instead.
      secFetchSite: path === "/connect/callback" ? undefined : header(request, "sec-fetch-site"),
    };
    if (refused(checkSite(site, port))) return void request.resume();
    const method = request.method ?? "GET";

    if (path === "/assets/console.js" || path === "/assets/console.css") {
      if (method !== "GET" && method !== "HEAD") return methodNotAllowed(response);
      const js = path.endsWith(".js");
      return send(
        response,
        200,
        js ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8",
        js ? SCRIPT : CONSOLE_CSS,
      );
    }
    if (path === "/help") {
      if (method !== "GET" && method !== "HEAD") return methodNotAllowed(response);
      return send(response, 200, "text/html; charset=utf-8", helpPage(options.linkCommand));
    }
    if (path === "/connect/callback") {
      if (method !== "GET") return methodNotAllowed(response);
      return callback(url, cookieValue(header(request, "cookie"), CONNECT_COOKIE), response);
    }
    if (path === "/") {
      if (method !== "GET") return methodNotAllowed(response);
      const token = url.searchParams.get("token");
      const existing = sessions.find(header(request, "cookie"));
      if (token !== null) {
        const session = existing ?? sessions.redeem(token);
        if (!session) return send(response, 401, "text/html; charset=utf-8", signedOut());
        // 303 to "/": the token leaves the address bar (and the history entry the person bookmarks).
        return send(response, 303, "text/plain; charset=utf-8", "", {
          location: "/",
          ...(existing ? {} : { "set-cookie": sessionCookie(session.id) }),
        });
      }
      if (!existing) return send(response, 401, "text/html; charset=utf-8", signedOut());
      return send(
        response,
        200,
        "text/html; charset=utf-8",
        consolePage({
          csrf: existing.csrf,
          connectTargets: connector.targets.map((t) => ({ id: t.id, label: t.label })),
          panels: panels.map((p) => ({ id: p.id, title: p.title })),
        }),
      );
    }

    if (path === "/api/link") {
      request.resume();
      if (method !== "POST") return methodNotAllowed(response);
      if (!options.linkFile || refused(checkLinkKey(header(request, "authorization"), linkKey))) {
        if (!options.linkFile) {
          sendError(response, {
            status: 404,
            code: "console_not_found",
            message: "This console gives no fresh links.",
          });
        }
        return;
      }
      activity.record({
        component: "console",
        kind: "console_link",
        summary: "A fresh console link was printed (agentauth console --link).",
      });
      return sendJson(response, 200, {
        loginUrl: `${publicUrl}?token=${sessions.mintLoginToken()}`,
      });
    }
    const post = API_POST.test(path);
    if (!post && path !== "/api/state" && path !== "/api/events") {
      request.resume();
      return sendError(response, {
        status: 404,
        code: "console_not_found",
        message: "There is no such page.",
      });
    }
    if ((post && method !== "POST") || (!post && method !== "GET"))
      return methodNotAllowed(response);
    const session = sessions.find(header(request, "cookie"));
    if (!session) {
      request.resume();
      return sendError(response, {
        status: 401,
        code: "console_session_required",
        message:
          "No console session: open the link the console printed (it works once; restart the console for a new one).",
      });
    }
    if (path === "/api/state") return sendJson(response, 200, state());
    if (path === "/api/events") return streams.open(request, response);
    if (refused(checkJsonContentType(header(request, "content-type"))))
      return void request.resume();
    if (refused(checkCsrf(header(request, "x-csrf-token"), session.csrf)))
      return void request.resume();
    try {
      const body = await readJsonObject(request);
      const result = await action(path, body, session);
      // Connect: the browser carries the binding back to /connect/callback (see connectCookie).
      const headers: Record<string, string> =
        path === "/api/connect" ? { "set-cookie": connectCookie(session.connectBinding) } : {};
      sendJson(response, 200, result, headers);
    } catch (error) {
      sendError(response, asAnswer(error, logger));
    }
  }

  async function action(
    path: string,
    body: Record<string, unknown>,
    session: ConsoleSession,
  ): Promise<unknown> {
    if (path === "/api/accounts/disconnect") {
      const id = stringField(body, "id", { required: true }) as string;
      try {
        const outcome = await disconnect(options.store, id, options.providers, options.names);
        activity.record({ component: "console", kind: "revoke", summary: outcome.message });
        return outcome;
      } finally {
        await watch.poll();
      }
    }
    if (path === "/api/connect") {
      const target = stringField(body, "target", { required: true }) as string;
      const subject = stringField(body, "subject");
      const authorizationUrl = await connector.start(target, session.connectBinding, subject);
      return { authorizationUrl: authorizationUrl.href };
    }
    const [, id, name] = API_PANEL.exec(path) ?? [];
    const panel = panels.find((p) => p.id === id);
    if (!panel) throw new ConsoleError(404, "console_unknown_panel", "There is no such panel.");
    if (!name || !Object.hasOwn(panel.actions, name) || typeof panel.actions[name] !== "function") {
      throw new ConsoleError(
        404,
        "console_unknown_action",
        `The ${panel.title} panel has no such action.`,
      );
    }
    const result = await (
      panel.actions[name] as (input: Record<string, unknown>) => Promise<unknown>
    )(body);
    changed();
    return result ?? { ok: true };
  }

  async function callback(
    url: URL,
    binding: string | undefined,
    response: ServerResponse,
  ): Promise<void> {
    const html = "text/html; charset=utf-8";
    try {
      const record = await connector.complete(url, binding);
      await watch.poll();
      const who = record.account.label ?? record.subject;
      const at = providerName(record, options.names);
      activity.record({
        component: "console",
        kind: "sign_in",
        subject: record.subject,
        credentialId: record.id,
        summary: `Connected ${who} at ${at}`,
      });
      send(
        response,
        200,
        html,
        callbackPage(
          "Connected",
          `Connected ${who} at ${at}. You can close this tab: the console shows the account.`,
          true,
        ),
      );
    } catch (error) {
      const message =
        error instanceof AgentAuthError
          ? peerText(error.message, { max: 400 })
          : "The sign-in could not be completed.";
      if (!(error instanceof AgentAuthError)) logger.warn("console.connect_failed", { error });
      // Any page can send a browser here: a callback without a state we issued is not the person's activity (and
      // must not flush the real events out of the ring).
      const strayState = error instanceof AgentAuthError && error.code === "state_invalid";
      if (strayState) logger.debug("console.connect_unknown_state", {});
      else {
        activity.record({
          component: "console",
          kind: "error",
          summary: `Connect failed: ${message}`,
        });
      }
      send(
        response,
        error instanceof ConsoleError ? error.status : 400,
        html,
        callbackPage("Not connected", `${message} Start again from the console.`, false),
      );
    }
  }

  const stopBackground = () => {
    watch.stop();
    streams.close();
    for (const off of unsubscribe) off();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    // Nothing may keep polling the vault or holding timers for a console that never came up.
    stopBackground();
    throw error;
  }
  port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/`;
  publicUrl = url;
  const removeLinkFile = options.linkFile
    ? writeLinkFile(options.linkFile, url, linkKey)
    : () => {};
  connector.redirectUri = `http://127.0.0.1:${port}/connect/callback`;
  logger.info("console.listening", { url });

  let closed: Promise<void> | undefined;
  return {
    url,
    loginUrl: `${url}?token=${sessions.loginToken}`,
    activity,
    close() {
      closed ??= (async () => {
        removeLinkFile();
        stopBackground();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        for (const panel of panels) {
          try {
            await panel.close?.();
          } catch (error) {
            logger.warn("console.panel_close_failed", { panel: panel.id, error });
          }
        }
      })();
      return closed;
    },
  };
}

const API_POST = /^\/api\/(?:accounts\/disconnect|connect|panels\/[a-z]+\/[A-Za-z0-9_-]+)$/;
const API_PANEL = /^\/api\/panels\/([a-z]+)\/([A-Za-z0-9_-]+)$/;

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function methodNotAllowed(response: ServerResponse): void {
  sendError(response, {
    status: 405,
    code: "console_method_not_allowed",
    message: "That method is not allowed here.",
  });
}

/** A typed error keeps its code and message; anything else is a generic 500 (its message may hold anything). */
function asAnswer(
  error: unknown,
  logger: Logger,
): { status: number; code: string; message: string } {
  if (error instanceof ConsoleError)
    return { status: error.status, code: error.code, message: error.message };
  if (error instanceof AgentAuthError) {
    return { status: 400, code: error.code, message: peerText(error.message, { max: 500 }) };
  }
  logger.error("console.action_failed", { error });
  return {
    status: 500,
    code: "console_action_failed",
    message: "The action failed; the console's log says why.",
  };
}
