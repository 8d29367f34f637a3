/**
 * The AHP client: connects, negotiates a dialect, reads what the host protects, authenticates with tokens from
 * the OAuth engine and the vault, retries a command once after `-32007`, and renews on expiry notices (and, when
 * asked, shortly before expiry) without ever replaying a challenged token.
 */

import type { CredentialRecord } from "../../vault/index.ts";
import { AhpErrorCodes, AhpMethods, ROOT_CHANNEL, SubscribeResultSchema } from "../wire.ts";
import {
  type AuthenticationOutcome,
  authenticateParams,
  outcomeOf,
  readAuthenticateResult,
} from "./authenticate.ts";
import { ResourceCredentials, type ResourceCredentialsOptions } from "./credentials.ts";
import { AhpAuthRequiredError, AhpProtocolError, AhpUnknownResourceError, clip } from "./errors.ts";
import { remainingSeconds } from "./expires-in.ts";
import { type McpAuthNotice, readMcpAuthNotice, readMcpAuthNoticesFromSnapshot } from "./mcp.ts";
import { renewalDelayMs } from "./renewal.ts";
import {
  type AhpResource,
  type Dialect,
  readAuthNotification,
  readAuthRequiredData,
  resourcesFromRootState,
} from "./resources.ts";
import { mapError, RpcErrorAnswer, type RpcSocket, type RpcSocketOptions } from "./rpc-socket.ts";
import { type ResourceStatus, resourceStatus } from "./status.ts";

/** `stepUp`: an MCP server the host uses said `insufficientScope`; a new sign-in asks for the wider scopes. */
export type RenewalTrigger = "expired" | "required" | "challenge" | "scheduled" | "stepUp";

/** One line of `ahp login --stay`: which resource was re-authenticated, why, and for how long. Never a token. */
export interface RenewalEvent {
  event: "renewed";
  resource: string;
  trigger: RenewalTrigger;
  expiresIn?: number;
}

export interface ConnectAhpOptions extends ResourceCredentialsOptions, RpcSocketOptions {
  /** Dialects to try, in order. Default `["official", "seed"]`. */
  dialects?: readonly Dialect[];
  /** Default: a random UUID per connection. */
  clientId?: string;
  /** Renew each token shortly before it expires (for long-lived connections). Default false: on notices only. */
  renewBeforeExpiry?: boolean;
  onRenewal?: (event: RenewalEvent) => void;
  /** A background renewal failed (the host will send `-32007` or a new notice later). */
  onRenewalError?: (error: Error, resource: string) => void;
  /**
   * An MCP server the host uses for a watched session needs auth (official `McpServerAuthRequiredState`). Called
   * for every such state; never carries a token.
   */
  onMcpAuthRequired?: (notice: McpAuthNotice) => void;
  /**
   * Sign in for such a server's resource and `authenticate` with the token (step-up with the wider scopes on
   * `insufficientScope`). Default false: a sign-in may need the person, so it is opted into. The host names the
   * resource, so `true` hands it whatever token the vault holds for any MCP server it names; a predicate chooses
   * (e.g. only the servers this app configured for the host).
   */
  authenticateMcpServers?: boolean | ((notice: McpAuthNotice) => boolean);
  /** The connection ended without `close()`. */
  onDisconnect?: (error: Error) => void;
  now?: () => number;
}

interface Authenticated {
  outcome: AuthenticationOutcome;
  /** Kept so a renewal knows which token the host holds (and must never get again after a challenge). */
  credential: CredentialRecord;
  timer?: NodeJS.Timeout;
}

export class AhpClient {
  readonly url: string;
  readonly dialect: Dialect;
  readonly protocolVersion: string | number;
  readonly #socket: RpcSocket;
  readonly #credentials: ResourceCredentials;
  readonly #options: ConnectAhpOptions;
  readonly #resources = new Map<string, AhpResource>();
  readonly #authenticated = new Map<string, Authenticated>();
  readonly #inflight = new Map<string, Promise<AuthenticationOutcome>>();
  #closed = false;

