/**
 * The command printed for a person to run agentauth again (src/core/self-command.ts `shellCommandFor`), for each way
 * it can be installed: npm and pnpm projects, npx's and pnpm dlx's caches, global installs, `npm link`, a checkout.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { type Installation, shellCommand, shellCommandFor } from "../../src/core/self-command.ts";

const NPM_UA = "npm/10.9.2 node/v24.4.0 linux x64 workspaces/false";
const PNPM_UA = "pnpm/9.15.0 npm/? node/v24.4.0 linux x64";

const CASES: Array<[string, Installation, string]> = [
  [
    "an npm project",
    {
      packageRoot: "/home/ann/app/node_modules/agentauth",
      invokedAs: "/home/ann/app/node_modules/.bin/agentauth",
      binBeside: true,
      userAgent: NPM_UA,
    },
    "npx agentauth",
  ],
  [
    "npx's cache (npx -y agentauth)",
    {
      packageRoot: "/home/ann/.npm/_npx/1f2e3d/node_modules/agentauth",
      invokedAs: "/home/ann/.npm/_npx/1f2e3d/node_modules/.bin/agentauth",
      binBeside: true,
      userAgent: NPM_UA,
    },
    "npx agentauth",
  ],
  [
    "npm install -g",
    {
      packageRoot: "/usr/local/lib/node_modules/agentauth",
      invokedAs: "/usr/local/bin/agentauth",
      binBeside: false,
    },
    "agentauth",
  ],
  [
    "a pnpm project (pnpm exec agentauth)",
    {
      packageRoot: "/home/ann/app/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth",
      invokedAs:
        "/home/ann/app/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth/bin/agentauth.js",
      binBeside: false,
      userAgent: PNPM_UA,
    },
    "pnpm exec agentauth",
  ],
  [
    "a pnpm project, the bin run without pnpm (no user agent)",
    {
      packageRoot: "/home/ann/app/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth",
      invokedAs: "/home/ann/app/node_modules/agentauth/bin/agentauth.js",
      binBeside: false,
    },
    "pnpm exec agentauth",
  ],
  [
    "a pnpm project with node-linker=hoisted",
    {
      packageRoot: "/home/ann/app/node_modules/agentauth",
      invokedAs: "/home/ann/app/node_modules/agentauth/bin/agentauth.js",
      binBeside: true,
      userAgent: PNPM_UA,
    },
    "pnpm exec agentauth",
  ],
  [
    "pnpm dlx agentauth",
    {
      packageRoot:
        "/home/ann/.cache/pnpm/dlx/x4c2/193a-7b1/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth",
      invokedAs:
        "/home/ann/.cache/pnpm/dlx/x4c2/193a-7b1/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth/bin/agentauth.js",
      binBeside: false,
      userAgent: PNPM_UA,
    },
    "pnpm dlx agentauth",
  ],
  [
    "pnpm add -g",
    {
      packageRoot:
        "/home/ann/.local/share/pnpm/global/5/node_modules/.pnpm/agentauth@1.2.0/node_modules/agentauth",
      invokedAs: "/home/ann/.local/share/pnpm/global/5/node_modules/agentauth/bin/agentauth.js",
      binBeside: false,
    },
    "agentauth",
  ],
  [
    "npm link in the checkout: the global bin points at it",
    {
      packageRoot: "/home/ann/src/agentauth",
      invokedAs: "/usr/local/bin/agentauth",
      binBeside: false,
    },
    "agentauth",
  ],
  [
    "npm link agentauth in a project: the project's bin points at the checkout",
    {
      packageRoot: "/home/ann/src/agentauth",
      invokedAs: "/home/ann/app/node_modules/.bin/agentauth",
      binBeside: false,
      userAgent: NPM_UA,
    },
    "npx agentauth",
  ],
  [
    "pnpm link in a project",
    {
      packageRoot: "/home/ann/src/agentauth",
      invokedAs: "/home/ann/app/node_modules/.bin/agentauth",
      binBeside: false,
      userAgent: PNPM_UA,
    },
    "pnpm exec agentauth",
  ],
  [
    "a checkout run with npm run agentauth",
    {
      packageRoot: "/home/ann/src/agentauth",
      invokedAs: "/home/ann/src/agentauth/src/cli/main.ts",
      binBeside: false,
      userAgent: NPM_UA,
    },
    "npm run agentauth --",
  ],
  [
    "a checkout's bin run by path",
    {
      packageRoot: "/home/ann/src/agentauth",
      invokedAs: "/home/ann/src/agentauth/bin/agentauth.js",
      binBeside: false,
    },
    "npm run agentauth --",
  ],
  [
    "Windows: npm install -g",
    {
      packageRoot: "C:\\Users\\ann\\AppData\\Roaming\\npm\\node_modules\\agentauth",
      invokedAs:
        "C:\\Users\\ann\\AppData\\Roaming\\npm\\node_modules\\agentauth\\bin\\agentauth.js",
      binBeside: false,
    },
    "agentauth",
  ],
];

for (const [how, where, expected] of CASES) {
  test(`[CLI-self-command] ${how}: ${expected}`, () => {
    assert.equal(shellCommandFor(where), expected);
  });
}

test("[CLI-self-command] this checkout, run by the test runner: npm run agentauth --", () => {
  assert.equal(shellCommand(), "npm run agentauth --");
});
