/**
 * The agent kit: one object that gives an `@agentclientprotocol/sdk` agent app complete authentication, for ACP v1
 * (`authenticate`, `logout`) and v2 (`auth/login`, `auth/logout`), plus `auth/status` and `auth/status_update`
 * (unstable), the draft's `getAuthState`, and `auth_required` gating of session methods.
 *
 * @example
 * const auth = createAgentAuth({ methods: [{ kind: "oauth", id: "oauth", name: "Sign in", issuer, clientId }] });
 * const app = auth.installV1(acp.agent({ name: "echo" }), { agentInfo: { name: "echo", version: "1.0.0" } });
 * app.onRequest(acp.methods.agent.session.new, auth.gate(() => ({ sessionId: "s1" })));
 */

import * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createLogger, type Logger } from "../../core/log.ts";
import { type Secret, secret } from "../../core/secret.ts";
import { CancelledError, LoginRequiredError, TokenRefresher } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import {
  AGENTAUTH_META,
  API_KEY_META,
  ApiKeyMetaSchema,
  GET_AUTH_STATE,
  LOGIN_PROMPT,
  type LoginPrompt,
} from "../wire.ts";
import {
  type ApiKeyMethod,
  type AuthMethodConfig,
  advertised,
  type ClientAuthFeatures,
  envCredential,
  type OAuthMethod,
  v1AuthMethods,
  v2AuthMethods,
  validateMethods,
} from "./config.ts";
import { agentSubject, MethodCredentials } from "./credentials.ts";
import { runOAuthLogin } from "./login.ts";
import { type AuthStatus, StatusPublisher, toAuthStatus, toGetAuthState } from "./state.ts";

/** What happens to running sessions on logout (the spec leaves it to the agent). */
export type SessionPolicy = "require-auth" | "terminate" | "keep";

export interface AgentAuthOptions {
  /**
   * The agent's name (e.g. its `agentInfo.name`). Its vault entries are stored under the subject
   * `acp-agent:<name>`, so its logout removes only what it stored, never the user's own `agentauth login`.
   */
  name: string;
  methods: AuthMethodConfig[];
  /** Default: the machine's vault (`openVault()`, honouring $AGENTAUTH_HOME). */
  store?: CredentialStore;
  env?: NodeJS.ProcessEnv;
  /** Methods gated in addition to session/new, session/load, session/prompt. */
  gate?: string[];
  sessionPolicy?: SessionPolicy;
  /** The agent's stderr: login prompts always go there too. */
  stderr?: (text: string) => void;
  logger?: Logger;
  /**
   * Where `initialize` advertises the draft's `getAuthState` (the method is served either way). Default `"meta"`:
   * `agentCapabilities._meta.getAuthState: true`, because ACP's extensibility rule keeps custom fields out of spec
   * types. `"root"` is the seed draft's `agentCapabilities.getAuthState: true`, for clients built on it; `"both"`
   * serves old and new clients at once.
   */
  getAuthState?: { advertise?: GetAuthStateAdvertising };
}

export type GetAuthStateAdvertising = "meta" | "root" | "both";
const ADVERTISING: readonly unknown[] = ["meta", "root", "both"];

export const DEFAULT_GATED = [
  "session/new",
  "session/load",
  "session/prompt",
  "session/resume",
  "session/fork",
];
/** How long a positive "authenticated" answer is reused by the gate before the vault is read again. */
const AUTH_CACHE_MS = 2000;

type Connection = { client: acp.AgentContext; signal: AbortSignal };
type RunningLogin = {
  methodId: string;
  controller: AbortController;
  waiters: number;
  promise: Promise<void>;
};

export class AgentAuth {
  readonly methods: readonly AuthMethodConfig[];
  readonly credentials: MethodCredentials;
  readonly #options: AgentAuthOptions;
  readonly #gated: Set<string>;
  readonly #publisher: StatusPublisher;
  readonly #log: Logger;
  readonly #refresher: TokenRefresher;
  readonly #getAuthStateAt: GetAuthStateAdvertising;
  #clientFeatures: ClientAuthFeatures = { terminal: false, urlElicitation: false };
  #connection: Connection | undefined;
  /** Until when (ms since the epoch) a positive "authenticated" answer is reused; 0 when none is. */
  #authenticatedUntil = 0;
  /** Whether sessions are tracked at all: only `keep` and `terminate` need to know them. */
  readonly #trackSessions: boolean;
  #login: RunningLogin | undefined;
  /** Sessions created on this connection; `terminate` forgets them, `keep` lets them outlive a logout. */
  readonly #sessions = new Set<string>();
  readonly #terminated = new Set<string>();

