/**
 * Many `agentauth mcp proxy` processes on one server (issue 19): ten terminals and three editors share one sign-in
 * and one refresh. Eight real proxy processes, each started by the official SDK's stdio client, over one vault,
 * against a real MCP server and the strict embedded server with refresh-token rotation (a second use of a refresh
 * token revokes the grant). No timed assertions: the access token is expired in the vault, not by waiting.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { expireAccessToken } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { holdNextRefresh } from "../support/token-hold.ts";
import { connectThroughProxy, FETCH_BROWSER, type ProxyClient } from "./fixtures/proxy-client.ts";
import { startStatefulMcpServer } from "./fixtures/stateful-mcp-server.ts";

const idp = await useIdp();
const PROXIES = 8;

/** One signed-in proxy first (its background sign-in fills the vault), then the others over the same vault. */
async function fleet(url: string, home: string): Promise<ProxyClient[]> {
  const env = { AGENTAUTH_HOME: home, BROWSER: FETCH_BROWSER };
  const first = await connectThroughProxy(url, env);
  const rest = await Promise.all(
    Array.from({ length: PROXIES - 1 }, () => connectThroughProxy(url, env)),
  );
  return [first, ...rest];
}

async function expireStored(home: string) {
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  try {
    const [summary] = (await vault.list()).filter((c) => c.resource.startsWith("http"));
    const record = summary && (await vault.getById(summary.id));
    assert.ok(record, "a stored sign-in");
    await expireAccessToken(vault, record);
    return record;
  } finally {
    await vault.close();
  }
}

test("[MCP-proxy-fleet-one-refresh] 8 proxy processes at expiry make one refresh, and every call succeeds", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const proxies = await fleet(mcp.url, home);
  await expireStored(home);
  idp.resetStats();
  const results = await Promise.all(
    proxies.flatMap(({ client }) =>
      Array.from({ length: 5 }, () => client.callTool({ name: "whoami", arguments: {} })),
    ),
  );
  assert.equal(results.length, PROXIES * 5);
  assert.ok(results.every((r) => (r.content as { text: string }[])[0]?.text === "hello alice"));
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
  assert.equal(idp.stats.byGrant.authorization_code, undefined, "nobody signed in again");
});

test("[MCP-proxy-fleet-kill-holder] kill -9 of the proxy holding the refresh lease mid-refresh leaves the others working", {
  timeout: 120_000,
}, async (t) => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const proxies = await fleet(mcp.url, home);
  const record = await expireStored(home);
  const hold = holdNextRefresh(idp, "before-grant");
  t.after(() => hold.disarm());
  idp.resetStats();
  // The first call's refresh parks at the server: its proxy holds the lease.
  const [victim, ...survivors] = proxies as [ProxyClient, ...ProxyClient[]];
  const doomed = victim.client.callTool({ name: "whoami", arguments: {} }).catch((e: unknown) => e);
  await hold.held;
  const vault = openVault({ env: { AGENTAUTH_HOME: home } });
  t.after(() => vault.close());
  const lease = await vault.getLease?.(
    `refresh:${JSON.stringify([record.subject, record.issuer, record.resource])}`,
  );
  const pid = Number(lease?.owner.split("/")[3]);
  assert.equal(pid, victim.transport.pid, "the held refresh is the victim's");
  process.kill(pid, "SIGKILL");
  await doomed;
  const results = await Promise.all(
    survivors.map(({ client }) => client.callTool({ name: "whoami", arguments: {} })),
  );
  assert.ok(results.every((r) => (r.content as { text: string }[])[0]?.text === "hello alice"));
  assert.deepEqual(idp.stats.byGrant.refresh_token, { success: 1, error: 0 });
});
