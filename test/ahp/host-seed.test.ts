/** The seed's dialect (VS Code auth-rework), wire level: resourceMetadata, authenticate, challenges, notify/authRequired, setAuthToken. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ALPHA, BETA, rawPeer, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();

describe("AHP seed-dialect host", () => {
  it("[AHP-seed-initialize-shape] initialize with a numeric protocolVersion returns resourceMetadata", async () => {
    const peer = await rawPeer(stand.host.url);
    const init = await peer.request("initialize", { protocolVersion: 1, clientId: "cli-1" });
    assert.deepEqual(init, {
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: 1,
        serverSeq: 0,
        snapshots: [],
        resourceMetadata: {
          resource: stand.host.url,
          authSchemes: [
            {
              scheme: "bearer",
              id: "alpha",
              label: "Alpha API",
              authorizationServers: [stand.idp.issuer],
              scopesSupported: ["read", "write"],
              required: true,
              resource: ALPHA,
            },
            {
              scheme: "bearer",
              id: "beta",
              label: "Beta API",
              authorizationServers: [stand.idp.issuer],
              scopesSupported: ["read", "write"],
              required: true,
              resource: BETA,
            },
          ],
        },
      },
    });
    const bad = await (await rawPeer(stand.host.url)).request("initialize", { protocolVersion: 7 });
    assert.deepEqual(bad.error, {
      code: -32005,
      message: "Unsupported protocol version: this host speaks seed protocolVersion 1; offered: 7.",
      data: { supportedVersions: [1] },
    });
  });

  it("[AHP-seed-authenticate] authenticate → {authenticated:true}, then notify/authRequired authenticated", async () => {
    const peer = await stand.peerSeed();
    const missing = await peer.request("alpha/read", {});
    assert.deepEqual(missing.error, {
      code: -32007,
      message: "Authentication required",
      data: {
        challenges: [
          {
            schemeId: "alpha",
            error: "invalid_request",
            errorDescription: "No access token has been provided for Alpha API.",
          },
        ],
      },
    });
    const token = await stand.token(ALPHA, "read");
    const res = await peer.request("authenticate", { schemeId: "alpha", scheme: "bearer", token });
    assert.deepEqual(res.result, { authenticated: true });
    const note = await peer.waitFor((m) => m.method === "notify/authRequired");
    assert.deepEqual(note, {
      jsonrpc: "2.0",
      method: "notify/authRequired",
      params: { type: "notify/authRequired", schemeId: "alpha", state: "authenticated" },
    });
    assert.deepEqual((await peer.request("alpha/read", {})).result, { agent: "alpha", read: true });
  });

  it("[AHP-challenge-invalid-token] seed challenges carry invalid_token for bad and wrong-audience tokens", async () => {
    const peer = await stand.peerSeed();
    const bad = await peer.request("authenticate", {
      schemeId: "alpha",
      scheme: "bearer",
      token: "garbage",
    });
    assert.equal(bad.error?.code, -32007);
    const [challenge] = (
      (bad.error?.data ?? { challenges: [] }) as { challenges: Array<Record<string, unknown>> }
    ).challenges;
    assert.equal(challenge?.schemeId, "alpha");
    assert.equal(challenge?.error, "invalid_token");
    const betaToken = await stand.token(BETA, "read");
    const wrong = await peer.request("authenticate", {
      schemeId: "alpha",
      scheme: "bearer",
      token: betaToken,
    });
    assert.deepEqual(wrong.error?.data, {
      challenges: [
        {
          schemeId: "alpha",
          error: "invalid_token",
          errorDescription: "The access token was not issued for this resource.",
        },
      ],
    });
  });

  it("[AHP-challenge-insufficient-scope] seed challenge names the scope the command needs", async () => {
    const peer = await stand.peerSeed();
    const token = await stand.token(BETA, "read");
    await peer.request("authenticate", { schemeId: "beta", scheme: "bearer", token });
    const res = await peer.request("beta/write", {});
    assert.deepEqual(res.error?.data, {
      challenges: [
        {
          schemeId: "beta",
          error: "insufficient_scope",
          errorDescription: "The access token lacks a scope this command needs.",
          scope: "write",
        },
      ],
    });
  });

  it("[AHP-revoke-empty-token] seed: an empty token revokes, answers {authenticated:false} and notifies revoked", async () => {
    const peer = await stand.peerSeed();
    const token = await stand.token(ALPHA, "read");
    await peer.request("authenticate", { schemeId: "alpha", scheme: "bearer", token });
    const from = peer.messages.length;
    const res = await peer.request("authenticate", {
      schemeId: "alpha",
      scheme: "bearer",
      token: "",
    });
    assert.deepEqual(res.result, { authenticated: false });
    const note = await peer.waitFor((m) => m.method === "notify/authRequired", undefined, from);
    assert.deepEqual(note.params, {
      type: "notify/authRequired",
      schemeId: "alpha",
      state: "revoked",
    });
    assert.equal((await peer.request("alpha/read", {})).error?.code, -32007);
  });

  it("[AHP-seed-set-auth-token] the deprecated setAuthToken still works and logs a deprecation warning", async () => {
    const peer = await stand.peerSeed();
    const token = await stand.token(BETA, "read write");
    peer.notify("setAuthToken", { token });
    const note = await peer.waitFor((m) => m.method === "notify/authRequired");
    assert.deepEqual(note.params, {
      type: "notify/authRequired",
      schemeId: "beta",
      state: "authenticated",
    });
    assert.deepEqual((await peer.request("beta/write", {})).result, {
      agent: "beta",
      written: true,
    });
    assert.ok(
      stand.logs.some(
        (l) => l.includes("ahp.deprecated_set_auth_token") && l.includes('"level":"warn"'),
      ),
    );
  });

  it("[AHP-bad-input] seed: unknown schemeId and a wrong scheme are -32602", async () => {
    const peer = await stand.peerSeed();
    const unknown = await peer.request("authenticate", {
      schemeId: "gamma",
      scheme: "bearer",
      token: "x",
    });
    assert.equal(unknown.error?.code, -32602);
    const scheme = await peer.request("authenticate", {
      schemeId: "alpha",
      scheme: "dpop",
      token: "x",
    });
    assert.equal(scheme.error?.code, -32602);
  });
});
