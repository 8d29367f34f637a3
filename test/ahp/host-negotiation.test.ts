/**
 * Official AHP version negotiation on the wire (`lifecycle.md`, `versioning.md` @0383429): both baselines, the
 * official 0.9.x client, old clients (0.5.0) refused cleanly, malformed offers, and a host configured otherwise.
 */

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createAhpHost } from "../../src/ahp/host/index.ts";
import { rawPeer, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();

async function offer(url: string, protocolVersions: unknown) {
  const peer = await rawPeer(url);
  const reply = await peer.request("initialize", {
    channel: "ahp-root://",
    protocolVersions,
    clientId: "negotiation-test",
  });
  return { peer, reply };
}

describe("AHP host negotiation", () => {
  it("[AHP-negotiate-0.9] an official 0.9.x client is accepted with the exact version it offered", async () => {
    const { peer, reply } = await offer(stand.host.url, ["0.9.2"]);
    assert.equal((reply.result as { protocolVersion?: string }).protocolVersion, "0.9.2");
    // The connection stays usable.
    assert.deepEqual((await peer.request("ping", { channel: "ahp-root://" })).result, {});
  });

  it("[AHP-negotiate-highest] 1.x is preferred over 0.9.x whatever the client's order", async () => {
    const { reply } = await offer(stand.host.url, ["0.9.0", "1.0.3"]);
    assert.equal((reply.result as { protocolVersion?: string }).protocolVersion, "1.0.3");
  });

  it("[AHP-negotiate-old-client] the June 2026 official client (0.5.0, 0.4.0, 0.3.0) gets -32005 with supportedVersions, then the connection closes", async () => {
    const { peer, reply } = await offer(stand.host.url, ["0.5.0", "0.4.0", "0.3.0"]);
    assert.equal(reply.error?.code, -32005);
    assert.deepEqual(reply.error?.data, { supportedVersions: ["1.0.0", "0.9.0"] });
    assert.equal((await peer.waitForClose()).code, 1002);
  });

  it("[AHP-negotiate-0x-minor] 0.10.0 is outside ^0.9.0: -32005", async () => {
    const { reply } = await offer(stand.host.url, ["0.10.0"]);
    assert.equal(reply.error?.code, -32005);
  });

  it("[AHP-negotiate-malformed] malformed offers are -32602 naming the entry; nothing is echoed back raw; the peer may retry", async () => {
    for (const bad of ["1", "v1.0.0", "1.0.0.0", "", "1.0.0-rc.1", "\u001b[31m1.0.0"]) {
      const { peer, reply } = await offer(stand.host.url, [bad, "1.0.0"]);
      assert.equal(reply.error?.code, -32602, JSON.stringify(bad));
      assert.match(
        reply.error?.message ?? "",
        /protocolVersions\[0\] is not a MAJOR\.MINOR\.PATCH version/,
      );
      assert.equal((reply.error?.message ?? "").includes("\u001b"), false);
      // Not fatal: a corrected initialize on the same connection works.
      const retry = await peer.request("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["1.0.0"],
        clientId: "negotiation-test",
      });
      assert.equal((retry.result as { protocolVersion?: string }).protocolVersion, "1.0.0");
    }
  });

  it("[AHP-negotiate-malformed] non-string and oversized offers are -32602; an empty list is -32005", async () => {
    for (const bad of [
      [5],
      [null],
      "1.0.0",
      5,
      null,
      ["9".repeat(50_000)],
      Array(40).fill("1.0.0"),
    ]) {
      const { reply } = await offer(stand.host.url, bad);
      assert.ok(
        reply.error?.code === -32602 || reply.error?.code === -32600,
        `${JSON.stringify(bad).slice(0, 40)} → ${JSON.stringify(reply).slice(0, 200)}`,
      );
    }
    const { reply } = await offer(stand.host.url, []);
    assert.equal(reply.error?.code, -32005);
  });

  it("[AHP-negotiate-configurable] createAhpHost({protocolVersions: ['0.9.0']}) accepts 0.9.x only and says so", async () => {
    const host = await createAhpHost({ protocolVersions: ["0.9.0"] }).listen({ port: 0 });
    after(() => host.close());
    const ok = await offer(host.url, ["1.1.0", "0.9.1"]);
    assert.equal((ok.reply.result as { protocolVersion?: string }).protocolVersion, "0.9.1");
    const refused = await offer(host.url, ["1.1.0", "1.0.0"]);
    assert.deepEqual(refused.reply.error?.data, { supportedVersions: ["0.9.0"] });
  });

  it("[AHP-negotiate-configurable] a malformed configured version fails at createAhpHost, not per connection", () => {
    assert.throws(() => createAhpHost({ protocolVersions: ["1.0"] }), /not a MAJOR\.MINOR\.PATCH/);
    assert.throws(() => createAhpHost({ protocolVersions: [] }), /at least one protocol version/);
  });
});
