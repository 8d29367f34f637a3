/**
 * The bridge with a shared PostgreSQL vault: two tool instances (each its own TokenRefresher, its own pool), one
 * user, concurrent calls on both at token expiry → one refresh in all (the store's lease), refresh token rotated,
 * every call completes. The vault rows are keyed by user_id and hold no readable token.
 */

import assert from "node:assert/strict";
import { after, test } from "node:test";
import pg from "pg";
import {
  generateVaultKey,
  Keyring,
  PostgresCredentialStore,
  parseVaultKey,
} from "../../src/vault/index.ts";
import { startProtectedMcpServer } from "../mcp/fixtures/protected-mcp-server.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { startBridge, TOOLS } from "./mcp-bridge-fixture.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const PG = await testPostgres();

test("[RAP-mcp-bridge-postgres-single-flight] two bridge instances over one PostgreSQL vault: concurrent calls of one user at expiry make one refresh", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const idp = await useIdp();
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const keyring = new Keyring(parseVaultKey(generateVaultKey()));
  const storeA = new PostgresCredentialStore({ url, keyring });
  const storeB = new PostgresCredentialStore({ url, keyring });
  after(() => Promise.all([storeA.close(), storeB.close()]));
  const a = await startBridge(storeA, { serverUrl: mcp.url, tools: TOOLS });
  const b = await startBridge(storeB, {
    serverUrl: mcp.url,
    tools: TOOLS,
    client: a.bridge.registeredClient,
  });

  const first = await a.call("u-pat", "whoami");
  let link: string | undefined;
  for (let i = 0; i < 400 && !link; i++) {
    link = a.recorded.authorizations.find((x) => x.id === first)?.authUrl;
    if (!link) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(link, "an oauth message");
  await authorize(link);
  assert.equal((await a.runtime.waitForResult("thread", first)).result.text, "hello");

  const key = { subject: "u-pat", issuer: idp.issuer, resource: mcp.url };
  const before = await storeB.get(key);
  assert.ok(before?.tokens.refreshToken, "the other instance sees the user's credential");
  await expireAccessToken(storeA, before);
  idp.resetStats();
  const calls = await Promise.all([
    ...Array.from({ length: 10 }, async () => ({ on: a, id: await a.call("u-pat", "whoami") })),
    ...Array.from({ length: 10 }, async () => ({ on: b, id: await b.call("u-pat", "whoami") })),
  ]);
  const texts = await Promise.all(
    calls.map(async ({ on, id }) => (await on.runtime.waitForResult("thread", id)).result.text),
  );
  assert.deepEqual(
    texts,
    calls.map(() => "hello"),
  );
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(idp.stats.byGrant.authorization_code?.success ?? 0, 0, "no new sign-in");
  const afterRefresh = await storeB.get(key);
  assert.notEqual(
    afterRefresh?.tokens.refreshToken?.reveal(),
    before.tokens.refreshToken?.reveal(),
  );

  // At rest: the row is keyed by user_id, and no token is readable in any column.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = (await client.query("SELECT * FROM vault_credentials")).rows;
    const dump = JSON.stringify(rows);
    assert.ok(dump.includes("u-pat"));
    for (const secret of [
      afterRefresh?.tokens.accessToken?.reveal(),
      afterRefresh?.tokens.refreshToken?.reveal(),
    ]) {
      assert.ok(secret && !dump.includes(secret), "no token in clear at rest");
    }
  } finally {
    await client.end();
  }
});
