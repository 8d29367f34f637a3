/**
 * Wiring the kit into `@agentclientprotocol/sdk` agent apps, v1 and v2: the `initialize` answer (what is
 * advertised, and where), the auth methods' handlers, and automatic gating of the session methods the author
 * registers afterwards.
 */

import * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { AGENTAUTH_META, GET_AUTH_STATE, type GetAuthStateResponse } from "../wire.ts";
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
  app.onRequest(acp.methods.agent.authenticate, async (ctx) => {
    await kit.authenticate(ctx.params.methodId, ctx.params._meta ?? undefined, ctx);
    return {};
  });
  app.onRequest(acp.methods.agent.logout, async () => {
    await kit.logout();
    return {};
  });
  app.onRequest(acp.methods.agent.auth.status, () => kit.status());
  app.onRequest(
    GET_AUTH_STATE,
    (params: unknown) => params,
    () => kit.getAuthState(),
  );
  return autoGate(kit.gate, app);
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
  app.onRequest(acp2.methods.agent.auth.login, async (ctx) => {
    await kit.authenticate(ctx.params.methodId, ctx.params._meta ?? undefined, ctx as never);
    return {};
  });
  app.onRequest(acp2.methods.agent.auth.logout, async () => {
    await kit.logout();
    return {};
  });
  app.onRequest(acp2.methods.agent.auth.status, () => kit.status());
  return autoGate(kit.gate, app);
}

/** Session methods registered after install are gated without the author having to remember `gate()`. */
function autoGate<App extends { onRequest: (...args: never[]) => unknown }>(
  gate: SessionGate,
  app: App,
): App {
  const original = app.onRequest.bind(app) as (...args: unknown[]) => unknown;
  (app as { onRequest: unknown }).onRequest = (method: unknown, ...rest: unknown[]) => {
    if (typeof method === "string" && gate.methods.has(method)) {
      const handler = rest.at(-1) as (ctx: { params: unknown }) => unknown;
      rest[rest.length - 1] = gate.wrap(handler);
    }
    original(method, ...rest);
    return app;
  };
  return app;
}
