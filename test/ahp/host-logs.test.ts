/** Tokens never reach the log, whatever path they travel (accepted, rejected, cleared, expired, deprecated). */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ALPHA, BETA, useHostStand } from "./host-fixture.ts";

const stand = await useHostStand();

describe("AHP host logs", () => {
  it("[AHP-no-token-logged] no captured log line contains any token sent to the host", async () => {
    const a = await stand.token(ALPHA, "read");
    const b = await stand.token(BETA, "read write");
    const junk = "junk-token-abcdefghijklmnopqrstuvwxyz";
    const p1 = await stand.peerOfficial();
    await p1.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: a,
      expiresIn: 1,
    });
    await p1.request("authenticate", { channel: "ahp-root://", resource: BETA, token: a });
    await p1.request("authenticate", { channel: "ahp-root://", resource: ALPHA, token: junk });
    await p1.request("authenticate", {
      channel: "ahp-root://",
      resource: ALPHA,
      token: 7,
      scopes: [junk],
    });
    await p1.waitFor((m) => m.method === "auth/required");
    const p2 = await stand.peerSeed();
    p2.notify("setAuthToken", { token: b });
    await p2.waitFor((m) => m.method === "notify/authRequired");
    await p2.request("authenticate", { schemeId: "alpha", scheme: "bearer", token: junk });
    await p2.request("authenticate", { schemeId: "beta", scheme: "bearer", token: "" });
    await p2.request("whoami", {});
    assert.ok(stand.logs.length > 5);
    for (const line of stand.logs) {
      for (const token of [a, b, junk]) assert.equal(line.includes(token), false, line);
    }
    for (const m of [...p1.messages, ...p2.messages]) {
      for (const token of [a, b]) assert.equal(JSON.stringify(m).includes(token), false);
    }
  });
});
