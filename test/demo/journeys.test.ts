import assert from "node:assert/strict";
import { test } from "node:test";
import { startExampleHost } from "../../src/ahp/host/index.ts";
import { acpLogin, acpLogout, acpSession, acpStatus } from "../../src/demo/journeys/acp.ts";
import { connectAhpJourney } from "../../src/demo/journeys/ahp.ts";
import { openVault } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

test("[DEMO-journey-acp] status → login (device flow, auto-approved) → session → logout against the example agent process", {
  timeout: 120_000,
}, async () => {
  const idp = await useIdp();
  const dataDir = tempDir("agentauth-demo-acp-");
  const ctx = { issuer: idp.issuer, dataDir };
  const before = await acpStatus(ctx);
  assert.equal(before.signedIn, false);
  assert.ok(before.methods.some((m) => m.id === "oauth"));
  await assert.rejects(acpSession(ctx), "signed out, a session is refused (no login started)");
  const prompts: unknown[] = [];
  const login = await acpLogin(ctx, { autoApprove: true, onPrompt: (p) => prompts.push(p) });
  assert.equal(login.outcome, "signed_in");
  assert.equal(login.signedIn, true);
  assert.equal(prompts.length, 1);
  const session = await acpSession(ctx);
  assert.ok(session.sessionId);
  assert.equal(session.stopReason, "end_turn");
  const after = await acpLogout(ctx);
  assert.equal(after.signedIn, false);
  assert.equal((await acpStatus(ctx)).signedIn, false);
});

test("[DEMO-journey-ahp-renewal] the demo's AHP client authenticates the example host's resources with short demo-IdP tokens, then renews them before they expire", {
  timeout: 120_000,
}, async () => {
  // Short resource tokens (the demo sets ~6 s) so expiry and renewal happen within the test.
  const idp = await useIdp({ accessTokenTtlSeconds: 6 });
  const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
  const home = tempDir("agentauth-demo-ahp-");
  const store = openVault({ home, env: {} });
  const prompts: unknown[] = [];
  const journey = await connectAhpJourney(
    { ahpUrl: host.url, store },
    { autoApprove: true, onPrompt: (p) => prompts.push(p) },
  );
  try {
    const before = await journey.resources();
    assert.deepEqual(before.map((r) => r.resource).sort(), [
      "https://alpha.example.test/",
      "https://beta.example.test/",
    ]);
    assert.ok(before.every((r) => !r.authenticated && r.subject === null));
    const outcomes = await journey.authenticate();
    assert.equal(outcomes.length, 2);
    assert.equal(prompts.length, 1, "one device sign-in covers both resources on one server");
    const after = await journey.resources();
    assert.ok(after.every((r) => r.authenticated && r.subject !== null && r.expiresAt !== null));
    const alpha = after.find((r) => r.resource === "https://alpha.example.test/");
    const expiresAt = alpha?.expiresAt ?? 0;
    const renewal = await journey.nextRenewal({ resource: "https://alpha.example.test/" });
    assert.equal(renewal.resource, "https://alpha.example.test/");
    const renewed = (await journey.resources()).find((r) => r.resource === renewal.resource);
    assert.ok(renewed && renewed.renewals >= 1 && renewed.lastRenewalAt !== null);
    assert.ok((renewed.expiresAt ?? 0) > expiresAt, "the renewed token expires later");
    assert.deepEqual(await journey.client.request("whoami", {}).then((r) => typeof r), "object");
    assert.equal(JSON.stringify(after).includes("eyJ"), false, "no token in the view");
  } finally {
    await journey.close();
    await host.close();
    await store.close();
  }
});
