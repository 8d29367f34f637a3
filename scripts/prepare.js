// npm `prepare`: builds dist/ when TypeScript is installed (a development checkout, `npm pack`, a git URL
// install, which installs devDependencies first). `npm i <path to a checkout>` runs it without devDependencies:
// then there is nothing to build with, and the CLI runs from src/ (see bin/agentauth.js). Never fails the install
// for a missing compiler; does fail it for a broken build.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve("typescript/bin/tsc");
} catch {
  process.stderr.write(
    "agentauth prepare: TypeScript is not installed here, so dist/ was not built; the CLI runs from src/ " +
      "(Node.js >= 22.18). Run 'npm install && npm run build' in the checkout for the library's compiled exports.\n",
  );
  process.exit(0);
}
const result = spawnSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
