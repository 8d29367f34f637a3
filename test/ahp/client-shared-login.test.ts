/**
 * Issue 8 §2.5: two resources on one authorization server cost one device sign-in, not two. One grant names both
 * resources (RFC 8707 §2: several `resource` parameters), its refresh token stays with one vault record, and the
 * other resource's audience-restricted token is minted from that grant (a refresh with `resource=`). The embedded
 * IdP rotates refresh tokens and revokes a grant on reuse, so the test also proves no refresh token is ever used
 * twice: both resources keep renewing without a new sign-in.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connectAhpHost } from "../../src/ahp/client/index.ts";
import { EXAMPLE_ALPHA, EXAMPLE_BETA, startExampleHost } from "../../src/ahp/host/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { autoApprove } from "./fixtures/client-harness.ts";

const GUARD = { timeout: 60_000 };

test(
  "[AHP-client-one-signin-per-as] alpha and beta share an authorization server: one device prompt, two audience-bound tokens, renewals without a new prompt",
  GUARD,
  async () => {
    const idp = await useIdp();
    const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
    after(() => host.close());
    const store = new MemoryCredentialStore();
    const prompts: string[] = [];
    const covered: string[][] = [];
    const approve = autoApprove(prompts);
    const connect = () =>
      connectAhpHost(host.url, {
        store,
        login: {
          onDevicePrompt: (prompt, resource, covers) => {
            covered.push(covers.map((r) => r.resource).sort());
            return approve.onDevicePrompt(prompt, resource, covers);
          },
        },
      });

    const client = await connect();
    try {
      const outcomes = await client.authenticate();
      assert.equal(outcomes.length, 2);
      assert.equal(prompts.length, 1, `one sign-in, not ${prompts.length}`);
      // The person is told the one sign-in is for both.
      assert.deepEqual(covered, [[EXAMPLE_ALPHA, EXAMPLE_BETA]]);
      const who = (await client.request("whoami")) as { resources: { resource: string }[] };
      assert.deepEqual(who.resources.map((r) => r.resource).sort(), [EXAMPLE_ALPHA, EXAMPLE_BETA]);
    } finally {
      await client.close();
    }
    // Each resource has its own vault record, each token audience-bound to its resource (the host verifies `aud`).
    const alpha = (await store.list({ resource: EXAMPLE_ALPHA }))[0];
    const beta = (await store.list({ resource: EXAMPLE_BETA }))[0];
    assert.ok(alpha && beta);

    // Both tokens expire; a fresh connection renews both from the one grant, without a prompt and without
    // revoking the grant (a reused refresh token would).
    for (let round = 0; round < 2; round++) {
      for (const summary of [alpha, beta]) {
        const record = await store.get(summary);
        assert.ok(record);
        await expireAccessToken(store, record);
      }
      const again = await connect();
      try {
        await again.authenticate();
        const who = (await again.request("whoami")) as { resources: { resource: string }[] };
        assert.equal(who.resources.length, 2);
      } finally {
        await again.close();
      }
    }
    assert.equal(prompts.length, 1, "renewals never asked for another sign-in");
    for (const r of await store.list({})) assert.equal(r.status, "active");
  },
);

test(
  "[AHP-client-mint-fallback] a grant not known to cover a resource is never asked to mint for it (the server would retire its refresh token): one sign-in of its own, the other grant untouched",
  GUARD,
  async () => {
    const idp = await useIdp();
    const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
    after(() => host.close());
    const store = new MemoryCredentialStore();
    // An earlier sign-in for alpha alone: its grant does not name beta.
    await loginForTest(idp, store, {
      resource: EXAMPLE_ALPHA,
      scope: "openid profile email offline_access read write",
    });
    const prompts: string[] = [];
    const client = await connectAhpHost(host.url, { store, login: autoApprove(prompts) });
    try {
      await client.authenticate();
      assert.deepEqual(prompts, [EXAMPLE_BETA], "beta needed a sign-in of its own");
      const who = (await client.request("whoami")) as { resources: { resource: string }[] };
      assert.equal(who.resources.length, 2);
    } finally {
      await client.close();
    }
    // Alpha's grant survived the refused mint: it still refreshes.
    const alpha = (await store.list({ resource: EXAMPLE_ALPHA }))[0];
    assert.ok(alpha);
    const record = await store.get(alpha);
    assert.ok(record);
    await expireAccessToken(store, record);
    const again = await connectAhpHost(host.url, { store, login: autoApprove(prompts) });
    try {
      await again.authenticate([EXAMPLE_ALPHA]);
    } finally {
      await again.close();
    }
    assert.equal(prompts.length, 1);
    assert.equal((await store.get(alpha))?.status, "active");
  },
);
