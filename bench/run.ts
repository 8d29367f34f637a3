/**
 * `npm run bench`: runs every bench/*.bench.ts in its own process, one after another (2-core machines: never in
 * parallel), and prints each one's table. Each bench measures its own baseline in the same run.
 */

import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

const only = process.argv.slice(2);
const benches = readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();
let failed = 0;
for (const file of benches) {
  console.log(`\n== ${file} ==`);
  const result = spawnSync(process.execPath, ["--no-warnings", join(import.meta.dirname, file)], {
    stdio: "inherit",
  });
  if (result.status !== 0) {
    failed++;
    console.log(`${file} failed with exit code ${result.status}`);
  }
}
process.exitCode = failed ? 1 : 0;
