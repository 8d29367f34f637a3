/** official AHP dialect, wire level: negotiation, root state, `authenticate`, gating, challenges, revocation. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ALPHA, BETA, rawPeer, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();
const alphaMeta = {
  resource: ALPHA,
  resource_name: "Alpha API",
  authorization_servers: [stand.idp.issuer],
  scopes_supported: ["read", "write"],
  required: true,
};
const betaMeta = { ...alphaMeta, resource: BETA, resource_name: "Beta API" };

describe("official AHP host", () => {
  it("[AHP-official-negotiation] picks the highest caret-compatible offered version", async () => {
    const peer = await rawPeer(stand.host.url);
    const init = await peer.request("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["2.0.0", "1.0.0", "1.4.2", "0.9.0"],
      clientId: "c1",
    });
    assert.deepEqual(init, {
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "1.4.2",
        serverSeq: 0,
        serverInfo: { name: "agentauth-example-host", version: "0.1.0" },
        snapshots: [],
      },
    });
  });

  it("[AHP-official-negotiation] answers -32005 with supportedVersions and closes when none fits", async () => {
    const peer = await rawPeer(stand.host.url);
    const init = await peer.request("initialize", {
      protocolVersions: ["2.0.0", "0.8.0"],
      clientId: "c1",
    });
    assert.deepEqual(init, {
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32005,
        message:
          "Unsupported protocol version: this host speaks AHP versions compatible with 1.0.0 or 0.9.0 (^1.0.0, ^0.9.0); offered: 2.0.0, 0.8.0.",
        data: { supportedVersions: ["1.0.0", "0.9.0"] },
      },
    });
    const closed = await peer.waitForClose();
    assert.equal(closed.code, 1002);
  });

  it("[AHP-official-root-state] advertises protectedResources per agent in root state (initialSubscriptions and subscribe)", async () => {
    const peer = await rawPeer(stand.host.url);
    const init = await peer.request("initialize", {
      channel: "ahp-root://",
      protocolVersions: ["1.1.0"],
      clientId: "c1",
      initialSubscriptions: ["ahp-root://"],
    });
    const root = {
      resource: "ahp-root://",
      fromSeq: 0,
      state: {
        agents: [
          {
            provider: "alpha",
            displayName: "Alpha",
            description: "Example agent reading from the Alpha API",
            models: [],
            protectedResources: [alphaMeta],
          },
          {
            provider: "beta",
            displayName: "Beta",
            description: "Example agent writing to the Beta API",
            models: [],
            protectedResources: [betaMeta],
          },
        ],
      },
    };
    assert.deepEqual((init.result as { snapshots: unknown }).snapshots, [root]);
    const sub = await peer.request("subscribe", { channel: "ahp-root://" });
    assert.deepEqual(sub, { jsonrpc: "2.0", id: 2, result: { snapshot: root } });
    const other = await peer.request("subscribe", { channel: "ahp-session:/nope" });
    assert.equal(other.error?.code, -32001);
    const unknown = await peer.request("subscribe", { channel: "ahp-terminal:/nope" });
    assert.equal(unknown.error?.code, -32008);
  });

  it("[AHP-gating] a gated command answers -32007 with data.resources until the resource is authenticated", async () => {
    const peer = await stand.peerOfficial();
    const refused = await peer.request("alpha/read", {});
    assert.deepEqual(refused.error, {
      code: -32007,
      message:
        "Authentication required for Alpha API (invalid_request: No access token has been provided for Alpha API.)",
      data: { resources: [alphaMeta] },
    });
    const any = await peer.request("whoami", {});
    assert.deepEqual(any.error?.data, { resources: [alphaMeta, betaMeta] });

    const token = await stand.token(ALPHA, "read");
    const auth = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token,
      expiresIn: 600,
    });
    assert.deepEqual({ ...auth, id: undefined }, { jsonrpc: "2.0", id: undefined, result: {} });
    const ok = await peer.request("alpha/read", {});
    assert.deepEqual(ok.result, { agent: "alpha", read: true });
    const who = await peer.request("whoami", {});
    const [entry, ...rest] = (who.result as { resources: Array<Record<string, unknown>> })
      .resources;
    assert.equal(rest.length, 0);
    assert.equal(entry?.resource, ALPHA);
    assert.equal(entry?.subject, "alice");
    assert.deepEqual(entry?.scopes, ["read"]);
    assert.ok(typeof entry?.expiresIn === "number" && entry.expiresIn <= 600);
    // Beta is still closed for this connection.
    assert.equal((await peer.request("beta/write", {})).error?.code, -32007);
    assert.equal(JSON.stringify(peer.messages).includes(token), false);
  });

  it("[AHP-challenge-invalid-token] a garbage token is refused with -32007 naming invalid_token", async () => {
    const peer = await stand.peerOfficial();
    const res = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: "not-a-jwt",
    });
    assert.equal(res.error?.code, -32007);
    assert.match(res.error?.message ?? "", /invalid_token/);
    assert.deepEqual(res.error?.data, { resources: [alphaMeta] });
  });

  it("[AHP-challenge-wrong-audience] a token for beta is refused for alpha", async () => {
    const peer = await stand.peerOfficial();
    const token = await stand.token(BETA, "read");
    const res = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token,
    });
    assert.equal(res.error?.code, -32007);
    assert.equal(
      res.error?.message,
      "Authentication required for Alpha API (invalid_token: The access token was not issued for this resource.)",
    );
  });

  it("[AHP-challenge-insufficient-scope] a command needing write refuses a read-only token", async () => {
    const peer = await stand.peerOfficial();
    const token = await stand.token(BETA, "read");
    assert.deepEqual(
      (await peer.request("authenticate", { channel: "ahp-root://", resource: BETA, token }))
        .result,
      {},
    );
    const res = await peer.request("beta/write", {});
    assert.equal(res.error?.code, -32007);
    assert.match(res.error?.message ?? "", /insufficient_scope/);
    assert.deepEqual(res.error?.data, { resources: [betaMeta] });
  });

  it("[AHP-revoke-empty-token] an empty token revokes this connection's credential", async () => {
    const peer = await stand.peerOfficial();
    const token = await stand.token(ALPHA, "read");
    await peer.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token });
    assert.ok((await peer.request("alpha/read", {})).result);
    const revoke = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: "",
    });
    assert.deepEqual(revoke.result, {});
    const after = await peer.request("alpha/read", {});
    assert.equal(after.error?.code, -32007);
    assert.match(after.error?.message ?? "", /revoked/);
  });

  it("[AHP-bad-input] a resource never advertised is -32602", async () => {
    const peer = await stand.peerOfficial();
    const res = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: "https://evil.example.test/",
      token: "x",
    });
    assert.equal(res.error?.code, -32602);
  });
});
