/**
 * Single-flight refresh: time for N concurrent callers to get a fresh token once it has expired (one refresh
 * serves them all) against N sequential refreshes (what N callers cost when each refreshes for itself, minus the
 * invalid_grant cascade that concurrent unsynchronised refreshes cause). Same run, same embedded authorization
 * server, same SQLite vault. Medians of several rounds.
 *
 * Run: node_modules/.bin/node bench/refresh.bench.ts
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startIdp } from "../src/idp/index.ts";
import { TokenRefresher } from "../src/oauth/index.ts";
import { openVault } from "../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../test/support/credentials.ts";

const ROUNDS = 5;
const SIZES = [10, 100, 1000];

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

const dir = mkdtempSync(join(tmpdir(), "agentauth-refresh-bench-"));
const idp = await startIdp({ autoApproveAs: "alice" });
const store = openVault({ home: dir, env: {} });
try {
  let record = await loginForTest(idp, store, { resource: TEST_RESOURCE });
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const refresher = new TokenRefresher({ store });
  const results: {
    n: number;
    concurrentMs: number;
    sequentialMs: number;
    ratio: number;
    refreshesConcurrent: number;
  }[] = [];
  for (const n of SIZES) {
    const concurrent: number[] = [];
    const sequential: number[] = [];
    let refreshesConcurrent = 0;
    for (let round = 0; round < ROUNDS; round++) {
      record = (await store.get(key)) ?? record;
      await expireAccessToken(store, record);
      idp.resetStats();
      let start = performance.now();
      await Promise.all(Array.from({ length: n }, () => refresher.getAccessToken(key)));
      concurrent.push(performance.now() - start);
      refreshesConcurrent = Math.max(
        refreshesConcurrent,
        idp.stats.byGrant.refresh_token?.success ?? 0,
      );

      start = performance.now();
      for (let i = 0; i < n; i++) await refresher.forceRefresh(key);
      sequential.push(performance.now() - start);
    }
    const c = median(concurrent);
    const s = median(sequential);
    results.push({
      n,
      concurrentMs: round2(c),
      sequentialMs: round2(s),
      ratio: round2(s / c),
      refreshesConcurrent,
    });
  }
  console.log(
    "callers  concurrent single-flight (ms)  sequential refreshes (ms)  sequential/concurrent  refreshes (concurrent)",
  );
  for (const r of results) {
    console.log(
      `${String(r.n).padStart(7)}  ${r.concurrentMs.toFixed(2).padStart(30)}  ${r.sequentialMs.toFixed(2).padStart(25)}  ${r.ratio.toFixed(1).padStart(21)}x  ${String(r.refreshesConcurrent).padStart(22)}`,
    );
  }
  console.log(JSON.stringify({ bench: "refresh", rounds: ROUNDS, unit: "ms (median)", results }));
} finally {
  await store.close();
  await idp.close();
  rmSync(dir, { recursive: true, force: true });
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}
