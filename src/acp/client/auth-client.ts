/**
 * The client's auth journey with any ACP agent over stdio: status, login by whatever method the agent offers and
 * the caller can run, logout only where the spec allows it, and requests that sign in once on `auth_required`.
 *
 * @example
 * const agent = await connectAgent("my-agent", ["--acp"], {
 *   onUrl: ({ url, userCode }) => console.error(`Open ${url}${userCode ? ` and enter ${userCode}` : ""}`),
 *   runTerminal: runInheritedTerminal,
 * });
 * try {
 *   if ((await agent.status()).state !== "authenticated") await agent.login();
 *   const { sessionId } = await agent.newSession(process.cwd()); // signs in once more if the agent says auth_required
 * } finally {
 *   await agent.close();
 * }
 */

import { peerText } from "../../core/display.ts";
import type { Secret } from "../../core/secret.ts";
import { confirmBySession, sendAgentLogin, settleLogin } from "./agent-login.ts";
import type { AgentLaunch } from "./agent-process.ts";
import { type AgentProfile, agentDisplayName } from "./agent-profile.ts";
import type { AdvertisedAuthMethod } from "./auth-methods.ts";
import { type AuthStatus, AuthStatusCache } from "./auth-status.ts";
import { type AgentConnection, openConnection } from "./connection.ts";
import { supplyEnvVars } from "./env-var-login.ts";
import {
  AcpAuthRequiredError,
  AcpClosedError,
  AcpLogoutUnsupportedError,
  AcpRequestError,
} from "./errors.ts";
import type { KeyDelivery } from "./login-advice.ts";
import { type LoginPlan, planLogin } from "./login-plan.ts";
import type { CallerAbilities } from "./method-choice.ts";
import {
  type ConnectAgentOptions,
  DEFAULT_TIMEOUTS,
  type LoginOptions,
  type LoginOutcome,
  type RequestOptions,
} from "./options.ts";
import { AUTH_METHODS, DEFAULT_CLIENT_INFO, type ProtocolVersion } from "./protocol.ts";
import { isAuthRequired, requestError } from "./rpc-errors.ts";
import { pushedStatus, queryAuthStatus } from "./status-query.ts";
import { type TerminalRunner, terminalInvocation } from "./terminal.ts";
import { runTerminalLogin } from "./terminal-login.ts";

/** Spawns the agent, initializes it, and returns the journey. Throws `AcpSpawnError`, `AcpInitializeError`, … */
export async function connectAgent(
  command: string,
  args: readonly string[] = [],
  options: ConnectAgentOptions = {},
): Promise<AcpAuthClient> {
  const client = new AcpAuthClient(command, args, options);
  await client.reconnect();
  return client;
}

export class AcpAuthClient {
  readonly #command: string;
  readonly #args: readonly string[];
  readonly #options: ConnectAgentOptions;
  readonly #timeouts: typeof DEFAULT_TIMEOUTS;
  readonly #cache: AuthStatusCache;
  /** Variables supplied for `env_var` methods: secrets, revealed only into the agent's environment. */
  readonly #envOverlay = new Map<string, Secret>();
  #connection: AgentConnection | undefined;
  #login: Promise<LoginOutcome> | undefined;
  /** URL prompts handed to `onUrl` so far, across reconnects (a login that shows none gets `onStillWaiting`). */
  #urlsShown = 0;
  #closed = false;
  #closing: Promise<void> | undefined;

  /** Use `connectAgent`. */
  constructor(command: string, args: readonly string[], options: ConnectAgentOptions) {
    this.#command = command;
    this.#args = [...args];
    this.#options = options;
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    this.#cache = new AuthStatusCache(options.onStatusChange);
    options.signal?.addEventListener("abort", () => void this.close(), { once: true });
  }

  get protocolVersion(): ProtocolVersion {
    return this.#options.protocolVersion ?? 1;
  }

  /** What the current agent process said in `initialize`. */
  get profile(): AgentProfile {
    return this.#live().profile;
  }

  /** The latest known state without asking (from the last query or notification). */
  get lastStatus(): AuthStatus | undefined {
    return this.#cache.current;
  }

