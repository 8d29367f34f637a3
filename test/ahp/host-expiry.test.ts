/** Token lifetimes: `expiresIn`, the JWT's own `exp`, expired-token challenges. Short lifetimes, bounded waits. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { ALPHA, BETA, useHostStand } from "./host-fixture.ts";

// 4 s tokens: each test authenticates with a fresh token before it expires, and `exp` is whole seconds (the token can
// be a second shorter than its TTL), so at 2 s a loaded machine had as little as one second for that round trip.
const TOKEN_TTL_SECONDS = 4;
const stand = await useHostStand({ idp: { accessTokenTtlSeconds: TOKEN_TTL_SECONDS } });

/** The token's own `exp` (ms): the tests wait past it, not for a fixed time. */
function expiresAtMs(token: string): number {
  const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
  return Number(claims.exp) * 1000;
}

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
    // Past the token's exp (a structural wait, not a timing assertion).
    await sleep(Math.max(0, expiresAtMs(token) + 500 - Date.now()));
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
