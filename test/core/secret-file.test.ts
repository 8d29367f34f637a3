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
import {
  createSecretFile,
  createSecretFileSync,
  writeSecretFile,
  writeSecretFileSync,
} from "../../src/core/secret-file.ts";
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

test("[CORE-secret-file-create] create-once writes (sync and async) make the file owner-only when it is missing and leave an existing one alone (false), so starters racing for it agree on the first; the async replace matches the sync one; no temporary file is left", async () => {
  const dir = tempDir();
  const once = join(dir, "once.key");
  assert.equal(createSecretFileSync(once, "first"), true);
  assert.equal(statSync(once).mode & 0o777, 0o600);
  assert.equal(createSecretFileSync(once, "second"), false);
  assert.equal(await createSecretFile(once, "third"), false);
  assert.equal(readFileSync(once, "utf8"), "first", "the first writer's file is kept");

  const racing = join(dir, "racing.key");
  const won = await Promise.all(
    Array.from({ length: 8 }, (_, i) => createSecretFile(racing, `writer ${i}`)),
  );
  assert.equal(won.filter(Boolean).length, 1, "exactly one writer created it");
  assert.equal(readFileSync(racing, "utf8"), `writer ${won.indexOf(true)}`);
  assert.equal(statSync(racing).mode & 0o777, 0o600);

  const replaced = join(dir, "state.json");
  writeFileSync(replaced, "old");
  chmodSync(replaced, 0o644);
  await writeSecretFile(replaced, "new");
  assert.equal(statSync(replaced).mode & 0o777, 0o600);
  assert.equal(readFileSync(replaced, "utf8"), "new");

  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith(".tmp")),
    [],
    "no temporary file is left behind",
  );
});
