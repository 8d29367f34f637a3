/**
 * The official command set the example host serves, so an official client meets the auth flow where it really does
 * (`createSession`, `listSessions`, `reconnect`): shapes from `types/channels-session/commands.ts`,
 * `types/channels-root/commands.ts`, `types/common/commands.ts` and `types/channels-session/state.ts` @043bc34.
 */

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { connectAhpHost } from "../../src/ahp/client/index.ts";
import type { AhpCommandError } from "../../src/ahp/host/context.ts";
import { createAhpHost } from "../../src/ahp/host/index.ts";
import { ResourceRegistry } from "../../src/ahp/host/resources.ts";
import { SessionCatalog, sessionCommands } from "../../src/ahp/host/sessions.ts";
import { AhpErrorCodes } from "../../src/ahp/wire.ts";
import { silentLogger } from "../../src/core/log.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest } from "../support/credentials.ts";
import { ALPHA, BETA, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();
const alphaMeta = {
  resource: ALPHA,
  resource_name: "Alpha API",
  authorization_servers: [stand.idp.issuer],
  scopes_supported: ["read", "write"],
  required: true,
};
const betaMeta = { ...alphaMeta, resource: BETA, resource_name: "Beta API" };
const session = () => `ahp-session:/${randomUUID()}`;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function authenticated(resource: string, scope = "read") {
  const peer = await stand.peerOfficial();
  const token = await stand.token(resource, scope);
  const auth = await peer.request("authenticate", { channel: "ahp-root://", resource, token });
  assert.deepEqual(auth.result, {});
  return peer;
}

describe("official session commands on the example host", () => {
  it("[AHP-official-createSession-gated] createSession answers -32007 with the agent's resources until authenticated, then null", async () => {
    const peer = await stand.peerOfficial();
    const channel = session();
    const refused = await peer.request("createSession", { channel, provider: "alpha" });
    assert.equal(refused.error?.code, -32007);
    assert.deepEqual(refused.error?.data, { resources: [alphaMeta] });

    const token = await stand.token(ALPHA, "read");
    await peer.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token });
    const created = await peer.request("createSession", { channel, provider: "alpha" });
    assert.deepEqual(created, { jsonrpc: "2.0", id: created.id, result: null });
    // Beta's agent is still closed to this connection, and says which resource it needs.
    const beta = await peer.request("createSession", { channel: session(), provider: "beta" });
    assert.deepEqual(beta.error?.data, { resources: [betaMeta] });
  });

  it("[AHP-official-createSession-errors] duplicate -32003, unknown provider -32002, bad channel or params -32602", async () => {
    const peer = await authenticated(ALPHA);
    const channel = session();
    assert.equal(
      (await peer.request("createSession", { channel, provider: "alpha" })).result,
      null,
    );
    const again = await peer.request("createSession", { channel, provider: "alpha" });
    assert.equal(again.error?.code, -32003);
    const unknown = await peer.request("createSession", { channel: session(), provider: "gamma" });
    assert.equal(unknown.error?.code, -32002);
    assert.match(unknown.error?.message ?? "", /alpha, beta/);
    for (const params of [
      { channel: "ahp-root://", provider: "alpha" },
      { channel: "https://evil.example/", provider: "alpha" },
      { channel: `ahp-session:/${"a".repeat(5000)}`, provider: "alpha" },
      { channel: "ahp-session:/\u001b[2Jx", provider: "alpha" },
      { channel: session(), provider: 5 },
      { channel: session() },
      null,
      [],
      "createSession",
    ]) {
      const res = await peer.request("createSession", params);
      assert.equal(res.error?.code, -32602, JSON.stringify(params).slice(0, 80));
      assert.equal((res.error?.message ?? "").includes("\u001b"), false);
    }
  });

  it("[AHP-official-listSessions-gated] listSessions meets -32007 first, then lists only sessions of agents this connection may use", async () => {
    const alphaPeer = await authenticated(ALPHA);
    const channel = session();
    await alphaPeer.request("createSession", { channel, provider: "alpha" });

    const fresh = await stand.peerOfficial();
    const refused = await fresh.request("listSessions", { channel: "ahp-root://" });
    assert.equal(refused.error?.code, -32007);
    assert.deepEqual(refused.error?.data, { resources: [alphaMeta, betaMeta] });

    const listed = await alphaPeer.request("listSessions", { channel: "ahp-root://" });
    const items = (listed.result as { items: Array<Record<string, unknown>> }).items;
    const mine = items.find((s) => s.resource === channel);
    assert.ok(mine, "the created session is listed");
    assert.equal(mine.provider, "alpha");
    assert.equal(mine.status, 1);
    assert.equal(typeof mine.title, "string");
    assert.match(String(mine.createdAt), ISO);
    assert.match(String(mine.modifiedAt), ISO);
    assert.equal("nextCursor" in (listed.result as object), false);

    // A connection that holds only beta sees no alpha session.
    const betaPeer = await authenticated(BETA);
    const betaList = await betaPeer.request("listSessions", { channel: "ahp-root://" });
    const betaItems = (betaList.result as { items: Array<{ provider: string }> }).items;
    assert.equal(
      betaItems.some((s) => s.provider === "alpha"),
      false,
    );
    // Cursors are opaque and this host never issues one: any cursor is -32602.
    const cursor = await alphaPeer.request("listSessions", {
      channel: "ahp-root://",
      cursor: "eyJvIjo1MH0=",
    });
    assert.equal(cursor.error?.code, -32602);
  });

  it("[AHP-official-session-notifications] root/sessionAdded and root/sessionRemoved reach connections entitled to the agent", async () => {
    const creator = await authenticated(ALPHA);
    const watcher = await authenticated(ALPHA);
    const outsider = await authenticated(BETA);
    const channel = session();
    await creator.request("createSession", { channel, provider: "alpha" });
    const added = await watcher.waitFor((m) => m.method === "root/sessionAdded");
    assert.equal((added.params as { channel: string }).channel, "ahp-root://");
    assert.equal((added.params as { summary: { resource: string } }).summary.resource, channel);
    assert.equal((await creator.request("disposeSession", { channel })).result, null);
    const removed = await watcher.waitFor((m) => m.method === "root/sessionRemoved");
    assert.deepEqual(removed.params, { channel: "ahp-root://", session: channel });
    await outsider.request("ping", { channel: "ahp-root://" });
    assert.equal(outsider.notifications("root/sessionAdded").length, 0);
  });

  it("[AHP-official-disposeSession] unknown -32001; another agent's session needs that agent's auth; success null", async () => {
    const alphaPeer = await authenticated(ALPHA);
    const channel = session();
    await alphaPeer.request("createSession", { channel, provider: "alpha" });
    assert.equal(
      (await alphaPeer.request("disposeSession", { channel: session() })).error?.code,
      -32001,
    );
    const betaPeer = await authenticated(BETA);
    const refused = await betaPeer.request("disposeSession", { channel });
    assert.deepEqual(refused.error?.data, { resources: [alphaMeta] });
    assert.equal((await alphaPeer.request("disposeSession", { channel })).result, null);
    const listed = await alphaPeer.request("listSessions", { channel: "ahp-root://" });
    assert.equal(
      (listed.result as { items: Array<{ resource: string }> }).items.some(
        (s) => s.resource === channel,
      ),
      false,
    );
  });

  it("[AHP-official-subscribe-session] subscribe to a session returns its state when entitled, -32007 when not, -32001 when unknown", async () => {
    const alphaPeer = await authenticated(ALPHA);
    const channel = session();
    await alphaPeer.request("createSession", { channel, provider: "alpha" });
    const sub = await alphaPeer.request("subscribe", { channel });
    const snapshot = (
      sub.result as { snapshot: { resource: string; state: Record<string, unknown> } }
    ).snapshot;
    assert.equal(snapshot.resource, channel);
    assert.equal(snapshot.state.provider, "alpha");
    assert.equal(snapshot.state.lifecycle, "ready");
    assert.deepEqual(snapshot.state.activeClients, []);
    assert.deepEqual(snapshot.state.chats, []);
    const outsider = await stand.peerOfficial();
    assert.equal((await outsider.request("subscribe", { channel })).error?.code, -32007);
    assert.equal(
      (await alphaPeer.request("subscribe", { channel: session() })).error?.code,
      -32001,
    );
  });

  it("[AHP-official-unsubscribe] unsubscribe is a notification (no answer, connection unaffected); sent as a request it answers {}", async () => {
    const peer = await authenticated(ALPHA);
    const channel = session();
    await peer.request("createSession", { channel, provider: "alpha" });
    const before = peer.messages.length;
    peer.notify("unsubscribe", { channel });
    peer.notify("unsubscribe", { channel: 5 });
    peer.notify("dispatchAction", { channel, clientSeq: 1, action: { type: "x" } });
    assert.deepEqual((await peer.request("ping", { channel: "ahp-root://" })).result, {});
    assert.equal(peer.messages.length, before + 1);
    assert.deepEqual((await peer.request("unsubscribe", { channel })).result, {});
  });

  it("[AHP-official-reconnect] reconnect meets -32007 for a subscribed session's agent, then replays nothing and lists what is missing", async () => {
    const creator = await authenticated(ALPHA);
    const channel = session();
    await creator.request("createSession", { channel, provider: "alpha" });
    const gone = session();
    const peer = await stand.peerOfficial();
    const params = {
      channel: "ahp-root://",
      clientId: "test-client",
      lastSeenServerSeq: 0,
      subscriptions: ["ahp-root://", channel, gone],
    };
    const refused = await peer.request("reconnect", params);
    assert.equal(refused.error?.code, -32007);
    assert.deepEqual(refused.error?.data, { resources: [alphaMeta] });
    const token = await stand.token(ALPHA, "read");
    await peer.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token });
    const ok = await peer.request("reconnect", params);
    assert.deepEqual(ok.result, { type: "replay", actions: [], missing: [gone] });
    const bad = await peer.request("reconnect", { ...params, subscriptions: "x" });
    assert.equal(bad.error?.code, -32602);
  });

  it("[AHP-official-unimplemented] other official commands answer -32601 naming them as AHP commands this host does not serve", async () => {
    const peer = await authenticated(ALPHA);
    for (const method of ["resolveSessionConfig", "fetchTurns", "completions", "resourceRead"]) {
      const res = await peer.request(method, { channel: "ahp-root://" });
      assert.equal(res.error?.code, -32601, method);
      assert.match(res.error?.message ?? "", /AHP command this host does not implement/);
    }
    const other = await peer.request("no/such", {});
    assert.equal(other.error?.code, -32601);
    assert.doesNotMatch(other.error?.message ?? "", /AHP command/);
  });

  it("[AHP-official-gate-declarable] a host author gates any official command name, fixed or computed from params", async () => {
    const host = await createAhpHost()
      .agent({
        provider: "alpha",
        displayName: "Alpha",
        resources: [{ resource: ALPHA, authorizationServers: [stand.idp.issuer] }],
      })
      .command("resolveSessionConfig", { requires: [ALPHA] }, () => ({
        schema: { type: "object", properties: {} },
        values: {},
      }))
      .command(
        "fetchTurns",
        { requires: (params) => ((params as { channel?: string }).channel ? [ALPHA] : []) },
        () => ({}),
      )
      .listen({ port: 0 });
    after(() => host.close());
    const { WsPeer } = await import("../support/ws-peer.ts");
    const peer = await WsPeer.connect(host.url);
    after(() => peer.close());
    await peer.request("initialize", { protocolVersions: ["1.0.0"], clientId: "c" });
    const refused = await peer.request("resolveSessionConfig", { channel: "ahp-root://" });
    assert.equal(refused.error?.code, -32007);
    assert.equal(
      (await peer.request("fetchTurns", { channel: "ahp-chat:/x" })).error?.code,
      -32007,
    );
    assert.deepEqual((await peer.request("fetchTurns", {})).result, {});
    const token = await stand.token(ALPHA, "read");
    await peer.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token });
    assert.ok((await peer.request("resolveSessionConfig", { channel: "ahp-root://" })).result);
  });

  it("[AHP-official-client-meets-auth] the agentauth client meets -32007 on createSession, authenticates from the vault and retries once", async () => {
    const store = new MemoryCredentialStore();
    await loginForTest(stand.idp, store, {
      resource: ALPHA,
      scope: "openid profile email offline_access read",
    });
    const client = await connectAhpHost(stand.host.url, { store });
    try {
      const channel = session();
      assert.equal(await client.request("createSession", { channel, provider: "alpha" }), null);
      assert.deepEqual(client.authenticatedResources(), [ALPHA]);
      const list = (await client.request("listSessions", { channel: "ahp-root://" })) as {
        items: Array<{ resource: string }>;
      };
      assert.ok(list.items.some((s) => s.resource === channel));
    } finally {
      await client.close();
    }
  });
});

