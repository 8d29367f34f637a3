/**
 * The ACP journey of the demo, shared by the ACP panel and `agentauth demo --script`: the demo's own ACP client
 * (src/acp/client) starts the example agent (`agentauth acp example-agent --issuer ISSUER`, AGENTAUTH_HOME = the
 * demo's data folder, so the agent's credential lands in the demo vault) and asks for its state, signs it in with
 * its `oauth` method (a device flow the agent runs), opens a session with one prompt, and signs it out. Every step
 * starts one agent process and ends it (with its whole process group) before returning.
 */

import {
  type AcpAuthClient,
  type AuthStatus,
  connectAgent,
  type LoginResult,
  type UrlPrompt,
} from "../../acp/client/index.ts";
import type { DevicePromptView } from "../../console/wire.ts";
import { peerText, peerUrl } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { selfArgv } from "../../core/self-command.ts";

/** The example agent's sign-in method (src/acp/agent/example.ts): a device flow against the demo IdP. */
export const EXAMPLE_OAUTH_METHOD = "oauth";

export interface AcpJourneyContext {
  issuer: string;
  /** The demo's data folder: the agent's AGENTAUTH_HOME (its vault is the demo vault). */
  dataDir: string;
  /** argv that starts the agent; default: this Node running `agentauth acp example-agent --issuer ISSUER`. */
  agentCommand?: readonly string[];
  /** The agent's base environment; default `process.env` without vault-key variables (the folder's key file wins). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  signal?: AbortSignal;
}

export interface AcpStatusView {
  /** null when the agent does not report its state. */
  signedIn: boolean | null;
  state: string;
  accounts: { label: string; expiresAt: number | null }[];
  methods: { id: string; name: string; type: string }[];
  agentName: string;
}

export interface AcpLoginOptions {
  /**
   * Script mode: the demo IdP signs in by itself (autoApproveAs), so the journey opens the link the agent shows
   * as a browser would. Otherwise the link goes to `onPrompt` for a person.
   */
  autoApprove?: boolean;
  onPrompt?: (prompt: DevicePromptView) => void;
  /** Default 5 minutes (a person may be slow); the library's own limit is 10. */
  timeoutMs?: number;
}

export interface AcpLoginView extends AcpStatusView {
  outcome: LoginResult;
  method: string;
}

export class DemoAcpError extends AgentAuthError {
  constructor(message: string) {
    super("demo_acp_failed", message);
  }
}

/** The argv that starts the example agent against `issuer`: this Node and this build's CLI (core/self-command.ts). */
export function exampleAgentCommand(issuer: string): string[] {
  return [...selfArgv(), "acp", "example-agent", "--issuer", issuer];
}

/** Starts the agent, asks for its state and what methods it offers, ends it. */
export function acpStatus(ctx: AcpJourneyContext): Promise<AcpStatusView> {
  return withAgent(ctx, {}, async (client) => view(client, await client.status(signalOf(ctx))));
}

/** Signs the agent in with its `oauth` method (a device flow): the link is opened (autoApprove) or handed on. */
export function acpLogin(
  ctx: AcpJourneyContext,
  options: AcpLoginOptions = {},
): Promise<AcpLoginView> {
  const opened: Promise<void>[] = [];
  const onUrl = (prompt: UrlPrompt) => {
    const shown = devicePromptView(prompt);
    options.onPrompt?.(shown);
    if (options.autoApprove) opened.push(openLink(prompt.url, ctx.logger));
  };
  return withAgent(ctx, { onUrl, loginMs: options.timeoutMs ?? 5 * 60_000 }, async (client) => {
    const outcome = await client.login(EXAMPLE_OAUTH_METHOD, signalOf(ctx));
    await Promise.all(opened);
    return { ...view(client, outcome.status), outcome: outcome.outcome, method: outcome.method.id };
  });
}

/** `session/new` and one prompt. Signed out, the agent answers `auth_required`: no login is started here. */
export function acpSession(
  ctx: AcpJourneyContext,
  text = "hello from the agentauth demo",
): Promise<{ sessionId: string; stopReason: string; reply: string }> {
  const chunks: { sessionId: unknown; text: string }[] = [];
  const onSessionUpdate = (params: unknown) => {
    const chunk = messageChunk(params);
    if (chunk && chunks.length < 1_000) chunks.push(chunk);
  };
  return withAgent(ctx, { onSessionUpdate }, async (client) => {
    const { sessionId } = await client.newSession(ctx.dataDir, { ...signalOf(ctx), login: false });
    const answer = await client.prompt(sessionId, text, {
      ...signalOf(ctx),
      login: false,
      timeoutMs: 30_000,
    });
    const reply = chunks
      .filter((c) => c.sessionId === sessionId)
      .map((c) => c.text)
      .join("");
    return {
      sessionId,
      stopReason: peerText(answer?.stopReason ?? "none", { max: 40 }),
      reply: peerText(reply, { max: 200 }),
    };
  });
}

