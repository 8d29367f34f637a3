import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import {
  DEMO_MARKER_FILE,
  DemoFolderError,
  defaultDemoDir,
  isDemoMarker,
  prepareDataFolder,
} from "../../src/demo/data-folder.ts";
import {
  choosePorts,
  DemoPortError,
  parsePorts,
  readSavedPorts,
  savePorts,
} from "../../src/demo/ports.ts";
import { tempDir } from "../support/tmp.ts";

test("[DEMO-folder-default] the default folder is $AGENTAUTH_HOME/demo", () => {
  assert.equal(defaultDemoDir({ AGENTAUTH_HOME: "/x/home" }), join("/x/home", "demo"));
});

test("[DEMO-folder-create] a new folder is created owner-only with the marker; a marked one is reused as is", () => {
  const dir = join(tempDir(), "demo");
  const first = prepareDataFolder(dir);
  assert.equal(first.created, true);
  assert.ok(existsSync(join(dir, DEMO_MARKER_FILE)));
  if (process.platform !== "win32") assert.equal(statSync(dir).mode & 0o777, 0o700);
  writeFileSync(join(dir, "vault.db"), "kept");
  const second = prepareDataFolder(dir);
  assert.equal(second.created, false);
  assert.ok(existsSync(join(dir, "vault.db")), "an ordinary start keeps what is there");
});

test("[DEMO-folder-fresh] --fresh empties a marked folder and marks it again", () => {
  const dir = tempDir();
  prepareDataFolder(dir);
  writeFileSync(join(dir, "vault.db"), "old");
  mkdirSync(join(dir, "sub"));
  writeFileSync(join(dir, "sub", "f"), "old");
  const fresh = prepareDataFolder(dir, { fresh: true });
  assert.equal(fresh.created, true);
  assert.deepEqual(readdirSync(dir), [DEMO_MARKER_FILE]);
});

test("[DEMO-folder-foreign] a non-empty folder without the marker is refused, fresh or not, and left untouched", () => {
  const dir = tempDir();
  writeFileSync(join(dir, "thesis.tex"), "precious");
  for (const fresh of [false, true]) {
    assert.throws(
      () => prepareDataFolder(dir, { fresh }),
      (error: unknown) => error instanceof DemoFolderError && error.code === "demo_folder_foreign",
    );
  }
  assert.deepEqual(readdirSync(dir), ["thesis.tex"]);
  // A file named like the marker but not ours does not count.
  writeFileSync(join(dir, DEMO_MARKER_FILE), '{"kind":"something-else"}');
  assert.throws(() => prepareDataFolder(dir, { fresh: true }), DemoFolderError);
  assert.ok(existsSync(join(dir, "thesis.tex")));
  const file = join(dir, "thesis.tex");
  assert.throws(
    () => prepareDataFolder(file),
    (error: unknown) =>
      error instanceof DemoFolderError && error.code === "demo_folder_not_a_directory",
  );
});

test("[DEMO-folder-marker] only a JSON object of kind agentauth-demo is a marker", () => {
  assert.equal(isDemoMarker('{"kind":"agentauth-demo","version":1}'), true);
  for (const text of [
    "",
    "null",
    "[]",
    '"agentauth-demo"',
    '{"kind":1}',
    "{",
    '{"kind":"agentauth-demo"',
  ]) {
    assert.equal(isDemoMarker(text), false, text);
  }
});

test("[DEMO-ports-parse] ports.json: valid entries kept, anything malformed dropped", () => {
  assert.deepEqual(parsePorts('{"idp":4444,"api":5000}'), { idp: 4444, api: 5000 });
  assert.deepEqual(
    parsePorts('{"idp":0,"api":70000,"tool":1.5,"runtime":"80","ahp":null,"console":-1,"x":5}'),
    {},
  );
  for (const text of ["", "[]", "null", "4444", "{", '{"__proto__":{"idp":1}}']) {
    assert.deepEqual(parsePorts(text), {}, text);
  }
});

test("[DEMO-ports-stable] saved ports are taken again when free; a taken one moves and is named", async () => {
  const dir = tempDir();
  assert.deepEqual(readSavedPorts(dir), {});
  const first = await choosePorts({}, {}, {});
  const values = Object.values(first.ports);
  assert.equal(new Set(values).size, values.length, "no two servers share a port");
  savePorts(dir, first.ports);
  assert.deepEqual(readSavedPorts(dir), first.ports);
  const again = await choosePorts(readSavedPorts(dir), {}, {});
  assert.deepEqual(again.ports, first.ports);
  assert.deepEqual(again.moved, []);

  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(first.ports.tool, "127.0.0.1", resolve));
  try {
    const moved = await choosePorts(readSavedPorts(dir), {}, {});
    assert.notEqual(moved.ports.tool, first.ports.tool);
    assert.deepEqual(moved.moved, ["tool"]);
    assert.equal(moved.ports.idp, first.ports.idp);
    await assert.rejects(
      choosePorts({}, { console: first.ports.tool }, {}),
      (error: unknown) => error instanceof DemoPortError && error.code === "demo_port_taken",
    );
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});
