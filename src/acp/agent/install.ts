/**
 * Wiring the kit into `@agentclientprotocol/sdk` agent apps, v1 and v2: the `initialize` answer (what is
 * advertised, and where), the auth methods' handlers, and automatic gating of the session methods the author
 * registers afterwards.
 */

import * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { z } from "zod";
import {
  AGENTAUTH_META,
  AuthenticateParamsSchema,
  GET_AUTH_STATE,
  type GetAuthStateResponse,
  MetaOnlyParamsSchema,
} from "../wire.ts";
import {
  type AuthMethodConfig,
  type ClientAuthFeatures,
  v1AuthMethods,
  v2AuthMethods,
} from "./config.ts";
import type { SessionGate } from "./session-gate.ts";
import type { AuthStatus } from "./state.ts";

/** Where `initialize` advertises the draft's `getAuthState`. */
export type GetAuthStateAdvertising = "meta" | "root" | "both";
export const GET_AUTH_STATE_ADVERTISING: readonly unknown[] = ["meta", "root", "both"];

export type Connection = { client: acp.AgentContext; signal: AbortSignal };
export type RequestCtx = { signal: AbortSignal; requestId: acp.RequestId };

/** What the apps' handlers need from the kit. */
export interface KitHooks {
  readonly methods: readonly AuthMethodConfig[];
  readonly gate: SessionGate;
  readonly getAuthStateAt: GetAuthStateAdvertising;
  /** Records what the client said in `initialize`, and what it now knows of the status. */
  initialized(features: ClientAuthFeatures): Promise<void>;
  attach(connection: Connection): void;
  authenticate(
    methodId: string,
    meta: Record<string, unknown> | undefined,
    ctx: RequestCtx,
  ): Promise<void>;
  logout(): Promise<void>;
  status(): Promise<AuthStatus>;
  getAuthState(): Promise<GetAuthStateResponse>;
}

export function installV1(
  kit: KitHooks,
  app: acp.AgentApp,
  init: { agentInfo?: acp.Implementation; agentCapabilities?: acp.AgentCapabilities },
): acp.AgentApp {
  app.onConnect((connection) => kit.attach(connection));
  app.onRequest(acp.methods.agent.initialize, async ({ params }) => {
    const features = {
      terminal: params.clientCapabilities?.auth?.terminal === true,
      urlElicitation: params.clientCapabilities?.elicitation?.url != null,
    };
    await kit.initialized(features);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      agentInfo: init.agentInfo,
      agentCapabilities: {
        ...init.agentCapabilities,
        auth: { ...init.agentCapabilities?.auth, logout: {}, status: {} },
        // The seed RFD's root flag, only when the author asked for it (ACP: custom fields belong in _meta).
        ...(kit.getAuthStateAt === "meta" ? {} : { getAuthState: true }),
        _meta: {
          ...init.agentCapabilities?._meta,
          [AGENTAUTH_META]: { version: 1 },
          // `true`, the seed's own value, so a draft client only has to look one level down (not `{}`).
          ...(kit.getAuthStateAt === "root" ? {} : { [GET_AUTH_STATE]: true }),
        },
      },
      authMethods: v1AuthMethods(kit.methods, features) as acp.AuthMethod[],
    };
  });
  return autoGate(
    kit.gate,
    app,
    new Map<string, OwnHandler>([
      [acp.methods.agent.authenticate, (ctx) => authenticate(kit, ctx)],
      [acp.methods.agent.logout, (ctx) => logout(kit, ctx)],
      [acp.methods.agent.auth.status, (ctx) => status(kit, ctx)],
      // The draft declares no params: anything is accepted, as before.
      [GET_AUTH_STATE, () => kit.getAuthState()],
    ]),
  );
}

/**
 * The same for an ACP v2 app: `auth/login`, `auth/logout`, `auth/status`. A non-empty `authMethods` obliges both
 * login and logout in v2, so both are always registered.
 */