  /** Use `connectAhpHost`. */
  constructor(
    url: string,
    socket: RpcSocket,
    dialect: Dialect,
    protocolVersion: string | number,
    options: ConnectAhpOptions,
  ) {
    this.url = url;
    this.#socket = socket;
    this.dialect = dialect;
    this.protocolVersion = protocolVersion;
    this.#options = options;
    this.#credentials = new ResourceCredentials(options);
    this.#credentials.setSiblings(() => this.resources());
    socket.onNotification((method, params) => this.#onNotification(method, params));
    socket.onClose((error) => {
      this.#stopTimers();
      this.#closed = true;
      options.onDisconnect?.(error);
    });
  }

  /** What the host protects, as advertised so far (root state, -32007 data, auth/required). */
  resources(): AhpResource[] {
    return [...this.#resources.values()];
  }

  /** Ids (official `resource`, seed `schemeId`) this connection has authenticated and not since been told expired. */
  authenticatedResources(): string[] {
    return [...this.#authenticated.keys()];
  }

  /** Per resource: the vault's credential (no secrets) and whether this connection is authenticated for it. */
  async status(): Promise<ResourceStatus[]> {
    const now = this.#now();
    return Promise.all(
      this.resources().map(async (resource) =>
        resourceStatus(
          resource,
          await this.#credentials.find(resource),
          this.#authenticated.has(resource.id),
          now,
        ),
      ),
    );
  }

  /**
   * Authenticates for `ids` (default: every advertised resource), all at once. Rejects with the first failure
   * after every attempt has settled; resources that succeeded stay authenticated.
   */
  async authenticate(ids?: readonly string[]): Promise<AuthenticationOutcome[]> {
    const targets = (ids ?? this.resources().map((r) => r.id)).map((id) => this.#resource(id));
    const settled = await Promise.allSettled(
      targets.map((resource) => this.#authenticateFlight(resource, "initial")),
    );
    const failure = settled.find((s) => s.status === "rejected");
    if (failure) throw failure.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<AuthenticationOutcome>).value);
  }

  /** Any host command; on `-32007` authenticates what the host names and retries exactly once. */
  async request(method: string, params?: unknown): Promise<unknown> {
    try {
      return await this.#socket.request(method, params ?? {});
    } catch (error) {
      const ids = this.#challengeIds(error);
      if (!ids) throw mapError(error, method);
      await Promise.all(ids.map((id) => this.#authenticateFlight(this.#resource(id), "challenge")));
      try {
        return await this.#socket.request(method, params ?? {});
      } catch (retryError) {
        const again = this.#challengeIds(retryError);
        if (!again) throw mapError(retryError, method);
        for (const id of again) this.#forget(id);
        throw new AhpAuthRequiredError(
          `The host still requires authentication for ${again.join(", ")} after one sign-in and one retry of ${method}.`,
          again,
        );
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopTimers();
    await this.#socket.close();
  }

  /** Reads the official root state: from the initialize snapshot, else by subscribing. */
  async loadRootState(snapshotState?: unknown): Promise<void> {
    let state = snapshotState;
    if (state === undefined) {
      const result = SubscribeResultSchema.safeParse(
        await this.#socket.request(AhpMethods.subscribe, { channel: ROOT_CHANNEL }),
      );
      if (!result.success || !result.data.snapshot) {
        throw new AhpProtocolError("The host's root-state subscription answered no snapshot.");
      }
      state = result.data.snapshot.state;
    }
    for (const resource of resourcesFromRootState(state))
      this.#resources.set(resource.id, resource);
  }

  /**
   * Subscribes to a session channel (official dialect) so the host's MCP server states reach this client; the
   * snapshot's servers that need auth are handled at once, later changes as they come.
   */
  async watchSession(session: string): Promise<McpAuthNotice[]> {
    const result = SubscribeResultSchema.safeParse(
      await this.#socket.request(AhpMethods.subscribe, { channel: session }),
    );
    if (!result.success || !result.data.snapshot) {
      throw new AhpProtocolError("The host's session subscription answered no snapshot.");
    }
    const notices = readMcpAuthNoticesFromSnapshot(session, result.data.snapshot.state);
    for (const notice of notices) this.#onMcpNotice(notice);
    return notices;
  }

  addResources(resources: AhpResource[]): void {
    for (const resource of resources) {
      if (!this.#resources.has(resource.id)) this.#resources.set(resource.id, resource);
    }
  }

  /** The ids a `-32007` answer names (merging any metadata it carries), or undefined for any other error. */
  #challengeIds(error: unknown): string[] | undefined {
    if (!(error instanceof RpcErrorAnswer) || error.rpc.code !== AhpErrorCodes.AuthRequired) {
      return undefined;
    }
    const read = readAuthRequiredData(this.dialect, error.rpc.data);
    this.addResources(read.metadata);
    if (read.ids.length === 0) {
      throw new AhpProtocolError("The host answered -32007 without naming any resource.");
    }
    return read.ids;
  }

  #resource(id: string): AhpResource {
    const resource = this.#resources.get(id);
    if (!resource) {
      throw new AhpUnknownResourceError(
        `The host never advertised ${clip(id)}; no token will be sent for it. Known: ${
          this.resources()
            .map((r) => r.id)
            .join(", ") || "none"
        }.`,
      );
    }
    return resource;
  }

  /** One authentication per resource at a time: an expiry notice and a -32007 arriving together share it. */
  #authenticateFlight(
    resource: AhpResource,
    trigger: RenewalTrigger | "initial",
  ): Promise<AuthenticationOutcome> {
    const existing = this.#inflight.get(resource.id);
    if (existing) return existing;
    const promise = this.#authenticateOne(resource, trigger).finally(() =>
      this.#inflight.delete(resource.id),
    );
    this.#inflight.set(resource.id, promise);
    return promise;
  }

  async #authenticateOne(
    resource: AhpResource,
    trigger: RenewalTrigger | "initial",
  ): Promise<AuthenticationOutcome> {
    const previous = this.#authenticated.get(resource.id)?.credential;
    this.#forget(resource.id);
    // A challenge or expiry notice names the token this connection sent: never send it again.
    let record =
      trigger === "stepUp"
        ? await this.#stepUp(resource, previous)
        : trigger === "expired" || trigger === "challenge"
          ? previous
            ? await this.#credentials.renew(resource, previous, true)
            : await this.#credentials.obtain(resource)
          : trigger === "scheduled" && previous
            ? await this.#credentials.renew(resource, previous, false)
            : await this.#credentials.obtain(resource);
    for (let attempt = 0; ; attempt++) {
      // Computed at send time from the stored expiry: a token that is (nearly) gone is renewed, not sent.
      if (remainingSeconds(record.expiresAt, this.#now()) === 0) {
        record = await this.#credentials.renew(resource, record, false);
      }
      const expiresIn = remainingSeconds(record.expiresAt, this.#now());
      const params = authenticateParams(this.dialect, resource, record, expiresIn);
      let accepted: boolean;
      try {
        accepted = readAuthenticateResult(
          this.dialect,
          await this.#socket.request(AhpMethods.authenticate, params),
        );
      } catch (error) {
        if (!(error instanceof RpcErrorAnswer) || error.rpc.code !== AhpErrorCodes.AuthRequired) {
          throw mapError(error, AhpMethods.authenticate);
        }
        accepted = false;
      }
      if (accepted) {
        const outcome = outcomeOf(resource, record, expiresIn);
        this.#remember(resource, outcome, record);
        if (trigger !== "initial") {
          this.#options.onRenewal?.({
            event: "renewed",
            resource: resource.id,
            trigger,
            expiresIn,
          });
        }
        return outcome;
      }
      if (attempt >= 1) {
        throw new AhpAuthRequiredError(
          `The host refused the token for ${resource.label} twice (after a renewal); sign in again with 'agentauth ahp login'.`,
          [resource.id],
        );
      }
      record = await this.#credentials.renew(resource, record, true);
    }
  }

  #remember(
    resource: AhpResource,
    outcome: AuthenticationOutcome,
    credential: CredentialRecord,
  ): void {
    const entry: Authenticated = { outcome, credential };
    const delay = this.#options.renewBeforeExpiry
      ? renewalDelayMs(credential.expiresAt, this.#now())
      : undefined;
    if (delay !== undefined && !this.#closed) {
      entry.timer = setTimeout(() => this.#background(resource.id, "scheduled"), delay);
      entry.timer.unref();
    }
    this.#authenticated.set(resource.id, entry);
  }

  #forget(id: string): void {
    const entry = this.#authenticated.get(id);
    if (entry?.timer) clearTimeout(entry.timer);
    this.#authenticated.delete(id);
  }

  /** Never the token the host holds: it is valid, only too narrow, and the new grant must be asked for. */
  async #stepUp(
    resource: AhpResource,
    previous: CredentialRecord | undefined,
  ): Promise<CredentialRecord> {
    if (previous?.tokens.accessToken) this.#credentials.markChallenged(previous.tokens.accessToken);
    return this.#credentials.signInAgain(resource);
  }

  #onMcpNotice(notice: McpAuthNotice): void {
    const known = this.#resources.get(notice.resource.id);
    // `requiredScopes` are authoritative for the next request; a step-up keeps what was granted (the union).
    const scopes =
      notice.reason === "insufficientScope" && known
        ? [...new Set([...known.scopes, ...notice.resource.scopes])]
        : notice.resource.scopes;
    // The latest challenge's metadata is authoritative: a server that moved to another authorization server is
    // signed in for there, and the credential from the old one is not renewed (it would only be refused again).
    const servers = notice.resource.authorizationServers.length
      ? notice.resource.authorizationServers
      : (known?.authorizationServers ?? []);
    if (known && servers.join(" ") !== known.authorizationServers.join(" ")) {
      this.#forget(notice.resource.id);
    }
    this.#resources.set(notice.resource.id, {
      ...(known ?? notice.resource),
      authorizationServers: [...servers],
      scopes,
      ...(notice.oauthClientId ? { oauthClientId: notice.oauthClientId } : {}),
    });
    this.#options.onMcpAuthRequired?.(notice);
    const allow = this.#options.authenticateMcpServers;
    if (!allow || (typeof allow === "function" && !allow(notice))) return;
    const trigger: RenewalTrigger =
      notice.reason === "insufficientScope"
        ? "stepUp"
        : notice.reason === "expired"
          ? "expired"
          : "required";
    this.#background(notice.resource.id, trigger);
  }

  #onNotification(method: string, params: unknown): void {
    if (this.dialect === "official") {
      const mcp = readMcpAuthNotice(method, params);
      if (mcp) {
        this.#onMcpNotice(mcp);
        return;
      }
    }
    let notice: ReturnType<typeof readAuthNotification>;
    try {
      notice = readAuthNotification(this.dialect, method, params);
    } catch (error) {
      this.#options.onRenewalError?.(error as Error, "");
      return;
    }
    if (!notice) return;
    if (notice.metadata) this.addResources([notice.metadata]);
    if (notice.reason === "expired") {
      this.#background(notice.id, "expired");
    } else if (notice.reason === "required") {
      const wasAuthenticated = this.#authenticated.has(notice.id);
      this.#forget(notice.id);
      if (wasAuthenticated || this.#options.renewBeforeExpiry)
        this.#background(notice.id, "required");
    }
  }

  #background(id: string, trigger: RenewalTrigger): void {
    if (this.#closed) return;
    let resource: AhpResource;
    try {
      resource = this.#resource(id);
    } catch (error) {
      this.#options.onRenewalError?.(error as Error, id);
      return;
    }
    this.#authenticateFlight(resource, trigger).catch((error: Error) => {
      if (!this.#closed) this.#options.onRenewalError?.(error, id);
    });
  }

  #stopTimers(): void {
    for (const entry of this.#authenticated.values()) if (entry.timer) clearTimeout(entry.timer);
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}
