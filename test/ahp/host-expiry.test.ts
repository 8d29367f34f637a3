/** Token lifetimes: `expiresIn`, the JWT's own `exp`, expired-token challenges. Short lifetimes, bounded waits. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ALPHA, BETA, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand({ idp: { accessTokenTtlSeconds: 2 } });

describe("AHP host expiry", () => {
  it("[AHP-expiry-notification] official: expiresIn runs out → auth/required reason expired with the full metadata", async () => {
    const peer = await stand.peerOfficial();
    const token = await stand.token(ALPHA, "read");
    const res = await peer.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token,
      expiresIn: 1,
    });
    assert.deepEqual(res.result, {});
    const note = await peer.waitFor((m) => m.method === "auth/required");
    assert.deepEqual(note, {
      jsonrpc: "2.0",
      method: "auth/required",
      params: {
        channel: "ahp-root://",
        resource: {
          resource: ALPHA,
          resource_name: "Alpha API",
          authorization_servers: [stand.idp.issuer],
          scopes_supported: ["read", "write"],
          required: true,
        },
        reason: "expired",
      },
    });
    const after = await peer.request("alpha/read", {});
    assert.equal(after.error?.code, -32007);
    assert.match(after.error?.message ?? "", /invalid_token: The access token expired/);
  });

  it("[AHP-expiry-notification] seed: the JWT's own exp (earlier than nothing) → notify/authRequired expired", async () => {
    const peer = await stand.peerSeed();
    const token = await stand.token(BETA, "read");
    await peer.request("authenticate", { schemeId: "beta", scheme: "bearer", token });
    const note = await peer.waitFor(
      (m) =>
        m.method === "notify/authRequired" && (m.params as { state?: string }).state === "expired",
    );
    assert.deepEqual(note.params, {
      type: "notify/authRequired",
      schemeId: "beta",
      state: "expired",
      challenge: {
        schemeId: "beta",
        error: "invalid_token",
        errorDescription: "The access token expired.",
      },
    });
  });

  it("[AHP-challenge-expired-token] an already expired token is refused with invalid_token", async () => {
    const token = await stand.token(ALPHA, "read");
    await sleep(2500);
    const peer = await stand.peerSeed();
    const res = await peer.request("authenticate", { schemeId: "alpha", scheme: "bearer", token });
    assert.deepEqual(res.error?.data, {
      challenges: [
        {
          schemeId: "alpha",
          error: "invalid_token",
          errorDescription: "The access token has expired.",
        },
      ],
    });
  });
});