export function installV2(
  kit: KitHooks,
  app: acp2.AgentApp,
  init: { info: acp2.Implementation; capabilities?: acp2.AgentCapabilities },
): acp2.AgentApp {
  app.onConnect((connection) => kit.attach(connection as unknown as Connection));
  app.onRequest(acp2.methods.agent.initialize, async ({ params }) => {
    const features = {
      terminal: params.capabilities?.auth?.terminal != null,
      urlElicitation: params.capabilities?.elicitation?.url != null,
    };
    await kit.initialized(features);
    return {
      protocolVersion: 2,
      info: init.info,
      capabilities: {
        ...init.capabilities,
        auth: { ...init.capabilities?.auth, status: {} },
        _meta: { ...init.capabilities?._meta, [AGENTAUTH_META]: { version: 1 } },
      },
      authMethods: v2AuthMethods(kit.methods, features) as acp2.AuthMethod[],
    };
  });
  return autoGate(
    kit.gate,
    app,
    new Map<string, OwnHandler>([
      [acp2.methods.agent.auth.login, (ctx) => authenticate(kit, ctx)],
      [acp2.methods.agent.auth.logout, (ctx) => logout(kit, ctx)],
      [acp2.methods.agent.auth.status, (ctx) => status(kit, ctx)],
    ]),
  );
}

/** What the SDK hands a wildcard (`"*"`) request handler: raw params, unparsed. */
type RawRequestCtx = RequestCtx & { method: string; params: unknown };
type OwnHandler = (ctx: RawRequestCtx) => unknown;

async function authenticate(kit: KitHooks, ctx: RawRequestCtx): Promise<object> {
  const params = parseParams(AuthenticateParamsSchema, ctx.params);
  await kit.authenticate(params.methodId, params._meta ?? undefined, ctx);
  return {};
}

async function logout(kit: KitHooks, ctx: RawRequestCtx): Promise<object> {
  parseParams(MetaOnlyParamsSchema, ctx.params);
  await kit.logout();
  return {};
}

function status(kit: KitHooks, ctx: RawRequestCtx): Promise<AuthStatus> {
  parseParams(MetaOnlyParamsSchema, ctx.params);
  return kit.status();
}

/** The SDK's own parsing, restated: absent params read as `{}`, a mismatch is −32602 with zod's error tree. */
function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.infer<S> {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw acp.RequestError.invalidParams(parsed.error.format());
  return parsed.data;
}

/**
 * Puts the kit's own methods behind the app's request fallback and gates the session methods the author registers
 * afterwards, without the author having to remember `gate()`.
 *
 * Why the fallback: the SDK offers each request to the registered handlers one by one, in registration order,
 * with an `await` per handler. Registered normally, the kit's methods (registered first) would sit in front of
 * every `session/prompt`; behind the fallback they cost the hot path nothing and are reached only when no typed
 * handler matched. An author's own `"*"` handler still gets every request the kit does not answer.
 */
function autoGate<App extends { onRequest: (...args: never[]) => unknown }>(
  gate: SessionGate,
  app: App,
  own: ReadonlyMap<string, OwnHandler>,
): App {
  const original = app.onRequest.bind(app) as (...args: unknown[]) => unknown;
  let authorFallback: OwnHandler | undefined;
  original("*", (ctx: RawRequestCtx) => {
    const handler = own.get(ctx.method) ?? authorFallback;
    if (!handler) throw acp.RequestError.methodNotFound(ctx.method);
    return handler(ctx);
  });
  (app as { onRequest: unknown }).onRequest = (method: unknown, ...rest: unknown[]) => {
    if (method === "*") {
      if (authorFallback || rest.length !== 1)
        throw new Error(
          "A request fallback is already registered, or a parser was passed (wildcard handlers get raw params).",
        );
      authorFallback = rest[0] as OwnHandler;
      return app;
    }
    if (typeof method === "string" && gate.methods.has(method)) {
      const handler = rest.at(-1) as (ctx: { params: unknown }) => unknown;
      rest[rest.length - 1] = gate.wrap(handler);
    }
    original(method, ...rest);
    return app;
  };
  return app;
}
