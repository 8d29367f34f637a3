/**
 * The agent kit: one object that gives an `@agentclientprotocol/sdk` agent app complete authentication, for ACP v1
 * (`authenticate`, `logout`) and v2 (`auth/login`, `auth/logout`), plus `auth/status` and `auth/status_update`
 * (unstable), the draft's `getAuthState`, and `auth_required` gating of session methods. This file holds the
 * credentials side (login, logout, status); install.ts wires it into apps, session-gate.ts gates sessions.
 *
 * @example
 * const auth = createAgentAuth({ name: "echo", methods: [{ kind: "oauth", id: "oauth", name: "Sign in", issuer, clientId }] });
 * const app = auth.installV1(acp.agent({ name: "echo" }), { agentInfo: { name: "echo", version: "1.0.0" } });
 * app.onRequest(acp.methods.agent.session.new, () => ({ sessionId: "s1" })); // gated automatically
 */

import type * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { createLogger, type Logger } from "../../core/log.ts";
import { type Secret, secret } from "../../core/secret.ts";
import { CancelledError, LoginRequiredError, TokenRefresher } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import { LOGIN_PROMPT } from "../wire.ts";
import { acceptApiKey } from "./api-key-login.ts";
import {
  type AuthMethodConfig,
  advertised,
  type ClientAuthFeatures,
  envCredential,
  type OAuthMethod,
  validateMethods,
} from "./config.ts";
import { agentSubject, MethodCredentials, reportForgotten, sameIssuer } from "./credentials.ts";
import {
  type Connection,
  GET_AUTH_STATE_ADVERTISING,
  type GetAuthStateAdvertising,
  installV1,
  installV2,
  type KitHooks,
  type RequestCtx,
} from "./install.ts";
import { elicit, runOAuthLogin } from "./login.ts";
import { LoginFlight } from "./login-flight.ts";
import { type McpOptions, McpServerAuth, observeSessions } from "./mcp/index.ts";
import { methodProviders, oauthTarget } from "./oauth-method.ts";
import { SessionGate, type SessionPolicy } from "./session-gate.ts";
import {
  type AuthStatus,
  StatusPublisher,
  toAuthStatus,
  toGetAuthState,
  withMcpServers,
} from "./state.ts";

export type { GetAuthStateAdvertising } from "./install.ts";
export { DEFAULT_GATED, type SessionPolicy } from "./session-gate.ts";

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
  /** Methods gated in addition to session/new, session/load, session/prompt, session/resume, session/fork. */
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
  /** The MCP servers clients pass in `session/new` (probe, sign-in limits): see `auth.mcp`. */
  mcp?: McpOptions;
}

export class AgentAuth {
  readonly methods: readonly AuthMethodConfig[];
  readonly credentials: MethodCredentials;
  /**
   * The OAuth-protected MCP servers of the client's sessions: `auth.mcp.servers(sessionId)`,
   * `await auth.mcp.authProvider(sessionId, name)` (the official MCP SDK's AuthProvider; a sign-in asks the person
   * through the ACP client), tokens in this kit's vault, one `auth/status` account per server.
   */
  readonly mcp: McpServerAuth;
  readonly #options: AgentAuthOptions;
  readonly #gate: SessionGate;
  readonly #publisher: StatusPublisher;
  readonly #log: Logger;
  readonly #refresher: TokenRefresher;
  readonly #logins = new LoginFlight();
  readonly #hooks: KitHooks;
  #clientFeatures: ClientAuthFeatures = { terminal: false, urlElicitation: false };
  #connection: Connection | undefined;