  constructor(options: AgentAuthOptions) {
    validateMethods(options.methods);
    if (typeof options.name !== "string" || !/^[\w.@-]{1,100}$/.test(options.name))
      throw new TypeError(
        "name must be 1 to 100 letters, digits, '.', '_', '@' or '-' (it keys the agent's vault entries)",
      );
    const advertise = options.getAuthState?.advertise ?? "meta";
    if (!ADVERTISING.includes(advertise))
      throw new TypeError('getAuthState.advertise must be "meta", "root" or "both"');
    this.#getAuthStateAt = advertise;
    this.methods = options.methods;
    this.#options = options;
    this.#gated = new Set([...DEFAULT_GATED, ...(options.gate ?? [])]);
    this.#trackSessions = options.sessionPolicy === "keep" || options.sessionPolicy === "terminate";
    this.#log =
      options.logger ?? createLogger({ level: "warn", fields: { component: "acp-agent" } });
    const store = options.store ?? openVault({ env: options.env });
    this.credentials = new MethodCredentials(
      store,
      options.env ?? process.env,
      agentSubject(options.name),
    );
    this.#publisher = new StatusPublisher(async (status) => {
      await this.#connection?.client
        .notify(acp.methods.client.auth.statusUpdate, status)
        .catch(() => {});
    });
    this.#refresher = new TokenRefresher({
      store,
      logger: this.#log,
      onChange: (event) => {
        if (event.kind === "login_required") void this.#changed();
      },
    });
  }

  /** What the client said in `initialize` (terminal support, URL elicitation). */
  get clientFeatures(): ClientAuthFeatures {
    return this.#clientFeatures;
  }

  /** The state `auth/status` reports. Pure: reads credentials, changes nothing. */
  async status(): Promise<AuthStatus> {
    return toAuthStatus(await this.#methodStates());
  }

  async isAuthenticated(): Promise<boolean> {
    if (Date.now() < this.#authenticatedUntil) return true;
    const epoch = this.#publisher.epoch;
    const value = (await this.status()).state !== "unauthenticated";
    // A login or logout that happened while we read must not be overwritten by this older answer.
    if (epoch === this.#publisher.epoch)
      this.#authenticatedUntil = value ? Date.now() + AUTH_CACHE_MS : 0;
    return value;
  }

  /**
   * A fresh access token for the first OAuth method with a stored credential (refreshed single-flight), or the
   * API key / environment token: what the agent author sends upstream.
   */
  async getAccessToken(): Promise<Secret> {
    for (const method of this.methods) {
      if (method.kind === "oauth") {
        const record = await this.credentials.oauthRecord(method);
        if (record) return this.#refresher.getAccessToken(record);
        const fromEnv = envCredential(method, this.#options.env ?? process.env);
        if (fromEnv) return secret(fromEnv.value);
      }
      if (method.kind === "api-key") {
        const key = await this.credentials.apiKey(method);
        if (key) return key;
      }
    }
    throw new LoginRequiredError(
      "login_required",
      "No credential is configured; authenticate first.",
    );
  }

  /**
   * Wraps a request handler so it answers `auth_required` (−32000) until the agent is authenticated. The hot path
   * (a positive answer less than 2 s old, the `require-auth` policy) is one clock read and a direct call: no
   * allocation, no extra await, the handler's own result or promise returned as is.
   */
  gate<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
  ): (ctx: Ctx) => R | Promise<R> {
    return (ctx) => {
      if (this.#trackSessions) return this.#gateTracked(handler, ctx);
      if (Date.now() < this.#authenticatedUntil) return handler(ctx);
      return this.#gateSlow(handler, ctx, false);
    };
  }

  /** `keep` and `terminate`: sessions are remembered, terminated ones refused, kept ones let through. */
  #gateTracked<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
    ctx: Ctx,
  ): R | Promise<R> {
    const sessionId = sessionIdOf(ctx.params);
    if (sessionId !== undefined && this.#terminated.has(sessionId))
      throw acp.RequestError.sessionNotFound(sessionId);
    const kept =
      this.#options.sessionPolicy === "keep" &&
      sessionId !== undefined &&
      this.#sessions.has(sessionId);
    if (kept || Date.now() < this.#authenticatedUntil) return this.#remember(handler(ctx));
    return this.#gateSlow(handler, ctx, true);
  }

  async #gateSlow<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
    ctx: Ctx,
    track: boolean,
  ): Promise<R> {
    if (!(await this.isAuthenticated())) {
      throw acp.RequestError.authRequired(
        undefined,
        "sign in with one of the advertised authMethods (see auth/status)",
      );
    }
    const result = await handler(ctx);
    return track ? this.#remember(result) : result;
  }

  /** Records the session a handler created (`session/new`, `session/fork`, …) once its result is known. */
  #remember<R>(result: R | Promise<R>): R | Promise<R> {
    if (isThenable(result)) return Promise.resolve(result).then((r) => this.#remember(r) as R);
    const created = sessionIdOf(result);
    if (created) this.#sessions.add(created);
    return result;
  }

  /**
   * Registers initialize, authenticate, logout, auth/status and getAuthState on a v1 app, and gates the session
   * methods the author registers afterwards through the returned app.
   */
  installV1(
    app: acp.AgentApp,
    init: { agentInfo?: acp.Implementation; agentCapabilities?: acp.AgentCapabilities } = {},
  ): acp.AgentApp {
    app.onConnect((connection) => this.#attach(connection));
    app.onRequest(acp.methods.agent.initialize, async ({ params }) => {
      this.#clientFeatures = {
        terminal: params.clientCapabilities?.auth?.terminal === true,
        urlElicitation: params.clientCapabilities?.elicitation?.url != null,
      };
      this.#publisher.seen(await this.status());
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: init.agentInfo,
        agentCapabilities: {
          ...init.agentCapabilities,
          auth: { ...init.agentCapabilities?.auth, logout: {}, status: {} },
          // The seed RFD's root flag, only when the author asked for it (ACP: custom fields belong in _meta).
          ...(this.#getAuthStateAt === "meta" ? {} : { getAuthState: true }),
          _meta: {
            ...init.agentCapabilities?._meta,
            [AGENTAUTH_META]: { version: 1 },
            // `true`, the seed's own value, so a draft client only has to look one level down (not `{}`).
            ...(this.#getAuthStateAt === "root" ? {} : { [GET_AUTH_STATE]: true }),
          },
        },
        authMethods: v1AuthMethods(this.methods, this.#clientFeatures) as acp.AuthMethod[],
      };
    });
    app.onRequest(acp.methods.agent.authenticate, async (ctx) => {
      await this.#authenticate(ctx.params.methodId, ctx.params._meta ?? undefined, ctx);
      return {};
    });
    app.onRequest(acp.methods.agent.logout, async () => {
      await this.logout();
      return {};
    });
    app.onRequest(acp.methods.agent.auth.status, () => this.status());
    app.onRequest(
      GET_AUTH_STATE,
      (params: unknown) => params,
      async () => toGetAuthState(await this.#methodStates()),
    );
    return this.#autoGate(app);
  }

  /**
   * The same for an ACP v2 app: `auth/login`, `auth/logout`, `auth/status`. A non-empty `authMethods` obliges both
   * login and logout in v2, so both are always registered.
   */
  installV2(
    app: acp2.AgentApp,
    init: { info: acp2.Implementation; capabilities?: acp2.AgentCapabilities },
  ): acp2.AgentApp {
    app.onConnect((connection) => this.#attach(connection as unknown as Connection));
    app.onRequest(acp2.methods.agent.initialize, async ({ params }) => {
      this.#clientFeatures = {
        terminal: params.capabilities?.auth?.terminal != null,
        urlElicitation: params.capabilities?.elicitation?.url != null,
      };
      this.#publisher.seen(await this.status());
      return {
        protocolVersion: 2,
        info: init.info,
        capabilities: {
          ...init.capabilities,
          auth: { ...init.capabilities?.auth, status: {} },
          _meta: { ...init.capabilities?._meta, [AGENTAUTH_META]: { version: 1 } },
        },
        authMethods: v2AuthMethods(this.methods, this.#clientFeatures) as acp2.AuthMethod[],
      };
    });
    app.onRequest(acp2.methods.agent.auth.login, async (ctx) => {
      await this.#authenticate(ctx.params.methodId, ctx.params._meta ?? undefined, ctx as never);
      return {};
    });
    app.onRequest(acp2.methods.agent.auth.logout, async () => {
      await this.logout();
      return {};
    });
    app.onRequest(acp2.methods.agent.auth.status, () => this.status());
    return this.#autoGate(app);
  }

  /** Revokes and deletes stored credentials for every method, then applies the session policy. Idempotent. */
  async logout(): Promise<void> {
    // The person asked to be logged out: a sign-in still waiting for them must not log them back in.
    this.#login?.controller.abort();
    this.#publisher.bump();
    for (const method of this.methods) {
      for (const result of await this.credentials.forget(method)) {
        if (result.error)
          this.#log.warn("acp.logout_revoke_failed", { method: method.id, error: result.error });
      }
    }
    if (this.#options.sessionPolicy === "terminate") {
      for (const id of this.#sessions) this.#terminated.add(id);
      this.#sessions.clear();
    }
    await this.#changed();
  }

  /** Shared by v1 `authenticate` and v2 `auth/login`. */
  async #authenticate(
    methodId: string,
    meta: Record<string, unknown> | undefined,
    ctx: { signal: AbortSignal; requestId: acp.RequestId },
  ): Promise<void> {
    const method = advertised(this.methods, this.#clientFeatures).find((m) => m.id === methodId);
    if (!method)
      throw acp.RequestError.invalidParams(
        { methodId },
        `unknown auth method "${String(methodId).slice(0, 100)}"`,
      );
    if (method.kind === "terminal") {
      throw acp.RequestError.invalidParams(
        { methodId },
        "terminal methods are run by the client: launch the agent with the method's args",
      );
    }
    if (method.kind === "api-key") {
      const passed = meta?.[API_KEY_META];
      // acpx and similar clients send no _meta and put the key in the agent's environment instead.
      if (passed === undefined) return this.#authenticateFromEnv(method);
      const parsed = ApiKeyMetaSchema.safeParse(passed);
      if (!parsed.success)
        throw acp.RequestError.invalidParams(
          undefined,
          `pass the key as _meta["${API_KEY_META}"].apiKey`,
        );
      const account = method.validate
        ? await method.validate(parsed.data.apiKey)
        : { label: "API key" };
      if (!account) throw acp.RequestError.invalidParams(undefined, "the API key was refused");
      this.#publisher.bump();
      await this.credentials.storeApiKey(method, parsed.data.apiKey, account);
      await this.#changed();
      return;
    }
    return this.#joinLogin(method, ctx);
  }

  /**
   * The key in the method's environment variable, validated but not copied to the vault: the environment stays
   * the source (as for status), so logout has nothing of it to delete and the key never outlives the process.
   */
  async #authenticateFromEnv(method: ApiKeyMethod): Promise<void> {
    const fromEnv = this.credentials.envApiKey(method);
    if (!fromEnv) {
      const names = envVarNames(method).map((n) => `$${n}`);
      throw acp.RequestError.invalidParams(
        undefined,
        `pass the key as _meta["${API_KEY_META}"].apiKey` +
          (names.length > 0 ? ` or set ${names.join(" or ")} in the agent's environment` : ""),
      );
    }
    const account = method.validate
      ? await method.validate(fromEnv.value.reveal())
      : { label: `$${fromEnv.name}` };
    if (!account)
      throw acp.RequestError.invalidParams(
        undefined,
        `the API key in $${fromEnv.name} was refused: set a valid key there, or pass one in _meta["${API_KEY_META}"].apiKey`,
      );
    await this.#changed();
  }

  /**
   * One login at a time. A second `authenticate` for the same method joins the running login; each request can be
   * cancelled on its own, and the login itself stops only when every request waiting on it is cancelled, the
   * client goes away, `logout` is called, or another method's login replaces it.
   */
  async #joinLogin(
    method: OAuthMethod,
    ctx: { signal: AbortSignal; requestId: acp.RequestId },
  ): Promise<void> {
    let login = this.#login;
    if (login?.methodId !== method.id) {
      login?.controller.abort();
      const controller = new AbortController();
      const created: RunningLogin = {
        methodId: method.id,
        controller,
        waiters: 0,
        promise: Promise.resolve(),
      };
      created.promise = this.#oauthLogin(method, ctx.requestId, controller.signal).finally(() => {
        if (this.#login === created) this.#login = undefined;
      });
      created.promise.catch(() => {});
      this.#login = created;
      login = created;
    }
    const joined = login;
    joined.waiters++;
    try {
      await untilAborted(joined.promise, ctx.signal);
    } finally {
      joined.waiters--;
      if (joined.waiters === 0 && ctx.signal.aborted) joined.controller.abort();
    }
  }

  async #oauthLogin(
    method: OAuthMethod,
    requestId: acp.RequestId,
    loginSignal: AbortSignal,
  ): Promise<void> {
    const connection = this.#connection;
    const signal = connection ? AbortSignal.any([loginSignal, connection.signal]) : loginSignal;
    const stderr = this.#options.stderr ?? ((text: string) => process.stderr.write(text));
    try {
      await runOAuthLogin(
        method,
        this.credentials,
        {
          stderr,
          notify: async (prompt) => {
            await connection?.client.notify(LOGIN_PROMPT, prompt);
          },
          elicit:
            this.#clientFeatures.urlElicitation && connection
              ? (p) => elicit(connection.client, requestId, p)
              : undefined,
        },
        signal,
      );
    } catch (error) {
      // Declined elicitation, $/cancel_request, logout and a closed client all end here as a cancellation.
      if (signal.aborted || error instanceof CancelledError) {
        throw acp.RequestError.requestCancelled(undefined, "the login was cancelled");
      }
      const message = error instanceof Error ? error.message : "login failed";
      throw acp.RequestError.authRequired(
        { reason: (error as { code?: string }).code ?? "login_failed" },
        message,
      );
    }
    this.#publisher.bump();
    await this.#changed();
  }

  async #changed(): Promise<void> {
    this.#authenticatedUntil = 0;
    await this.#publisher.refresh(() => this.status());
  }

  async #methodStates() {
    return Promise.all(
      this.methods.filter((m) => m.kind !== "terminal").map((m) => this.credentials.state(m)),
    );
  }

  #attach(connection: Connection): void {
    this.#connection = connection;
  }

  /** Session methods registered after install are gated without the author having to remember `gate()`. */
  #autoGate<App extends { onRequest: (...args: never[]) => unknown }>(app: App): App {
    const original = app.onRequest.bind(app) as (...args: unknown[]) => unknown;
    const gated = this.#gated;
    const gate = this.gate.bind(this);
    (app as { onRequest: unknown }).onRequest = (method: unknown, ...rest: unknown[]) => {
      if (typeof method === "string" && gated.has(method)) {
        const handler = rest.at(-1) as (ctx: { params: unknown }) => unknown;
        rest[rest.length - 1] = gate(handler);
      }
      original(method, ...rest);
      return app;
    };
    return app;
  }
}

export function createAgentAuth(options: AgentAuthOptions): AgentAuth {
  return new AgentAuth(options);
}

async function elicit(
  client: acp.AgentContext,
  requestId: acp.RequestId,
  prompt: LoginPrompt,
): Promise<"accept" | "decline" | "cancel"> {
  const response = await client.request(acp.methods.client.elicitation.create, {
    mode: "url",
    requestId,
    elicitationId: crypto.randomUUID(),
    url: prompt.url,
    message: prompt.message,
  } as acp.CreateElicitationRequest);
  const action = (response as { action?: string }).action;
  return action === "accept" || action === "decline" ? action : "cancel";
}

/** Waits for `promise`, or rejects with `requestCancelled` as soon as this request's signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(acp.RequestError.requestCancelled(undefined, "the login was cancelled"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(acp.RequestError.requestCancelled(undefined, "the login was cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === "string" ? id : undefined;
}

function envVarNames(method: ApiKeyMethod): readonly string[] {
  if (method.envVar === undefined) return [];
  return typeof method.envVar === "string" ? [method.envVar] : method.envVar;
}

function isThenable<R>(value: R | Promise<R>): value is Promise<R> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === "function";
}
