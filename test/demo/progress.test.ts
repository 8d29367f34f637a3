import assert from "node:assert/strict";
import { test } from "node:test";
import { progressText, readyLine, summaryText } from "../../src/demo/progress.ts";

const urls = {
  issuer: "http://127.0.0.1:4444",
  api: "http://127.0.0.1:5001",
  tool: "http://127.0.0.1:5002",
  runtime: "http://127.0.0.1:5003",
  ahp: "ws://127.0.0.1:5004",
  console: "http://127.0.0.1:5005/",
  consoleLogin: "http://127.0.0.1:5005/?token=ONE-TIME",
};

test("[DEMO-progress-lines] one line per component: 'Starting …… ok (URL)' or 'failed: why'", () => {
  const line =
    progressText({ step: "idp", phase: "start" }) +
    progressText({ step: "idp", phase: "done", url: urls.issuer });
  assert.equal(line, "Starting the authorization server… ok (http://127.0.0.1:4444)\n");
  assert.equal(
    progressText({ step: "console", phase: "failed", detail: "port taken" }),
    "failed: port taken\n",
  );
  assert.equal(progressText({ step: "vault", phase: "done" }), "ok\n");
});

test("[DEMO-progress-summary] the console link comes first, then every address, the commands and how to stop", () => {
  const text = summaryText({
    dataDir: "/tmp/demo",
    urls,
    commands: [
      { label: "the vault", command: "AGENTAUTH_HOME=/tmp/demo npm run agentauth -- vault list" },
    ],
    moved: ["tool"],
  });
  const login = text.indexOf(urls.consoleLogin);
  assert.ok(login > 0);
  for (const url of [urls.issuer, urls.api, urls.tool, urls.runtime, urls.ahp, urls.console]) {
    assert.ok(text.lastIndexOf(url) > login, `${url} after the login link`);
  }
  assert.match(text, /Open this/);
  assert.match(text, /vault list/);
  assert.match(text, /tool was taken, so it moved/);
  assert.match(text, /Ctrl-C stops everything\./);
  assert.equal(text.split(urls.consoleLogin).length, 2, "the login link printed once");
});

test("[DEMO-progress-ready] --json: one ready line with every URL and the data folder", () => {
  const line = readyLine({ dataDir: "/tmp/demo", urls, commands: [] });
  assert.ok(line.endsWith("\n") && !line.slice(0, -1).includes("\n"));
  const parsed = JSON.parse(line);
  assert.equal(parsed.event, "ready");
  assert.deepEqual(parsed.urls, urls);
  assert.equal(parsed.dataDir, "/tmp/demo");
});

test("[DEMO-commands] the printed commands name the demo folder (quoted when needed) and this demo's addresses", async () => {
  const { demoCommands } = await import("../../src/demo/start.ts");
  const commands = demoCommands("/tmp/my demo's folder", urls);
  const text = commands.map((c) => c.command).join("\n");
  for (const line of text.split("\n")) {
    assert.ok(
      line.startsWith(`AGENTAUTH_HOME='/tmp/my demo'\\''s folder' npm run agentauth -- `),
      line,
    );
  }
  assert.match(text, /vault list/);
  assert.match(
    text,
    /acp status -- agentauth acp example-agent --issuer http:\/\/127\.0\.0\.1:4444/,
  );
  assert.match(text, /ahp login ws:\/\/127\.0\.0\.1:5004/);
  assert.match(text, /rap inspect http:\/\/127\.0\.0\.1:5002/);
  assert.ok(!text.includes("ONE-TIME"), "no console token in the commands");
  // First the way back into the console (issue 21: the printed link works once), then the vault.
  assert.deepEqual(
    demoCommands("/tmp/demo", urls)
      .slice(0, 2)
      .map((c) => c.command),
    [
      "AGENTAUTH_HOME=/tmp/demo npm run agentauth -- console --link",
      "AGENTAUTH_HOME=/tmp/demo npm run agentauth -- vault list",
    ],
    "in a checkout: the package's agentauth script",
  );
  assert.equal(
    demoCommands("/tmp/demo", urls, false, "npx agentauth")[2]?.command,
    "AGENTAUTH_HOME=/tmp/demo npx agentauth acp status -- agentauth acp example-agent --issuer http://127.0.0.1:4444",
    "installed in a project",
  );
});
