/** Bad input: every request is answered per JSON-RPC and the host keeps serving other clients. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AhpErrorCodes } from "../../src/ahp/wire.ts";
import { ALPHA, rawPeer, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();

/**
 * JSON-RPC 2.0 reserves -32768..-32000 (AHP's own application codes live in -32000..-32099, `types/common/errors.ts`
 * @3462795) and AHP defines no rate-limit code: ours must sit outside, so it can never collide with an official one.
 */
const RATE_LIMITED = -31429;

describe("AHP host bad input", () => {
  it("[AHP-bad-input] malformed JSON, binary frames, non-objects and bad ids get JSON-RPC errors", async () => {
    const peer = await rawPeer(stand.host.url);
    peer.sendRaw("{not json");
    assert.deepEqual(await peer.response(null), {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "Parse error: the frame is not valid JSON." },
    });
    const from = peer.messages.length;
    peer.sendRaw(Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" })), {
      binary: true,
    });
    const binary = await peer.waitFor((m) => m.id === null, undefined, from);
    assert.equal(binary.error?.code, -32600);
    const from2 = peer.messages.length;
    peer.sendRaw("[1,2]");
    assert.equal((await peer.waitFor((m) => m.id === null, undefined, from2)).error?.code, -32600);
    peer.send({ jsonrpc: "1.0", id: 5, method: "ping" });
    assert.equal((await peer.response(5)).error?.code, -32600);
    // A response from the client is ignored (the host sends no requests); ping still works after it.
    peer.send({ jsonrpc: "2.0", id: 77, result: {} });
    assert.deepEqual((await peer.request("ping")).result, {});
  });

  it("[AHP-bad-input] commands before initialize, a second initialize, unknown methods and wrong types", async () => {
    const peer = await rawPeer(stand.host.url);
    assert.equal((await peer.request("whoami", {})).error?.code, -32600);
    assert.equal(
      (await peer.request("initialize", { protocolVersions: "1.1.0" })).error?.code,
      -32602,
    );
    assert.equal(
      (await peer.request("initialize", { protocolVersion: 1, protocolVersions: ["1.0.0"] })).error
        ?.code,
      -32602,
    );
    assert.ok(
      (await peer.request("initialize", { protocolVersions: ["1.0.0"], clientId: "x" })).result,
    );
    assert.equal(
      (await peer.request("initialize", { protocolVersions: ["1.0.0"], clientId: "x" })).error
        ?.code,
      -32600,
    );
    const unknown = await peer.request("session/create", {});
    assert.deepEqual(unknown.error, { code: -32601, message: "Method not found: session/create" });
    const wrong = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: 42,
    });
    assert.equal(wrong.error?.code, -32602);
    assert.match(wrong.error?.message ?? "", /^Invalid params: token: /);
    const channel = await peer.request("authenticate", {
      channel: "ahp-session:/x",
      resource: ALPHA,
      token: "t",
    });
    assert.equal(channel.error?.code, -32602);
    const secretish = "super-secret-value-that-must-not-echo";
    const echoed = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: secretish,
      expiresIn: "soon",
    });
    assert.equal(echoed.error?.code, -32602);
    assert.equal(JSON.stringify(echoed).includes(secretish), false);
  });

  it("[AHP-bad-input] oversized messages: answered above the soft limit, socket closed (1009) above the hard cap", async () => {
    const peer = await rawPeer(stand.host.url);
    peer.send({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(100 * 1024) } });
    const big = await peer.waitFor((m) => m.id === null);
    assert.equal(big.error?.code, -32600);
    assert.match(big.error?.message ?? "", /too large/);
    const huge = await rawPeer(stand.host.url);
    huge.sendRaw("x".repeat(2 * 1024 * 1024));
    assert.equal((await huge.waitForClose()).code, 1009);
    // Other clients are unaffected.
    assert.deepEqual((await peer.request("ping")).result, {});
  });

  it("[AHP-rate-limit-code] a flood of authenticate calls is rate limited with -31429 (outside the JSON-RPC and AHP reserved ranges), every call answered", async () => {
    const peer = await stand.peerOfficial();
    const other = await stand.peerOfficial();
    const ids = Array.from({ length: 40 }, (_, i) => 1000 + i);
    for (const id of ids) {
      peer.send({
        jsonrpc: "2.0",
        id,
        method: "authenticate",
        params: { channel: "ahp-root://", resource: ALPHA, token: "junk" },
      });
    }
    const answers = await Promise.all(ids.map((id) => peer.response(id)));
    const codes = answers.map((a) => a.error?.code);
    assert.ok(
      codes.every((c) => c === -32007 || c === RATE_LIMITED),
      String(codes),
    );
    const limited = answers.filter((a) => a.error?.code === RATE_LIMITED);
    assert.match(limited[0]?.error?.message ?? "", /Too many authenticate calls/);
    assert.equal(AhpErrorCodes.RateLimited, RATE_LIMITED);
    assert.ok(RATE_LIMITED > -32000 || RATE_LIMITED < -32768);
    assert.ok(limited.length >= 25, `only ${limited.length} rate limited`);
    assert.ok(
      typeof ((limited[0]?.error?.data ?? {}) as { retryAfterMs?: unknown }).retryAfterMs ===
        "number",
    );
    // The other connection has its own budget and the host still serves it.
    const res = await other.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: "junk",
    });
    assert.equal(res.error?.code, -32007);
  });
});
