import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  loadSqlite,
  NodeVersionError,
  nodeSupported,
  REQUIRED_NODE,
} from "../../src/core/node-version.ts";
import { REPO_ROOT } from "../support/cli.ts";

test("[PKG-node-version] versions are compared numerically, not as text", () => {
  assert.equal(nodeSupported("22.18.0"), true);
  assert.equal(nodeSupported("v24.1.0"), true);
  assert.equal(nodeSupported("22.100.0"), true);
  assert.equal(nodeSupported("23.0.0"), true);
  assert.equal(nodeSupported("22.17.9"), false);
  assert.equal(nodeSupported("22.9.0"), false);
  assert.equal(nodeSupported("20.20.2"), false);
  assert.equal(nodeSupported("garbage"), false);
  assert.equal(nodeSupported(""), false);
});

test("[PKG-node-version] package.json engines, bin/agentauth.js and the core guard name the same Node", () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
  assert.equal(pkg.engines.node, `>=${REQUIRED_NODE.replace(/\.0$/, "")}`);
  const bin = readFileSync(join(REPO_ROOT, "bin", "agentauth.js"), "utf8");
  assert.ok(
    bin.includes(`const REQUIRED = [${REQUIRED_NODE.split(".").join(", ")}];`),
    "bin's REQUIRED",
  );
});

test("[PKG-node-version] on this Node, node:sqlite loads; the error names the version and what to do", () => {
  assert.equal(typeof loadSqlite().DatabaseSync, "function");
  const error = new NodeVersionError("The vault", "20.20.2");
  assert.equal(error.code, "node_too_old");
  assert.equal(
    error.message,
    "The vault needs Node.js 22.18.0 or newer (node:sqlite), and this is Node.js 20.20.2; install a current Node.js (https://nodejs.org) and run it again.",
  );
});