  /**
   * The agent's state: `auth/status` when advertised, else the draft's `getAuthState` (advertised, or probed), else
   * the last `auth/status_update`, else `unknown` with the reason. Never throws for an answer it cannot use; throws
   * only when the agent is gone (`AcpAgentExitedError`, `AcpProtocolError`) or on cancellation.
   */
  async status(options: { signal?: AbortSignal } = {}): Promise<AuthStatus> {
    const connection = this.#live();
    const startedAt = this.#cache.epoch;
    const status = await queryAuthStatus(connection, {
      timeoutMs: this.#timeouts.requestMs,
      probe: this.#options.probeGetAuthState !== false,
      notified: this.#cache.current,
      signal: options.signal,
    });
    if (status.source === "none" && connection.profile.capabilities.statusPush) {
      const pushed = await pushedStatus(this.#cache, this.#timeouts.statusPushMs, options.signal);
      return this.#cache.answer(pushed, startedAt);
    }
    return this.#cache.answer(status, startedAt);
  }

  /**
   * Whether the agent is signed in already, for a caller about to choose a method on its own (a login may replace a
   * working sign-in: gemini-cli clears its Google sign-in when another method is sent). The state it reports; for an
   * agent that reports none, a session (`session/new`, closed again where supported): opened is signed in, refused
   * with `auth_required` is signed out, anything else cannot tell (`signedIn` undefined, with the reason).
   */
  async signedIn(options: { signal?: AbortSignal } = {}): Promise<{
    signedIn: boolean | undefined;
    by: "state" | "session";
    status: AuthStatus;
    reason?: string;
  }> {
    const status = await this.status(options);
    if (status.state !== "unknown") {
      return { signedIn: status.state === "authenticated", by: "state", status };
    }
    const check = await confirmBySession(
      this.#live(),
      this.#live().profile,
      this.#options.cwd ?? process.cwd(),
      {
        timeoutMs: this.#timeouts.requestMs,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
    if (check.result === "opened") return { signedIn: true, by: "session", status };
    if (check.result === "auth_required") return { signedIn: false, by: "session", status };
    return { signedIn: undefined, by: "session", status, reason: check.reason };
  }

  /** What the current agent printed on stdout that was not JSON-RPC (dropped): a count and the last few lines. */
  get strayOutput(): { count: number; last: readonly string[] } {
    const stray = this.#live().stray;
    return { count: stray.count, last: stray.last };
  }

  /**
   * Signs in with `methodId`, or the best method for this caller (see `chooseAuthMethod`), then asks for the state
   * again. A login already running is joined, not repeated.
   */
  login(methodId?: string, options: LoginOptions = {}): Promise<LoginOutcome> {
    if (this.#login) return this.#login;
    const running = this.#runLogin(methodId, options).finally(() => {
      this.#login = undefined;
    });
    this.#login = running;
    return running;
  }

  /**
   * What `login(methodId, {apiKey})` would run, checked as it checks it, without sending anything: the method, how it
   * runs, what it needs. Throws what the login would throw before sending (`AcpEnvVarsMissingError`, …).
   */
  plan(methodId: string | undefined, options: { keyGiven: boolean }): LoginPlan {
    const profile = this.#live().profile;
    return planLogin(profile, this.#abilities(), {
      ...(methodId !== undefined ? { methodId } : {}),
      keyGiven: options.keyGiven,
      name: agentDisplayName(profile, this.#command),
    });
  }

  async #runLogin(methodId: string | undefined, options: LoginOptions): Promise<LoginOutcome> {
    const profile = this.#live().profile;
    const name = agentDisplayName(profile, this.#command);
    const { method, kind, needs, route } = this.plan(methodId, {
      keyGiven: options.apiKey !== undefined,
    });
    let delivery: KeyDelivery | undefined = route?.kind === "meta" ? "meta" : undefined;
    if (route?.kind === "env" && options.apiKey) {
      // The agent reads the variable when it starts (codex-acp, qwen-code, a legacy env_var method).
      this.#envOverlay.set(route.name, options.apiKey);
      delivery = "env-overlay";
      await this.reconnect();
    }
    if (kind === "terminal") await this.#terminalLogin(method, options.signal);
    else if (kind === "env_var") await this.#envVarLogin(method, options.signal);
    else {
      await sendAgentLogin({
        connection: this.#live(),
        version: this.protocolVersion,
        method,
        name,
        ...(route?.kind === "meta" && options.apiKey
          ? { metaKey: { route, value: options.apiKey.reveal() } }
          : {}),
        timeoutMs: this.#timeouts.loginMs,
        silentMs: this.#timeouts.silentMs,
        urlsShown: () => this.#urlsShown,
        options,
      });
    }
    const status = await this.status({ signal: options.signal });
    const settled = await settleLogin(status, {
      name,
      methodId: method.id,
      needs,
      delivery,
      verify: options.verify !== false,
      envHas: this.#abilities().envHas,
      confirm: () =>
        confirmBySession(this.#live(), profile, this.#options.cwd ?? process.cwd(), {
          timeoutMs: this.#timeouts.requestMs,
          ...(options.signal ? { signal: options.signal } : {}),
        }),
    });
    return {
      method: { id: method.id, name: method.name, type: kind },
      ...settled,
      authenticated: settled.outcome === "signed_in",
    };
  }

  /**
   * Terminal auth (terminal-login.ts): the agent is stopped, the login runs where the person can use it, and the
   * agent is started and initialized again (the spec's "reconnect"), unless the login was cancelled.
   */
  #terminalLogin(method: AdvertisedAuthMethod, signal?: AbortSignal): Promise<void> {
    return runTerminalLogin(method, {
      invocation: terminalInvocation(this.#launch(), method),
      name: agentDisplayName(this.#live().profile, this.#command),
      agentCommand: this.#command,
      runner: this.#options.runTerminal as TerminalRunner, // chooseAuthMethod checked it
      confirm: this.#options.confirmCommand,
      show: this.#options.showCommand,
      timeoutMs: this.#timeouts.terminalMs,
      signal,
      stopAgent: async () => {
        await this.#connection?.close();
      },
      restartAgent: () => this.reconnect(),
    });
  }

  /** The removed `env_var` type (env-var-login.ts): variables supplied, the agent restarted with them, then `authenticate`. */
  async #envVarLogin(method: AdvertisedAuthMethod, signal?: AbortSignal): Promise<void> {
    const supplied = await supplyEnvVars(method, {
      env: this.#launch().env,
      ask: this.#options.onEnvVars,
      overlay: this.#envOverlay,
      signal,
    });
    if (supplied) await this.reconnect();
    await sendAgentLogin({
      connection: this.#live(),
      version: this.protocolVersion,
      method,
      name: agentDisplayName(this.#live().profile, this.#command),
      timeoutMs: this.#timeouts.loginMs,
      silentMs: this.#timeouts.silentMs,
      urlsShown: () => this.#urlsShown,
      options: signal ? { signal } : {},
    });
  }

  /**
   * `logout` (v1) / `auth/logout` (v2), only when allowed: v1 "Clients MUST NOT call logout unless
   * agentCapabilities.auth.logout is advertised"; v2 "An empty or omitted list means clients MUST NOT call either".
   * Returns the state afterwards.
   */
  async logout(options: { signal?: AbortSignal } = {}): Promise<AuthStatus> {
    const connection = this.#live();
    if (!connection.profile.capabilities.logout) {
      throw new AcpLogoutUnsupportedError(
        this.protocolVersion === 1
          ? "The agent does not support logout (it does not advertise agentCapabilities.auth.logout, and ACP " +
              "forbids calling it then); sign out with the agent's own tools."
          : "The agent does not support logout (it advertises no authMethods, and ACP forbids auth/logout then); " +
              "sign out with the agent's own tools.",
      );
    }
    try {
      await connection.call(
        AUTH_METHODS[this.protocolVersion].logout,
        {},
        {
          what: "logout",
          signal: options.signal,
          timeoutMs: this.#timeouts.requestMs,
        },
      );
    } catch (error) {
      throw requestError("logout", error);
    }
    // Values we supplied for env_var methods would sign the agent in again at its next start.
    this.#envOverlay.clear();
    return this.status(options);
  }

  /**
   * Any agent request. On `auth_required` (−32000) the journey runs once (`login()`) and the request is retried
   * once; a second `auth_required` is `AcpAuthRequiredError`, never another login. After a terminal or env_var
   * login the agent process is new, so a retried session-scoped request may name a session it does not know.
   */
  async request<T = unknown>(
    method: string,
    params: unknown = {},
    options: RequestOptions = {},
  ): Promise<T> {
    try {
      return (await this.#call(method, params, options)) as T;
    } catch (error) {
      if (!isAuthRequired(error) || options.login === false) throw requestError(method, error);
    }
    const outcome = await this.login(undefined, { signal: options.signal });
    try {
      return (await this.#call(method, params, options)) as T;
    } catch (error) {
      if (!isAuthRequired(error)) throw requestError(method, error);
      throw new AcpAuthRequiredError(
        `The agent still requires authentication for ${peerText(method, { max: 60 })} after signing in with ` +
          `"${peerText(outcome.method.id, { max: 60 })}"; check the account, or sign in with another method.`,
      );
    }
  }

  /** `session/new` with no MCP servers, through `request()` (so it signs in once if needed). */
  async newSession(cwd: string, options: RequestOptions = {}): Promise<{ sessionId: string }> {
    const response = await this.request<{ sessionId?: unknown }>(
      "session/new",
      { cwd, mcpServers: [] },
      options,
    );
    if (typeof response?.sessionId !== "string") {
      throw new AcpRequestError("The agent answered session/new without a sessionId.", {
        rpcCode: 0,
      });
    }
    return { sessionId: response.sessionId };
  }

  /** One text `session/prompt`, through `request()`. */
  prompt(
    sessionId: string,
    text: string,
    options: RequestOptions = {},
  ): Promise<{ stopReason?: string }> {
    return this.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, options);
  }

  /** Stops the current agent process (if any) and starts and initializes a new one. */
  async reconnect(): Promise<void> {
    if (this.#closed) throw new AcpClosedError();
    await this.#connection?.close();
    this.#connection = undefined;
    this.#connection = await openConnection(this.#launch(), {
      version: this.protocolVersion,
      abilities: {
        runTerminal: Boolean(this.#options.runTerminal),
        showUrl: Boolean(this.#options.onUrl),
      },
      clientInfo: this.#options.clientInfo ?? DEFAULT_CLIENT_INFO,
      hooks: {
        ...(this.#options.onUrl ? { onUrl: this.#countedUrl(this.#options.onUrl) } : {}),
        onStatusUpdate: (status) => this.#cache.notify(status),
        onStatusHint: (hint) => this.#cache.hint(hint),
        ...(this.#options.onSessionUpdate
          ? { onSessionUpdate: this.#options.onSessionUpdate }
          : {}),
      },
      stderr: this.#options.stderr ?? "ignore",
      ...(this.#options.onStrayStdout ? { onStrayLine: this.#options.onStrayStdout } : {}),
      maxMessageBytes: this.#options.maxMessageBytes ?? 32 * 1024 * 1024,
      initializeTimeoutMs: this.#timeouts.initializeMs,
      signal: this.#options.signal,
    });
    if (this.#closed) {
      const late = this.#connection;
      this.#connection = undefined;
      await late.close();
    }
  }

  /**
   * Ends the agent process and its process group: stdin closed first, then signals. Idempotent: every call resolves
   * when the first close has finished, so nothing the agent started outlives a caller that awaited it.
   */
  close(): Promise<void> {
    this.#closed = true;
    if (!this.#closing) {
      const connection = this.#connection;
      this.#connection = undefined;
      this.#closing = connection ? connection.close() : Promise.resolve();
    }
    return this.#closing;
  }

  #countedUrl(onUrl: NonNullable<ConnectAgentOptions["onUrl"]>): ConnectAgentOptions["onUrl"] {
    return (prompt) => {
      this.#urlsShown++;
      return onUrl(prompt);
    };
  }

  #call(method: string, params: unknown, options: RequestOptions): Promise<unknown> {
    return this.#live().call(method, params, {
      what: peerText(method, { max: 60 }),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
  }

  #live(): AgentConnection {
    if (this.#closed || !this.#connection) throw new AcpClosedError();
    return this.#connection;
  }

  #launch(): AgentLaunch {
    const overlay = Object.fromEntries(
      [...this.#envOverlay].map(([name, value]) => [name, value.reveal()]),
    );
    return {
      command: this.#command,
      args: this.#args,
      env: { ...(this.#options.env ?? process.env), ...overlay },
      cwd: this.#options.cwd,
    };
  }

  #abilities(): CallerAbilities {
    const env = this.#launch().env;
    return {
      showUrl: Boolean(this.#options.onUrl),
      runTerminal: Boolean(this.#options.runTerminal),
      ...(this.#options.terminalRefusal ? { terminalRefusal: this.#options.terminalRefusal } : {}),
      askEnvVars: Boolean(this.#options.onEnvVars),
      envHas: (name) => Boolean(env[name]),
    };
  }
}
