/**
 * The CredentialStore contract, written once and run against every backend, so the in-memory store used by other
 * suites cannot quietly differ from the SQLite one used in production.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, type TestContext, test } from "node:test";
import { inspect } from "node:util";
import { secret } from "../../src/core/secret.ts";
import { type CredentialStore, credentialId, VaultInputError } from "../../src/vault/index.ts";
import { fakeClock, sampleInput, tokenValues } from "./helpers.ts";

/** Opens a fresh, empty store on the given clock and arranges for it to be closed and cleaned up after `t`. */
export type OpenStore = (
  t: TestContext,
  now: () => number,
) => Promise<CredentialStore> | CredentialStore;

export function credentialStoreContract(backend: string, open: OpenStore): void {
  describe(`CredentialStore contract: ${backend}`, () => {
    test("[VAULT-record-roundtrip] put then get returns every field, tokens included", async (t) => {
      const clock = fakeClock();
      const store = await open(t, clock.now);
      const input = sampleInput();
      const put = await store.put(input);
      const got = await store.get(input);
      assert.ok(got);
      assert.deepEqual(got, put);
      assert.equal(got.clientId, "agentauth-cli");
      assert.equal(got.expiresAt, 1_900_000_000_000);
      assert.deepEqual(got.scopes, ["openid", "tools:read"]);
      assert.deepEqual(got.account, input.account);
      assert.equal(got.status, "active");
      assert.equal(got.tokens.tokenType, "Bearer");
      assert.deepEqual(tokenValues(got), tokenValues(input));
    });

    test("[VAULT-record-roundtrip] optional fields stay absent", async (t) => {
      const store = await open(t, fakeClock().now);
      const input = sampleInput({
        tokens: {},
        expiresAt: undefined,
        account: {},
        scopes: [],
        resource: "",
      });
      await store.put(input);
      const got = (await store.get(input))!;
      assert.equal("expiresAt" in got, false);
      assert.deepEqual(got.tokens, {});
      assert.deepEqual(got.account, {});
      const [summary] = await store.list();
      assert.deepEqual(summary?.has, { accessToken: false, refreshToken: false, idToken: false });
    });

    test("[VAULT-provider-registration] the provider preset and a client secret round-trip; listings show the provider, never the secret", async (t) => {
      const store = await open(t, fakeClock().now);
      const clientSecret = `cs-SECRET-${Math.random().toString(36).slice(2)}`;
      const input = sampleInput({
        provider: {
          name: "github",
          options: { app: "github_app", host: "https://ghe.example.com" },
        },
        account: { label: "alice", login: "alice", avatarUrl: "https://avatars.example.com/u/1" },
      });
      input.tokens = { ...input.tokens, clientSecret: secret(clientSecret) };
      const put = await store.put(input);
      const got = (await store.get(input))!;
      assert.deepEqual(got, put);
      assert.deepEqual(got.provider, input.provider);
      assert.equal(got.tokens.clientSecret?.reveal(), clientSecret);
      assert.deepEqual(got.account, input.account);
      const [summary] = await store.list();
      assert.deepEqual(summary?.provider, input.provider);
      assert.equal(summary?.account.login, "alice");
      assert.equal(JSON.stringify(summary).includes(clientSecret), false);
      assert.equal(inspect(got).includes(clientSecret), false);
      // A later write without a provider clears it: the record is replaced, not merged.
      await store.put(sampleInput());
      assert.equal("provider" in (await store.get(input))!, false);
    });

    test("[VAULT-provider-registration] a malformed provider reference or a plain-string client secret is refused", async (t) => {
      const store = await open(t, fakeClock().now);
      for (const provider of [
        { name: "" },
        { name: "x", options: { host: 1 } },
        { name: "x", extra: 1 },
      ]) {
        await assert.rejects(
          store.put(sampleInput({ provider: provider as never })),
          VaultInputError,
        );
      }
      const input = sampleInput();
      input.tokens = { ...input.tokens, clientSecret: "plain" as never };
      await assert.rejects(store.put(input), VaultInputError);
    });

    test("[VAULT-record-roundtrip] a fractional expiry comes back exactly", async (t) => {
      const store = await open(t, fakeClock().now);
      const input = sampleInput({ expiresAt: 1_900_000_000_000.25 });
      await store.put(input);
      assert.equal((await store.get(input))?.expiresAt, 1_900_000_000_000.25);
      assert.equal((await store.list())[0]?.expiresAt, 1_900_000_000_000.25);
    });

    test("[VAULT-key-tuple] subject, issuer and resource each select a different record", async (t) => {
      const store = await open(t, fakeClock().now);
      const base = sampleInput();
      const variants = [
        base,
        sampleInput({ subject: "bob" }),
        sampleInput({ issuer: "https://other-as.example.com" }),
        sampleInput({ resource: "" }),
      ];
      for (const v of variants) await store.put(v);
      assert.equal((await store.list()).length, 4);
      for (const v of variants)
        assert.deepEqual(tokenValues((await store.get(v))!), tokenValues(v));
      assert.equal(
        await store.get({ subject: "carol", issuer: base.issuer, resource: base.resource }),
        undefined,
      );
    });

    test("[VAULT-record-id] ids are short, stable, derived from the key, and found by getById", async (t) => {
      const store = await open(t, fakeClock().now);
      const a = await store.put(sampleInput());
      const b = await store.put(sampleInput({ subject: "bob" }));
      const expected = createHash("sha256")
        .update(JSON.stringify([a.subject, a.issuer, a.resource]))
        .digest("base64url")
        .slice(0, 12);
      assert.equal(a.id, expected);
      assert.equal(credentialId(a), expected);
      assert.match(a.id, /^[A-Za-z0-9_-]{12}$/);
      assert.notEqual(a.id, b.id);
      assert.equal((await store.put(sampleInput())).id, a.id, "rewriting keeps the id");
      assert.equal((await store.getById(b.id))?.subject, "bob");
      assert.equal(await store.getById("nonexistent0"), undefined);
    });

    test("[VAULT-versioning] put bumps the version and keeps createdAt", async (t) => {
      const clock = fakeClock();
      const store = await open(t, clock.now);
      const first = await store.put(sampleInput());
      clock.advance(1000);
      const second = await store.put(sampleInput());
      assert.equal(first.version, 1);
      assert.equal(second.version, 2);
      assert.equal(second.createdAt, first.createdAt);
      assert.equal(second.updatedAt, first.updatedAt + 1000);
      assert.equal((await store.get(second))?.version, 2);
    });

    test("[VAULT-cas] compareAndSwap writes only over the expected version", async (t) => {
      const store = await open(t, fakeClock().now);
      const v1 = await store.put(sampleInput());
      const next = sampleInput({ status: "login_required" });
      const v2 = await store.compareAndSwap(v1.version, next);
      assert.equal(v2?.version, 2);
      assert.equal((await store.get(next))?.status, "login_required");
      const stale = sampleInput({ clientId: "stale-writer" });
      assert.equal(await store.compareAndSwap(v1.version, stale), undefined);
      const after = (await store.get(next))!;
      assert.equal(after.clientId, "agentauth-cli", "a failed swap changes nothing");
      assert.equal(after.version, 2);
      assert.equal(await store.compareAndSwap(0, sampleInput({ subject: "nobody" })), undefined);
      assert.equal(
        await store.get({ ...next, subject: "nobody" }),
        undefined,
        "a swap never creates a record",
      );
    });

    test("[VAULT-cas] of concurrent swaps from one version, exactly one wins", async (t) => {
      const store = await open(t, fakeClock().now);
      const v1 = await store.put(sampleInput());
      const attempts = Array.from({ length: 8 }, (_, i) =>
        sampleInput({ clientId: `writer-${i}` }),
      );
      const results = await Promise.all(attempts.map((a) => store.compareAndSwap(v1.version, a)));
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      assert.equal((await store.get(v1))?.clientId, winners[0]?.clientId);
    });

    test("[VAULT-delete] delete removes the record and reports whether it existed", async (t) => {
      const store = await open(t, fakeClock().now);
      const record = await store.put(sampleInput());
      await store.put(sampleInput({ subject: "bob" }));
      assert.equal(await store.delete(record), true);
      assert.equal(await store.delete(record), false);
      assert.equal(await store.get(record), undefined);
      assert.equal(await store.getById(record.id), undefined);
      assert.deepEqual(
        (await store.list()).map((s) => s.subject),
        ["bob"],
      );
    });

    test("[VAULT-list-no-secrets] list returns summaries with `has` flags and no token", async (t) => {
      const store = await open(t, fakeClock().now);
      const alice = sampleInput();
      const bob = sampleInput({ subject: "bob", tokens: { accessToken: secret("bob-at-SECRET") } });
      await store.put(bob);
      await store.put(alice);
      const all = await store.list();
      assert.deepEqual(
        all.map((s) => s.subject),
        ["alice", "bob"],
        "ordered by key",
      );
      for (const summary of all) assert.equal("tokens" in summary, false);
      assert.deepEqual(all[0]?.has, { accessToken: true, refreshToken: true, idToken: true });
      assert.deepEqual(all[1]?.has, { accessToken: true, refreshToken: false, idToken: false });
      assert.equal(all[0]?.account.email, "alice@example.com");
      const printed = JSON.stringify(all) + inspect(all, { depth: 10 });
      for (const value of [...tokenValues(alice), "bob-at-SECRET"])
        assert.equal(printed.includes(value), false);
      assert.deepEqual(
        (await store.list({ subject: "bob" })).map((s) => s.subject),
        ["bob"],
      );
      assert.equal(
        (await store.list({ issuer: alice.issuer, resource: alice.resource })).length,
        2,
      );
      assert.equal((await store.list({ resource: "https://elsewhere" })).length, 0);
    });

    test("[VAULT-secret-redaction] a record prints no token through JSON.stringify or util.inspect", async (t) => {
      const store = await open(t, fakeClock().now);
      const input = sampleInput();
      for (const record of [await store.put(input), (await store.get(input))!]) {
        const printed = [
          JSON.stringify(record),
          inspect(record, { depth: 10 }),
          String(record.tokens.accessToken),
        ];
        for (const text of printed) {
          for (const value of tokenValues(input)) assert.equal(text.includes(value), false, text);
          assert.match(text, /\[redacted\]/);
        }
      }
    });

    test("[VAULT-copy-isolation] mutating a returned record does not change the store", async (t) => {
      const store = await open(t, fakeClock().now);
      const input = sampleInput();
      const put = await store.put(input);
      put.scopes.push("admin");
      put.account.email = "mallory@example.com";
      input.scopes.push("admin");
      const got = (await store.get(input))!;
      got.scopes.push("root");
      assert.deepEqual((await store.get(input))?.scopes, ["openid", "tools:read"]);
      assert.equal((await store.get(input))?.account.email, "alice@example.com");
    });

    test("[VAULT-input-validation] malformed input is refused with vault_input_invalid", async (t) => {
      const store = await open(t, fakeClock().now);
      const bad = [
        sampleInput({ subject: "" }),
        sampleInput({ issuer: "" }),
        sampleInput({ status: "expired" as never }),
        sampleInput({ scopes: [42] as never }),
        sampleInput({ tokens: { accessToken: "plain-string-SECRET" as never } }),
        sampleInput({ expiresAt: Number.NaN }),
      ];
      for (const input of bad) {
        await assert.rejects(
          store.put(input),
          (e) => e instanceof VaultInputError && e.code === "vault_input_invalid",
        );
        await assert.rejects(store.compareAndSwap(1, input), VaultInputError);
      }
      await assert.rejects(store.acquireLease("l", "me", 0), VaultInputError);
      await assert.rejects(store.acquireLease("", "me", 10), VaultInputError);
      for (const err of await Promise.allSettled(bad.map((i) => store.put(i)))) {
        assert.equal(JSON.stringify(err).includes("plain-string-SECRET"), false);
      }
      assert.equal((await store.list()).length, 0);
    });

    test("[VAULT-lease-exclusive] one owner at a time; re-acquiring extends; release frees", async (t) => {
      const clock = fakeClock();
      const store = await open(t, clock.now);
      assert.equal(await store.acquireLease("refresh:x", "a", 100), true);
      assert.equal(await store.acquireLease("refresh:x", "b", 100), false);
      assert.equal(await store.acquireLease("refresh:y", "b", 100), true, "leases are per name");
      clock.advance(80);
      assert.equal(
        await store.acquireLease("refresh:x", "a", 100),
        true,
        "own lease: extended to t=180",
      );
      clock.advance(70); // t=150: past the first expiry, inside the extension
      assert.equal(await store.acquireLease("refresh:x", "b", 100), false);
      await store.releaseLease("refresh:x", "b"); // not b's: no effect
      assert.equal(await store.acquireLease("refresh:x", "c", 100), false);
      await store.releaseLease("refresh:x", "a");
      assert.equal(await store.acquireLease("refresh:x", "b", 100), true);
    });

    test("[VAULT-lease-expiry] an expired lease can be taken over", async (t) => {
      const clock = fakeClock();
      const store = await open(t, clock.now);
      assert.equal(await store.acquireLease("refresh", "crashed", 1000), true);
      clock.advance(999);
      assert.equal(await store.acquireLease("refresh", "b", 1000), false);
      clock.advance(1);
      assert.equal(await store.acquireLease("refresh", "b", 1000), true);
      assert.equal(
        await store.acquireLease("refresh", "crashed", 1000),
        false,
        "the old owner lost it",
      );
    });
  });
}
