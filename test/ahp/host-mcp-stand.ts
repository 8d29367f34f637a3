/**
 * Test support for the AHP host's MCP bridge: the embedded IdP, a real host (one agent, the official session
 * commands) on a loopback WebSocket with a captured log, real protected MCP servers
 * (`test/mcp/fixtures/protected-mcp-server.ts`: the official MCP server SDK behind the engine's verifier), real
 * tokens from a real login, and raw official peers already in a session they subscribed to.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after } from "node:test";
import { type AhpHost, createAhpHost, type RunningAhpHost } from "../../src/ahp/host/index.ts";
import { createLogger } from "../../src/core/log.ts";
import type { RunningIdp } from "../../src/idp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { type JsonRpcMessage, WsPeer } from "../support/ws-peer.ts";

export const AGENT_RESOURCE = "https://agent.example.test/";

export interface McpHostStand {
  idp: RunningIdp;
  host: AhpHost;
  running: RunningAhpHost;
  logs: string[];
  /** A fresh real access token for `resource` with `scope` (subject alice). */
  token(resource: string, scope?: string): Promise<string>;
  mcpServer: typeof startProtectedMcpServer;
  /** An official peer, authenticated for the agent, in a new session it created and subscribed to. */
  sessionPeer(session?: string): Promise<{ peer: WsPeer; session: string }>;
  /** An official peer that only initialized (no session). */
  peer(): Promise<WsPeer>;
  /** Another official peer of the same account (alice), subscribed to an existing session. */
  joinSession(session: string): Promise<WsPeer>;
  /** Moves the host's clock (credential lifetimes from `expiresIn`). */
  skew(ms: number): void;
}

export async function useMcpHostStand(): Promise<McpHostStand> {
  const idp = await useIdp();
  const logs: string[] = [];
  const logger = createLogger({ write: (line) => logs.push(line), level: "debug" });
  let skew = 0;
  const host = createAhpHost({ logger, now: () => Date.now() + skew })
    .agent({
      provider: "agent",
      displayName: "Agent",
      resources: [
        {
          resource: AGENT_RESOURCE,
          authorizationServers: [idp.issuer],
          scopesSupported: ["read"],
        },
      ],
    })
    .sessions();
  const running = await host.listen();
  after(() => running.close());
  const peers: WsPeer[] = [];
  after(() => Promise.all(peers.map((p) => p.close())));

  const token = async (resource: string, scope = "read") => {
    const record = await loginForTest(idp, new MemoryCredentialStore(), {
      resource,
      scope: `openid ${scope}`,
    });
    const value = record.tokens.accessToken?.reveal();
    if (!value) throw new Error("the login returned no access token");
    return value;
  };
  const peer = async () => {
    const p = await WsPeer.connect(running.url);
    peers.push(p);
    const init = await p.request("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["1.1.0"],
      clientId: `c-${randomUUID()}`,
    });
    if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
    return p;
  };
  const agentPeer = async () => {
    const p = await peer();
    await expectResult(
      p.request("authenticate", {
        channel: "ahp-root://",
        resource: AGENT_RESOURCE,
        token: await token(AGENT_RESOURCE),
      }),
    );
    return p;
  };
  return {
    idp,
    host,
    running,
    logs,
    token,
    mcpServer: startProtectedMcpServer,
    peer,
    skew: (ms) => {
      skew += ms;
    },
    async sessionPeer(session = `ahp-session:/${randomUUID()}`) {
      const p = await agentPeer();
      await expectResult(p.request("createSession", { channel: session, provider: "agent" }));
      await expectResult(p.request("subscribe", { channel: session }));
      return { peer: p, session };
    },
    async joinSession(session) {
      const p = await agentPeer();
      await expectResult(p.request("subscribe", { channel: session }));
      return p;
    },
  };
}

async function expectResult(pending: Promise<JsonRpcMessage>): Promise<unknown> {
  const answer = await pending;
  if (answer.error) throw new Error(`request failed: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

/** The `action` notifications' params a peer received (from message index `from` on). */
export function actions(peer: WsPeer, from = 0): Array<Record<string, unknown>> {
  return peer.messages
    .slice(from)
    .filter((m) => m.method === "action" && m.id === undefined)
    .map((m) => m.params as Record<string, unknown>);
}

/** Waits for the next `session/mcpServerStateChanged` whose state kind (and reason) match. */
export function stateChange(
  peer: WsPeer,
  kind: string,
  reason?: string,
  from = 0,
): Promise<JsonRpcMessage> {
  return peer.waitFor(
    (m) => {
      const params = m.params as
        | { action?: { type?: string; state?: { kind?: string; reason?: string } } }
        | undefined;
      const action = params?.action;
      return (
        m.method === "action" &&
        action?.type === "session/mcpServerStateChanged" &&
        action.state?.kind === kind &&
        (reason === undefined || action.state?.reason === reason)
      );
    },
    10_000,
    from,
  );
}

export interface OwnedMcpSession {
  host: AhpHost;
  peer: WsPeer;
  /** A request on the root channel. */
  call(method: string, params: Record<string, unknown>): Promise<JsonRpcMessage>;
  session: string;
  mcp: Awaited<ReturnType<typeof startProtectedMcpServer>>;
  server: Awaited<ReturnType<ReturnType<AhpHost["mcpServers"]>["add"]>>;
  /** The MCP access token the peer pushed. */
  token: string;
}

/**
 * A host of its own whose verifier takes the agent token's text as the account (so a test names it: "alice",
 * "bob"), and one raw official peer authenticated for `agent` as alice (for `expiresIn` seconds, when given), in a
 * session it created and subscribed to, whose MCP server "fixture" (a fresh protected server) is ready with a real
 * token the peer pushed. Every step's answer is asserted.
 */
export async function ownedMcpSession(
  stand: McpHostStand,
  options: { agent: string; now?: () => number; expiresIn?: number },
): Promise<OwnedMcpSession> {
  const host = createAhpHost({
    ...(options.now ? { now: options.now } : {}),
    verifier: async (token) => ({ subject: token.reveal(), scopes: ["read"], claims: {} }),
  })
    .agent({
      provider: "agent",
      displayName: "Agent",
      resources: [{ resource: options.agent, authorizationServers: [stand.idp.issuer] }],
    })
    .sessions();
  const running = await host.listen();
  after(() => running.close());
  const peer = await WsPeer.connect(running.url);
  after(() => peer.close());
  const call = async (method: string, params: Record<string, unknown>) =>
    peer.request(method, { channel: "ahp-root://", ...params });
  await call("initialize", { protocolVersions: ["1.1.0"], clientId: `c-${randomUUID()}` });
  const lifetime = options.expiresIn === undefined ? {} : { expiresIn: options.expiresIn };
  assert.deepEqual(
    (await call("authenticate", { resource: options.agent, token: "alice", ...lifetime })).result,
    {},
  );
  const session = `ahp-session:/${randomUUID()}`;
  assert.equal((await peer.request("createSession", { channel: session })).error, undefined);
  assert.equal((await peer.request("subscribe", { channel: session })).error, undefined);
  const mcp = await stand.mcpServer({ issuer: stand.idp.issuer, scopes: ["read"] });
  const server = await host.mcpServers(session).add({ name: "fixture", url: mcp.url });
  const token = await stand.token(mcp.url);
  const from = peer.messages.length;
  assert.deepEqual((await call("authenticate", { resource: mcp.url, token })).result, {});
  await stateChange(peer, "ready", undefined, from);
  return { host, peer, call, session, mcp, server, token };
}
