/**
 * Hooks the kit into the author's session handlers: after `session/new`, `session/load`, `session/resume` or
 * `session/fork` returns, the session's `mcpServers` are handed to `track` (which returns at once). Wraps the app's
 * `onRequest` the way install.ts gates it, so the author registers handlers as usual; the gate still runs first.
 */

const SESSION_METHODS = new Set(["session/new", "session/load", "session/resume", "session/fork"]);

type Handler = (ctx: { params: unknown }) => unknown;

export function observeSessions<App extends { onRequest: (...args: never[]) => unknown }>(
  app: App,
  track: (sessionId: string, mcpServers: unknown) => void,
): App {
  const next = app.onRequest.bind(app) as (...args: unknown[]) => unknown;
  (app as { onRequest: unknown }).onRequest = (method: unknown, ...rest: unknown[]) => {
    if (typeof method === "string" && SESSION_METHODS.has(method) && rest.length > 0) {
      const handler = rest.at(-1) as Handler;
      rest[rest.length - 1] = async (ctx: { params: unknown }) => {
        const result = await handler(ctx);
        const params = (ctx.params ?? {}) as { sessionId?: unknown; mcpServers?: unknown };
        // session/new and session/fork answer with the new id; session/load and session/resume name it.
        const sessionId =
          (result as { sessionId?: unknown } | undefined)?.sessionId ?? params.sessionId;
        try {
          if (typeof sessionId === "string") track(sessionId, params.mcpServers);
        } catch {
          // The session exists either way: MCP bookkeeping must never fail session/new.
        }
        return result;
      };
    }
    next(method, ...rest);
    return app;
  };
  return app;
}
