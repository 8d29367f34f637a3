import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { expireAccessToken, loginForTest, TEST_RESOURCE } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const WORKER = join(import.meta.dirname, "fixtures", "refresh-worker.ts");

function runWorker(env: NodeJS.ProcessEnv): Promise<{ digests: string[]; errors: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--no-warnings", WORKER], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`worker exited ${code}: ${err}`));
      else resolve(JSON.parse(out.trim()));
    });
  });
}

test("[REFRESH-single-flight-multiprocess] 4 OS processes × 250 concurrent callers sharing one SQLite vault: one refresh, no invalid_grant", async () => {
  const home = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTAUTH_HOME: home };
  delete env.AGENTAUTH_VAULT_KEY;
  const store = openVault({ env });
  const record = await expireAccessToken(
    store,
    await loginForTest(idp, store, { resource: TEST_RESOURCE }),
  );
  const oldDigest = createHash("sha256")
    .update(record.tokens.accessToken?.reveal() ?? "")
    .digest("hex");
  await store.close();
  idp.resetStats();

  const startAt = String(Date.now() + 2000);
  const workerEnv = {
    ...env,
    SUBJECT: record.subject,
    ISSUER: record.issuer,
    RESOURCE: record.resource,
    COUNT: "250",
    START_AT: startAt,
  };
  const results = await Promise.all([1, 2, 3, 4].map(() => runWorker(workerEnv)));

  assert.deepEqual(
    idp.stats.byGrant.refresh_token,
    { success: 1, error: 0 },
    "exactly one refresh reached the token endpoint",
  );
  assert.deepEqual(idp.stats.errors, []);
  for (const r of results) assert.deepEqual(r.errors, []);
  const digests = new Set(results.flatMap((r) => r.digests));
  assert.equal(digests.size, 1, "all 1,000 callers in all processes got the same new token");
  assert.ok(!digests.has(oldDigest));
});
