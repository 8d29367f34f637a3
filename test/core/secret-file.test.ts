import assert from "node:assert/strict";
import {
  chmodSync,
  lstatSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { writeSecretFileSync } from "../../src/core/secret-file.ts";
import { tempDir } from "../support/tmp.ts";

test("[CORE-secret-file-mode] every write is owner-only: a new file, a file left 0644 or 0666, and a symlink at the path (replaced, not followed); no temporary file is left", () => {
  const dir = tempDir();
  const fresh = join(dir, "fresh.token");
  writeSecretFileSync(fresh, "one");
  assert.equal(statSync(fresh).mode & 0o777, 0o600);
  assert.equal(readFileSync(fresh, "utf8"), "one");

  for (const mode of [0o644, 0o666]) {
    const loose = join(dir, `loose-${mode.toString(8)}.token`);
    writeFileSync(loose, "old");
    chmodSync(loose, mode);
    writeSecretFileSync(loose, "new");
    assert.equal(statSync(loose).mode & 0o777, 0o600, mode.toString(8));
    assert.equal(readFileSync(loose, "utf8"), "new");
  }

  // A symlink planted at the path would make writeFileSync write the secret into its target.
  const target = join(dir, "elsewhere.txt");
  writeFileSync(target, "not yours");
  chmodSync(target, 0o644);
  const linked = join(dir, "linked.token");
  symlinkSync(target, linked);
  writeSecretFileSync(linked, "secret");
  assert.equal(lstatSync(linked).isSymbolicLink(), false);
  assert.equal(statSync(linked).mode & 0o777, 0o600);
  assert.equal(readFileSync(target, "utf8"), "not yours", "the link's target is untouched");

  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith(".tmp")),
    [],
    "no temporary file is left behind",
  );
});
