/**
 * Review #8: signing out of Slack with an expired rotating token refreshes it through the engine (the rotated
 * tokens stored by compare-and-swap) before auth.revoke, so when the revocation then fails the credential keeps
 * the new, live refresh token instead of the one the refresh just retired.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { login, logout } from "../../src/oauth/index.ts";
import { resolveProvider, slack } from "../../src/providers/index.ts";
import {
  type CredentialInput,
  type CredentialRecord,
  MemoryCredentialStore,
} from "../../src/vault/index.ts";
import { startSlackSimulator } from "../sims/slack.ts";

/** Runs `afterCommit` once, right after the first compare-and-swap is stored. */
class CommitHookStore extends MemoryCredentialStore {
  afterCommit?: () => Promise<void>;
  override async compareAndSwap(
    expectedVersion: number,
    input: CredentialInput,
  ): Promise<CredentialRecord | undefined> {
    const stored = await super.compareAndSwap(expectedVersion, input);
    const hook = this.afterCommit;
    this.afterCommit = undefined;
    if (stored && hook) await hook();
    return stored;
  }
}

test("[REVIEW-8-slack-revoke-refresh-stored] Slack saying token_expired at sign-out: the refresh is stored before auth.revoke, so a failed revocation keeps a live refresh token", async () => {
  const sim = await startSlackSimulator({ tokenRotation: true });
  let closed = false;
  after(() => (closed ? undefined : sim.close()));
  const store = new CommitHookStore();
  const provider = slack({
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    origins: { "https://slack.com": sim.url },
  });
  const record = await login({
    provider,
    flow: "browser",
    store,
    openUrl: async (url) => {
      const consent = await fetch(url, { redirect: "manual" });
      const location = consent.headers.get("location");
      assert.ok(location, `the simulator redirected (HTTP ${consent.status})`);
      await (await fetch(location)).text();
    },
  });
  // Slack's clock says the 12-hour token has expired; ours does not know yet.
  sim.advanceTime(43_200 + 60);
  let rotated: string | undefined;
  store.afterCommit = async () => {
    rotated = (await store.get(record))?.tokens.refreshToken?.reveal();
    // Slack becomes unreachable after the refresh and before auth.revoke.
    closed = true;
    await sim.close();
  };
  const result = await logout({ store, key: record, providers: resolveProvider });
  assert.equal(result.revoked, false);
  assert.equal(result.deleted, false);
  assert.ok(result.error);
  const kept = await store.get(record);
  assert.ok(rotated, "the refresh was stored through the engine before the revocation");
  assert.equal(kept?.tokens.refreshToken?.reveal(), rotated);
  assert.notEqual(kept?.tokens.refreshToken?.reveal(), record.tokens.refreshToken?.reveal());
  assert.equal(kept?.status, "active");
});
