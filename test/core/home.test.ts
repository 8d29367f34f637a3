import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { agentauthHome, ensureHome } from "../../src/core/home.ts";
import { tempDir } from "../support/tmp.ts";

test("[CORE-home] AGENTAUTH_HOME wins over everything else", () => {
  assert.equal(
    agentauthHome({
      AGENTAUTH_HOME: "/srv/agentauth",
      XDG_DATA_HOME: "/xdg",
      LOCALAPPDATA: "C:\\x",
    }),
    "/srv/agentauth",
  );
});

test("[CORE-home] without AGENTAUTH_HOME it is the platform's data directory", () => {
  const home = homedir();
  switch (process.platform) {
    case "darwin":
      assert.equal(
        agentauthHome({ XDG_DATA_HOME: "/xdg" }),
        join(home, "Library", "Application Support", "agentauth"),
      );
      break;
    case "win32":
      assert.equal(
        agentauthHome({ LOCALAPPDATA: "D:\\AppData" }),
        join("D:\\AppData", "agentauth"),
      );
      assert.equal(agentauthHome({}), join(home, "AppData", "Local", "agentauth"));
      break;
    default:
      assert.equal(agentauthHome({ XDG_DATA_HOME: "/xdg/data" }), join("/xdg/data", "agentauth"));
      assert.equal(agentauthHome({}), join(home, ".local", "share", "agentauth"));
  }
});

test("[CORE-home] an empty AGENTAUTH_HOME counts as unset", () => {
  assert.equal(agentauthHome({ AGENTAUTH_HOME: "" }), agentauthHome({}));
});

test("[CORE-home] the default is read from process.env", (t) => {
  const saved = process.env.AGENTAUTH_HOME;
  t.after(() => {
    if (saved === undefined) delete process.env.AGENTAUTH_HOME;
    else process.env.AGENTAUTH_HOME = saved;
  });
  process.env.AGENTAUTH_HOME = "/from/process/env";
  assert.equal(agentauthHome(), "/from/process/env");
});

test("[CORE-home] ensureHome creates the folder and its missing parents owner-only (0700) and returns it", {
  skip: process.platform === "win32" ? "POSIX modes" : false,
}, () => {
  const root = tempDir();
  const home = join(root, "a", "b", "agentauth");
  assert.equal(ensureHome({ AGENTAUTH_HOME: home }), home);
  assert.ok(statSync(home).isDirectory());
  assert.equal(statSync(home).mode & 0o777, 0o700);
  assert.equal(statSync(join(root, "a")).mode & 0o777, 0o700);
  assert.equal(ensureHome({ AGENTAUTH_HOME: home }), home, "idempotent");
});

test("[CORE-home] ensureHome honours XDG_DATA_HOME when AGENTAUTH_HOME is unset", {
  skip: process.platform === "linux" ? false : "XDG applies on Linux",
}, () => {
  const xdg = tempDir();
  const home = ensureHome({ XDG_DATA_HOME: xdg });
  assert.equal(home, join(xdg, "agentauth"));
  assert.equal(statSync(home).mode & 0o777, 0o700);
});
