/**
 * `ahp login --stay` ended by Ctrl-C: the CLI closes the vault while a background renewal may still be running.
 * Under CPU load [AHP-e2e-cli] caught beta's renewal (a token minted from alpha's grant) in the middle of its mint
 * when the vault closed: the vault error was taken for "the grant does not cover beta" and a second device sign-in
 * was shown to the person. Here the interleaving is forced: the vault closes right after the mint takes its lease.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connectAhpHost, ResourceCredentials } from "../../src/ahp/client/index.ts";
import { EXAMPLE_ALPHA, EXAMPLE_BETA, startExampleHost } from "../../src/ahp/host/index.ts";
import {
  type CredentialStore,
  MemoryCredentialStore,
  VaultIoError,
} from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { autoApprove } from "./fixtures/client-harness.ts";

const GUARD = { timeout: 60_000 };

/** A store that fails every call once closed, as the SQLite vault does ("statement has been finalized"). */
function closableStore(): { store: CredentialStore; closeOnNextLease: () => void } {
  const inner = new MemoryCredentialStore();
  let closed = false;
  let armed = false;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        if (closed) {
          throw new VaultIoError(
            "vault_io",
            "The credential vault failed (statement has been finalized).",
          );
        }
        const result = await value.apply(target, args);
        // The CLI's store.close() lands while the renewal holds the lease, before it reads the grant.
        if (name === "acquireLease" && armed && result) closed = true;
        return result;
      };
    },
  });
  return { store, closeOnNextLease: () => (armed = true) };
}

test(
  "[AHP-stay-no-second-sign-in] a renewal of a minted token that meets a closed vault fails; it never asks the person to sign in again",
  GUARD,
  async () => {
    const idp = await useIdp();
    const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
    after(() => host.close());
    // The host's resources as the client reads them (alpha and beta, one authorization server).
    const probe = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    const resources = probe.resources();
    await probe.close();
    const alpha = resources.find((r) => r.resource === EXAMPLE_ALPHA);
    const beta = resources.find((r) => r.resource === EXAMPLE_BETA);
    assert.ok(alpha && beta);

    const { store, closeOnNextLease } = closableStore();
    const prompts: string[] = [];
    const credentials = new ResourceCredentials({ store, login: autoApprove(prompts) });
    credentials.setSiblings(() => [alpha, beta]);
    await credentials.obtain(alpha);
    const minted = await credentials.obtain(beta);
    assert.equal(prompts.length, 1, "one sign-in covers both");
    assert.equal(
      minted.tokens.refreshToken,
      undefined,
      "beta's token was minted from alpha's grant",
    );

    closeOnNextLease();
    for (const challenged of [false, true]) {
      // scheduled (`--stay`) and expiry-notice renewals alike
      await assert.rejects(credentials.renew(beta, minted, challenged), VaultIoError);
    }
    assert.deepEqual(prompts, [alpha.id], "no second device sign-in");
  },
);
