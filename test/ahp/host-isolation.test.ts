/** Per-connection credentials and the transport gate. */

import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createAhpHost } from "../../src/ahp/host/index.ts";
import { WsPeer } from "../support/ws-peer.ts";
import { ALPHA, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();

describe("AHP host isolation and transport gate", () => {
  it("[AHP-isolation] client A's token never serves client B", async () => {
    const a = await stand.peerOfficial();
    const b = await stand.peerSeed();
    const token = await stand.token(ALPHA, "read");
    assert.deepEqual(
      (await a.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token })).result,
      {},
    );
    assert.ok((await a.request("alpha/read", {})).result);
    assert.equal((await b.request("alpha/read", {})).error?.code, -32007);
    assert.deepEqual((await b.request("whoami", {})).error?.code, -32007);
    // B clearing its (absent) credential does not touch A's.
    await b.request("authenticate", { schemeId: "alpha", scheme: "bearer", token: "" });
    assert.ok((await a.request("alpha/read", {})).result);
    assert.equal(
      b.messages.some((m) => JSON.stringify(m).includes(token)),
      false,
    );
  });

  it("[AHP-transport-gate] a bad bearer or a foreign Origin is refused at the upgrade", async () => {
    const host = await createAhpHost().listen({
      gate: { bearer: "gate-secret-0123456789", allowedOrigins: ["https://app.example.test"] },
    });
    after(() => host.close());
    const none = await WsPeer.connectOutcome(host.url);
    assert.equal(none.ok, false);
    assert.equal(!none.ok && none.status, 401);
    assert.equal(!none.ok && none.headers["www-authenticate"], 'Bearer realm="ahp"');
    const wrong = await WsPeer.connectOutcome(host.url, {
      headers: { authorization: "Bearer nope" },
    });
    assert.equal(!wrong.ok && wrong.status, 401);
    assert.match(String(!wrong.ok && wrong.headers["www-authenticate"]), /error="invalid_token"/);
    const origin = await WsPeer.connectOutcome(host.url, {
      headers: { authorization: "Bearer gate-secret-0123456789" },
      origin: "https://evil.example.test",
    });
    assert.equal(!origin.ok && origin.status, 403);
    const good = await WsPeer.connectOutcome(host.url, {
      headers: { authorization: "Bearer gate-secret-0123456789" },
      origin: "https://app.example.test",
    });
    assert.equal(good.ok, true);
    if (good.ok) {
      assert.deepEqual((await good.peer.request("ping", {})).result, {});
      await good.peer.close();
    }
  });

  it("[AHP-transport-gate] by default any browser Origin is refused and the host binds loopback", async () => {
    assert.match(stand.host.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
    const refused = await WsPeer.connectOutcome(stand.host.url, {
      origin: "http://127.0.0.1:9999",
    });
    assert.equal(!refused.ok && refused.status, 403);
  });
});