/**
 * The embedded IdP signs every test login in as one demo account (autoApproveAs), so two accounts are two command
 * contexts here: the real catalogue and the real command handlers the host serves, called as the connection does.
 */
describe("sessions belong to the account that created them", () => {
  const registry = new ResourceRegistry();
  registry.addAgent({
    provider: "alpha",
    displayName: "Alpha",
    resources: [{ resource: ALPHA, authorizationServers: [stand.idp.issuer] }],
  });
  const catalog = new SessionCatalog(registry);
  const commands = new Map(sessionCommands(registry, catalog, () => {}));
  const as = (subject: string | undefined) => ({
    connectionId: subject ?? "none",
    dialect: "official" as const,
    authenticated: [{ resource: ALPHA, schemeId: "alpha", subject, scopes: ["read"] }],
    logger: silentLogger,
  });
  const run = (method: string, params: unknown, ctx: ReturnType<typeof as>) => {
    try {
      return { result: commands.get(method)?.handler(params, ctx) };
    } catch (error) {
      return { error: error as AhpCommandError };
    }
  };
  const listed = (ctx: ReturnType<typeof as>) =>
    (run("listSessions", {}, ctx).result as { items: Array<{ resource: string }> }).items.map(
      (s) => s.resource,
    );

  it("[AHP-sessions-per-principal] another account authenticated for the same agent neither lists, reconnects to nor disposes the session", () => {
    const alice = as("alice");
    const bob = as("bob");
    const channel = session();
    assert.equal(run("createSession", { channel, provider: "alpha" }, alice).result, null);
    assert.deepEqual(listed(alice), [channel]);
    assert.deepEqual(listed(bob), [], "bob does not see alice's session");
    assert.deepEqual(listed(as(undefined)), [], "nor does a token without a subject");
    const disposed = run("disposeSession", { channel }, bob);
    assert.equal(
      disposed.error?.rpcCode,
      AhpErrorCodes.SessionNotFound,
      "answered as if it did not exist",
    );
    const reconnect = run(
      "reconnect",
      { clientId: "c", lastSeenServerSeq: 0, subscriptions: [channel] },
      bob,
    );
    assert.deepEqual((reconnect.result as { missing: string[] }).missing, [channel]);
    assert.equal(catalog.getOwned(channel, bob.authenticated), undefined);
    assert.deepEqual(listed(alice), [channel], "alice's session survived");
    assert.equal(run("disposeSession", { channel }, alice).result, null);
    assert.deepEqual(listed(alice), []);
  });

  it("[AHP-sessions-per-principal] over the wire, a subscribe to a session of the same account works (its owner check passes)", async () => {
    const peer = await authenticated(ALPHA);
    const channel = session();
    assert.equal(
      (await peer.request("createSession", { channel, provider: "alpha" })).result,
      null,
    );
    const subscribed = await peer.request("subscribe", { channel });
    assert.equal(subscribed.error, undefined, JSON.stringify(subscribed.error));
    const other = await authenticated(ALPHA);
    const seen = await other.request("listSessions", {});
    // Same demo account in another connection: the same principal, so the session is listed there too.
    assert.ok(
      (seen.result as { items: Array<{ resource: string }> }).items.some(
        (s) => s.resource === channel,
      ),
    );
  });
});