  constructor(options: AgentAuthOptions) {
    validateMethods(options.methods);
    if (typeof options.name !== "string" || !/^[\w.@-]{1,100}$/.test(options.name))
      throw new TypeError(
        "name must be 1 to 100 letters, digits, '.', '_', '@' or '-' (it keys the agent's vault entries)",
      );
    const advertise = options.getAuthState?.advertise ?? "meta";
    if (!GET_AUTH_STATE_ADVERTISING.includes(advertise))
      throw new TypeError('getAuthState.advertise must be "meta", "root" or "both"');
    this.methods = options.methods;
    this.#options = options;
    this.#log =
      options.logger ?? createLogger({ level: "warn", fields: { component: "acp-agent" } });
    const store = options.store ?? openVault({ env: options.env });
    // Credentials from a provider preset (GitHub, ...) are refreshed and revoked through that provider.
    const providers = methodProviders(options.methods.filter((m) => m.kind === "oauth"));
    this.credentials = new MethodCredentials(
      store,
      options.env ?? process.env,
      agentSubject(options.name),
      providers,
    );
    this.#publisher = new StatusPublisher(async (status) => {
      await this.#connection?.client
        .notify(acp.methods.client.auth.statusUpdate, status)
        .catch(() => {});
    });
    this.#gate = new SessionGate({
      policy: options.sessionPolicy ?? "require-auth",
      extra: options.gate,
      // The state is the methods' alone (MCP accounts never change it): the gate's hot path skips their listing.
      check: async () => toAuthStatus(await this.#methodStates()).state !== "unauthenticated",
      epoch: () => this.#publisher.epoch,
    });
    this.#refresher = new TokenRefresher({
      store,
      providers,
      logger: this.#log,
      onChange: (event) => {
        if (event.kind === "login_required") void this.#changed();
      },
    });
    const own = options.methods.flatMap((m) =>
      m.kind === "oauth" ? [{ issuer: oauthTarget(m).issuer, resource: m.resource ?? "" }] : [],
    );
    this.mcp = new McpServerAuth({
      store,
      subject: agentSubject(options.name),
      agentName: options.name,
      refresher: this.#refresher,
      client: () => this.#connection?.client,
      connectionSignal: () => this.#connection?.signal,
      urlElicitation: () => this.#clientFeatures.urlElicitation,
      changed: () => {
        this.#publisher.bump();
        return this.#changed();
      },
      stderr: (text) => this.#stderr(text),
      logger: this.#log,
      // The agent's own OAuth credentials share the subject; one bound to an http(s) resource is not an MCP server.
      // A record a provider preset issued is always the agent's own (an MCP sign-in never names a preset), even
      // once its method is gone from the configuration.
      ownCredential: (record) =>
        record.provider !== undefined ||
        own.some((o) => sameIssuer(record.issuer, o.issuer) && o.resource === record.resource),
      options: options.mcp,
    });
    this.#hooks = {
      methods: this.methods,
      gate: this.#gate,
      getAuthStateAt: advertise,
      initialized: async (features) => {
        this.#clientFeatures = features;
        this.#publisher.seen(await this.status());
      },
      attach: (connection) => {
        this.#connection = connection;
      },
      authenticate: (methodId, meta, ctx) => this.#authenticate(methodId, meta, ctx),
      logout: () => this.logout(),
      status: () => this.status(),
      getAuthState: async () => toGetAuthState(await this.#methodStates()),
    };
  }

  /** What the client said in `initialize` (terminal support, URL elicitation). */
  get clientFeatures(): ClientAuthFeatures {
    return this.#clientFeatures;
  }

  /** The state `auth/status` reports. Pure: reads credentials, changes nothing. */
  async status(): Promise<AuthStatus> {
    const [methods, servers] = await Promise.all([this.#methodStates(), this.mcp.accounts()]);
    return withMcpServers(toAuthStatus(methods), servers);
  }

  /** Whether some method has credentials; a positive answer is reused for 2 s (the gate's hot path). */
  isAuthenticated(): Promise<boolean> {
    return this.#gate.isAuthenticated();
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
   * Wraps a request handler so it answers `auth_required` (−32000) until the agent is authenticated. Session
   * methods registered after install are wrapped automatically; use this for methods registered elsewhere.
   */
  gate<Ctx extends { params: unknown }, R>(
    handler: (ctx: Ctx) => R | Promise<R>,
  ): (ctx: Ctx) => R | Promise<R> {
    return this.#gate.wrap(handler);
  }

  /**
   * Registers initialize, authenticate, logout, auth/status and getAuthState on a v1 app, and gates the session
   * methods the author registers afterwards through the returned app.
   */
  installV1(
    app: acp.AgentApp,
    init: { agentInfo?: acp.Implementation; agentCapabilities?: acp.AgentCapabilities } = {},
  ): acp.AgentApp {
    return observeSessions(installV1(this.#hooks, app, init), (id, servers) =>
      this.mcp.track(id, servers),
    );
  }

  /** The same for an ACP v2 app: `auth/login`, `auth/logout`, `auth/status`. */
  installV2(
    app: acp2.AgentApp,
    init: { info: acp2.Implementation; capabilities?: acp2.AgentCapabilities },
  ): acp2.AgentApp {
    return observeSessions(installV2(this.#hooks, app, init), (id, servers) =>
      this.mcp.track(id, servers),
    );
  }

  /**
   * Revokes and deletes stored credentials for every method and every MCP server the agent signed in to, then
   * applies the session policy. Idempotent.
   */
  async logout(): Promise<void> {
    // The person asked to be logged out: a sign-in still waiting for them must not log them back in.
    this.#logins.abort();
    // MCP sign-ins too, before anything is forgotten: one finishing during the loop below would store a token after
    // the listing `signOut` makes (a code exchange already past its last check can still land: a narrow window).
    this.mcp.cancelSignIns();
    this.#publisher.bump();
    for (const method of this.methods) {
      reportForgotten(method, await this.credentials.forget(method), this.#log, this.#stderr);
    }
    for (const result of await this.mcp.signOut()) {
      if (result.error) this.#log.warn("acp.mcp_logout_revoke_failed", { error: result.error });
    }
    this.#gate.loggedOut();
    await this.#changed();
  }

  /** The agent's stderr: login prompts and logout notices always go there too. */
  readonly #stderr = (text: string): void => {
    if (this.#options.stderr) this.#options.stderr(text);
    else process.stderr.write(text);
  };

  /** Shared by v1 `authenticate` and v2 `auth/login`. */
  async #authenticate(
    methodId: string,
    meta: Record<string, unknown> | undefined,
    ctx: RequestCtx,
  ): Promise<void> {
    const method = advertised(this.methods, this.#clientFeatures).find((m) => m.id === methodId);
    if (!method) {
      // The peer's own id, quoted back at most 100 characters long (message and data alike).
      const quoted = String(methodId).slice(0, 100);
      throw acp.RequestError.invalidParams({ methodId: quoted }, `unknown auth method "${quoted}"`);
    }
    if (method.kind === "terminal") {
      throw acp.RequestError.invalidParams(
        { methodId },
        "terminal methods are run by the client: launch the agent with the method's args",
      );
    }
    if (method.kind === "api-key") {
      const accepted = await acceptApiKey(method, meta, this.credentials);
      if (accepted.source === "meta") {
        this.#publisher.bump();
        await this.credentials.storeApiKey(method, accepted.apiKey, accepted.account);
      }
      await this.#changed();
      return;
    }
    return this.#logins.join(method.id, ctx.signal, (loginSignal) =>
      this.#oauthLogin(method, ctx.requestId, loginSignal),
    );
  }

  async #oauthLogin(
    method: OAuthMethod,
    requestId: acp.RequestId,
    loginSignal: AbortSignal,
  ): Promise<void> {
    const connection = this.#connection;
    const signal = connection ? AbortSignal.any([loginSignal, connection.signal]) : loginSignal;
    const stderr = this.#stderr;
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
    this.#gate.invalidate();
    await this.#publisher.refresh(() => this.status());
  }

  async #methodStates() {
    return Promise.all(
      this.methods.filter((m) => m.kind !== "terminal").map((m) => this.credentials.state(m)),
    );
  }
}

export function createAgentAuth(options: AgentAuthOptions): AgentAuth {
  return new AgentAuth(options);
}
