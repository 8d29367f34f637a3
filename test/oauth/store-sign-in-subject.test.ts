/**
 * Review of issue 20 §1.6: `storeSignIn` refused a reserved subject only when one was passed in. Without one it
 * filed the credential under the subject the provider sent (its account API's, else the ID token's `sub`), which
 * nothing checked: a provider that named the account `agentauth:client-registration` had the tokens stored as
 * agentauth's own client-registration record. The rule now holds for the subject the credential is filed under,
 * whoever named it.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret, silentLogger } from "../../src/core/index.ts";
import {
  type AuthorizationServer,
  type Provider,
  REGISTRATION_SUBJECT,
  storeSignIn,
  type TokenSet,
} from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

const as = { issuer: "https://as.example" } as AuthorizationServer;
const client = { clientId: "app" };

function tokens(subject?: string): TokenSet {
  return {
    accessToken: new Secret("access-token-0123456789"),
    tokenType: "bearer",
    scopes: [],
    subject,
    account: {},
    extra: {},
  };
}

/** A provider whose account API names the account `subject`. */
function providerNaming(subject: string): Provider {
  return {
    name: "generic",
    displayName: "Example",
    issuer: as.issuer,
    ref: { name: "generic", options: { issuer: as.issuer } },
    client,
    flows: ["authorization_code"],
    refresh: {},
    revocation: { kind: "none" },
    server: async () => as,
    account: async () => ({ subject, login: subject }),
  } as unknown as Provider;
}

test("[OAUTH-sign-in-reserved-subject] storeSignIn files nothing under agentauth's namespace when the provider named the account there (ID token sub, or its account API), and says to name another subject; a given ordinary subject still wins", async () => {
  for (const reserved of [REGISTRATION_SUBJECT, "agentauth:client:https://mcp.example/"]) {
    const store = new MemoryCredentialStore();
    const cases = [
      { what: "ID token sub", tokens: tokens(reserved), provider: undefined },
      { what: "account API", tokens: tokens(), provider: providerNaming(reserved) },
      {
        what: "account API over an ordinary sub",
        tokens: tokens("bob"),
        provider: providerNaming(reserved),
      },
    ];
    for (const c of cases) {
      await assert.rejects(
        storeSignIn({
          tokens: c.tokens,
          as,
          client,
          provider: c.provider,
          store,
          log: silentLogger,
        }),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, "invalid_subject", `${reserved} from the ${c.what}`);
          assert.match(error.message, /agentauth's own/);
          assert.match(error.message, /nothing was stored/);
          return true;
        },
      );
    }
    assert.deepEqual(await store.list(), [], `${reserved}: nothing stored`);

    // The person named the subject: the provider's account id does not decide where it goes.
    const record = await storeSignIn({
      tokens: tokens(reserved),
      as,
      client,
      subject: "alice",
      store,
      log: silentLogger,
    });
    assert.equal(record.subject, "alice");
  }
});