/** The text of an `agent_message_chunk` update (the agent's reply), else undefined. */
function messageChunk(params: unknown): { sessionId: unknown; text: string } | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const { sessionId, update } = params as { sessionId?: unknown; update?: unknown };
  if (typeof update !== "object" || update === null) return undefined;
  const { sessionUpdate, content } = update as { sessionUpdate?: unknown; content?: unknown };
  if (sessionUpdate !== "agent_message_chunk" || typeof content !== "object" || content === null)
    return undefined;
  const { type, text } = content as { type?: unknown; text?: unknown };
  return type === "text" && typeof text === "string" ? { sessionId, text } : undefined;
}

/** Signs the agent out (the example agent advertises logout) and reports the state afterwards. */
export function acpLogout(ctx: AcpJourneyContext): Promise<AcpStatusView> {
  return withAgent(ctx, {}, async (client) => view(client, await client.logout(signalOf(ctx))));
}

/** What the panel shows of a device prompt: the page, the page with the code filled in, the code. */
export function devicePromptView(prompt: UrlPrompt): DevicePromptView {
  const url = new URL(prompt.url);
  const code = prompt.userCode ?? url.searchParams.get("user_code") ?? "";
  return {
    verificationUri: `${url.origin}${url.pathname}`,
    verificationUriComplete: url.search ? (peerUrl(url.href) ?? null) : null,
    userCode: peerText(code, { max: 64 }),
  };
}

interface Hooks {
  onUrl?: (prompt: UrlPrompt) => void;
  onSessionUpdate?: (params: unknown) => void;
  loginMs?: number;
}

async function withAgent<T>(
  ctx: AcpJourneyContext,
  hooks: Hooks,
  run: (client: AcpAuthClient) => Promise<T>,
): Promise<T> {
  const [command = process.execPath, ...args] = ctx.agentCommand ?? exampleAgentCommand(ctx.issuer);
  const client = await connectAgent(command, args, {
    env: agentEnv(ctx),
    cwd: ctx.dataDir,
    clientInfo: { name: "agentauth-demo", version: "0.1.0" },
    ...(hooks.onUrl ? { onUrl: hooks.onUrl } : {}),
    ...(hooks.onSessionUpdate ? { onSessionUpdate: hooks.onSessionUpdate } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    timeouts: { initializeMs: 30_000, requestMs: 30_000, loginMs: hooks.loginMs ?? 5 * 60_000 },
  });
  try {
    return await run(client);
  } finally {
    // Ends the agent's process group (stdin closed, then signals): nothing it started outlives the step.
    await client.close();
  }
}

function agentEnv(ctx: AcpJourneyContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...(ctx.env ?? process.env), AGENTAUTH_HOME: ctx.dataDir };
  if (!ctx.env) {
    // The demo vault is keyed by the folder's key file; a key from the caller's shell would not open it.
    delete env.AGENTAUTH_VAULT_KEY;
    delete env.AGENTAUTH_VAULT_PREVIOUS_KEYS;
  }
  return env;
}

function view(client: AcpAuthClient, status: AuthStatus): AcpStatusView {
  const profile = client.profile;
  return {
    signedIn:
      status.state === "authenticated" ? true : status.state === "unauthenticated" ? false : null,
    state: status.state,
    accounts: status.accounts.map((a) => ({
      label: peerText(a.label, { max: 120 }),
      expiresAt: null,
    })),
    methods: profile.authMethods.map((m) => ({
      id: peerText(m.id, { max: 60 }),
      name: peerText(m.name, { max: 120 }),
      type: m.type,
    })),
    agentName: peerText(profile.agent?.title ?? profile.agent?.name ?? "the agent", { max: 80 }),
  };
}

/** Script mode: the demo IdP completes a pre-filled device page by itself; read the answer as a browser would. */
async function openLink(url: string, logger?: Logger): Promise<void> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    await response.arrayBuffer();
    if (!response.ok) logger?.warn("demo.acp.approve_failed", { status: response.status });
  } catch (error) {
    logger?.warn("demo.acp.approve_failed", { reason: (error as Error).name });
  }
}

function signalOf(ctx: AcpJourneyContext): { signal?: AbortSignal } {
  return ctx.signal ? { signal: ctx.signal } : {};
}
