/** Expiry notices: the client renews (forced refresh, or a new login) and never re-sends the challenged token. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { connectAhpHost, type RenewalEvent } from "../../src/ahp/client/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { autoApprove, GUARD } from "./fixtures/client-harness.ts";
import { type ScriptedResource, scriptedHost } from "./fixtures/scripted-host.ts";

async function until<T>(probe: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const [dialect, seedState] of [
  ["official", undefined],
  ["seed", "expired"],
  ["seed", "revoked"],
] as const) {
  test(
    `[AHP-client-expired-renews] ${dialect}${seedState ? ` (${seedState})` : ""}: forced refresh, new token authenticated, old one never re-sent`,
    GUARD,
    async () => {
      const idp = await useIdp();
      const one: ScriptedResource = {
        resource: "https://api.one.example",
        name: "One",
        authorizationServers: [idp.issuer],
        scopes: ["read"],
        schemeId: "one",
      };
      const host = await scriptedHost({
        resources: [one],
        dialects: [dialect],
        seedSchemeResource: true,
      });
      const store = new MemoryCredentialStore();
      const renewals: RenewalEvent[] = [];
      const client = await connectAhpHost(host.url, {
        store,
        login: autoApprove(),
        onRenewal: (e) => renewals.push(e),
      });
      try {
        await client.authenticate();
        const first = host.authenticateFrames()[0]?.message.params?.token;
        assert.equal(typeof first, "string");
        const refreshesBefore = idp.stats.byGrant.refresh_token?.success ?? 0;
        const sentBefore = host.authenticateFrames().length;
        host.expire(dialect === "official" ? one.resource : "one", seedState);
        const renewal = await until(() => renewals[0]);
        const id = dialect === "official" ? one.resource : "one";
        assert.equal(renewal.resource, id);
        assert.equal(renewal.trigger, "expired");
        const after = host.authenticateFrames().slice(sentBefore);
        assert.equal(after.length, 1);
        assert.notEqual(
          after[0]?.message.params?.token,
          first,
          "the challenged token is never replayed",
        );
        assert.equal(
          idp.stats.byGrant.refresh_token?.success,
          refreshesBefore + 1,
          "renewed by a refresh, not a new login",
        );
        assert.deepEqual(await client.request("whoami"), { authenticated: [id] });
        assert.equal(host.frames.filter((f) => f.message.params?.token === first).length, 1);
      } finally {
        await client.close();
      }
    },
  );
}

test(
  "[AHP-client-renew-before-expiry] renewBeforeExpiry with 3 s tokens: renewed before expiry, expiresIn fresh",
  GUARD,
  async () => {
    const idp = await useIdp({ accessTokenTtlSeconds: 3 });
    const one: ScriptedResource = {
      resource: "https://api.one.example",
      name: "One",
      authorizationServers: [idp.issuer],
      schemeId: "one",
    };
    const host = await scriptedHost({ resources: [one] });
    const renewals: RenewalEvent[] = [];
    const client = await connectAhpHost(host.url, {
      store: new MemoryCredentialStore(),
      login: autoApprove(),
      renewBeforeExpiry: true,
      refreshSkewMs: 500,
      onRenewal: (e) => renewals.push(e),
    });
    try {
      await client.authenticate();
      await until(() => (renewals.length >= 2 ? true : undefined), 15_000);
      assert.deepEqual(
        renewals.map((r) => r.trigger),
        ["scheduled", "scheduled"],
      );
      const sent = host.authenticateFrames();
      const tokens = new Set(sent.map((f) => f.message.params?.token));
      assert.equal(tokens.size, sent.length, "each renewal sends a new token");
      for (const f of sent) {
        const expiresIn = f.message.params?.expiresIn as number;
        assert.ok(expiresIn >= 1 && expiresIn <= 3, `expiresIn ${expiresIn}`);
      }
    } finally {
      await client.close();
    }
  },
);
