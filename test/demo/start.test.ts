/**
 * startDemo as a whole, in a temp folder: every part real (embedded IdP, example tool and protected API, SQLite
 * runtime and vault, AHP host, console), driven through the console's HTTP API as the page would, and the RAP auth
 * link followed with plain fetch (the tool's consent page, the auto-approving IdP).
 */

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type TestContext, test } from "node:test";
import WebSocket from "ws";
import type { ConsoleState, RapPanelState } from "../../src/console/wire.ts";
import { createLogger } from "../../src/core/log.ts";
import { DemoFolderError } from "../../src/demo/data-folder.ts";
import {
  type DemoPorts,
  isPortFree,
  type PortName,
  readSavedPorts,
  savePorts,
} from "../../src/demo/ports.ts";
import { type RunningDemo, startDemo } from "../../src/demo/start.ts";
import { authorize } from "../rap/tool-oauth-fixture.ts";
import { listeners, releasedBy, thisProcess } from "../support/port-holders.ts";
import { tempDir } from "../support/tmp.ts";

/**
 * A restart is to take the saved ports again, which it does when they are free. Another test file running in
 * parallel may take one of them after our close (the preferred IdP port 4444 for its own demo, or an ephemeral port
 * the kernel hands it): then the demo rightly moves that server, and this test cannot see the ports kept. So the
 * restart waits until every saved port is free; and when a port was taken again between that check and the start
 * (the demo moved it and another process, not this one, listens on the saved port), it closes, puts the saved
 * ports back in ports.json and starts again, at most three times. A move with the saved port not held by another
 * process is returned as it is, for the test's assertion to fail on.
 */
async function restartOnSavedPorts(
  t: TestContext,
  dataDir: string,
  saved: DemoPorts,
  start: () => Promise<RunningDemo>,
): Promise<RunningDemo> {
  for (let attempt = 1; ; attempt++) {
    t.diagnostic(`saved ports free again after ${await allFree(Object.values(saved))} ms`);
    // Taken after choosePorts saw it free and before the server listened: startDemo itself starts again and
    // moves that server ([DEMO-start-port-race]), which the check below sees as moved.
    const demo = await start();
    if (demo.moved.length === 0 || attempt === 3) return demo;
    const takenByOthers = demo.moved.every((name) =>
      listeners(saved[name as PortName])?.some((listener) => listener.pid !== process.pid),
    );
    if (!takenByOthers) return demo;
    t.diagnostic(
      `start ${attempt}: ${demo.moved.join()} moved, another process took the saved port; starting again`,
    );
    await demo.close();
    savePorts(dataDir, saved);
  }
}

/** Waits (bounded at 60 s) until every port can be bound; resolves with how long that took. */
async function allFree(ports: number[]): Promise<number> {
  const started = Date.now();
  for (;;) {
    const taken = [];
    for (const port of ports) if (!(await isPortFree(port))) taken.push(port);
    if (taken.length === 0) return Date.now() - started;
    if (Date.now() - started > 60_000)
      throw new Error(`ports ${taken.join(", ")} still taken after 60 s (by another process?)`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until `read` returns a value; fails after 30 s (far beyond one step of the demo, even on a loaded machine)
 * so that a step that never happens shows at once with its line, not when the whole test's 180 s run out.
 */
async function until<T>(read: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error("timed out waiting (30 s): see the stack for which step");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A console session as the page holds it: the cookie from the one-time link and the page's CSRF token. */
async function consoleSession(demo: RunningDemo) {
  const login = await fetch(demo.urls.consoleLogin, { redirect: "manual" });
  await login.arrayBuffer();
  assert.equal(login.status, 303);
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  assert.match(cookie, /^agentauth_console=/);
  const page = await fetch(demo.urls.console, { headers: { cookie } });
  const html = await page.text();
  assert.equal(page.status, 200);
  const csrf = /<meta name="csrf-token" content="([^"]+)"/.exec(html)?.[1];
  assert.ok(csrf, "the page carries its CSRF token");
  const origin = new URL(demo.urls.console).origin;
  const post = async (path: string, body: unknown) => {
    const response = await fetch(new URL(path, demo.urls.console), {
      method: "POST",
      headers: { cookie, origin, "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const state = async () => {
    const response = await fetch(new URL("/api/state", demo.urls.console), { headers: { cookie } });
    assert.equal(response.status, 200);
    return (await response.json()) as ConsoleState;
  };
  const rap = async () =>
    (await state()).panels.find((panel) => panel.id === "rap")?.state as RapPanelState;
  return { post, state, rap };
}

type Session = Awaited<ReturnType<typeof consoleSession>>;

async function invokeWhoami(session: Session) {
  const answer = await session.post("/api/panels/rap/invoke", {
    user: "alice",
    operation: "whoami",
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const id = JSON.stringify(answer.body).match(/"id":"([^"]+)"/)?.[1];
  assert.ok(id, `the action names the call: ${JSON.stringify(answer.body)}`);
  return id;
}

function callIn(state: RapPanelState, id: string) {
  return state.calls.find((call) => call.id === id);
}

test("[DEMO-start-journey] startDemo: every URL answers; invoke as alice in the RAP panel → Authorize link on the board → followed → result in the panel → alice's credential in the vault; a restart keeps it and the ports; disconnect → the next call asks again; --fresh empties", {
  timeout: 180_000,
}, async (t) => {
  const dataDir = join(tempDir(), "demo");
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line) });
  const progress: string[] = [];
  let demo = await startDemo({
    dataDir,
    autoApproveAs: "alice",
    logger,
    onProgress: (event) => progress.push(`${event.step}:${event.phase}`),
  });
  try {
    assert.ok(progress.includes("idp:done") && progress.includes("console:done"), progress.join());
    assert.equal(demo.dataDir, dataDir);
    assert.ok(demo.acpAgentCommand.includes("example-agent"));
    assert.ok(demo.commands.some((c) => c.command.includes("vault list")));
    // Every URL answers.
    const discovery = await fetch(`${demo.urls.issuer}/.well-known/openid-configuration`);
    assert.equal(((await discovery.json()) as { issuer: string }).issuer, demo.urls.issuer);
    const metadata = await fetch(`${demo.urls.api}/.well-known/oauth-protected-resource/api`);
    assert.equal(metadata.status, 200);
    await metadata.arrayBuffer();
    for (const url of [demo.urls.tool, demo.urls.runtime, demo.urls.console]) {
      const response = await fetch(url);
      await response.arrayBuffer();
      assert.ok(response.status < 500, `${url} answers (${response.status})`);
    }
    await new Promise<void>((resolve, reject) => {
      const socket = new WebSocket(demo.urls.ahp);
      socket.once("open", () => {
        socket.close();
        resolve();
      });
      socket.once("error", reject);
    });

    // Invoke as alice through the panel action; the call waits with the tool's link.
    const session = await consoleSession(demo);
    assert.deepEqual(
      (await session.state()).panels.map((panel) => panel.id).sort(),
      ["acp", "ahp", "rap"],
      "the console shows the three demo panels",
    );
    const first = await invokeWhoami(session);
    const authUrl = await until(async () => {
      const call = callIn(await session.rap(), first);
      return call?.status === "authorizing" && call.authUrl ? call.authUrl : undefined;
    });
    const pending = (await session.state()).pending.find((p) => p.id === first);
    assert.equal(pending?.authUrl, authUrl, "the board shows the same link");
    assert.equal(pending?.userId ?? "alice", "alice");
    const followed = await authorize(authUrl);
    assert.equal(followed.status, 200, followed.page);
    const done = await until(async () => {
      const call = callIn(await session.rap(), first);
      return call && call.status !== "authorizing" && call.status !== "pending" ? call : undefined;
    });
    assert.equal(done.status, "completed");
    assert.match(String(done.result), /You are alice at the demo API/);
    assert.equal(done.authUrl, null, "the link is gone once the call ended");
    const [credential] = await demo.store.list({ subject: "alice" });
    assert.ok(credential, "alice's credential is in the demo vault");
  } finally {
    await demo.close();
  }
  for (const line of logs) {
    assert.ok(!line.includes("token="), "the console's login link is never logged");
  }

  // A second start on the same folder: same ports, alice still connected (no new authorization).
  const before = demo.ports;
  demo = await restartOnSavedPorts(t, dataDir, before, () =>
    startDemo({ dataDir, autoApproveAs: "alice", logger }),
  );
  try {
    assert.deepEqual(
      demo.ports,
      before,
      `the same ports again (moved: ${demo.moved.join() || "none"})`,
    );
    assert.equal(demo.urls.issuer, `http://127.0.0.1:${before.idp}`);
    const [credential] = await demo.store.list({ subject: "alice" });
    assert.ok(credential, "the credential survived the restart");
    const session = await consoleSession(demo);
    const second = await invokeWhoami(session);
    const done = await until(async () => {
      const call = callIn(await session.rap(), second);
      return call && call.status !== "authorizing" && call.status !== "pending" ? call : undefined;
    });
    assert.equal(done.status, "completed", "no authorization needed after the restart");
    assert.match(String(done.result), /You are alice/);

    // Disconnect through the console API: the credential goes, the next call asks again.
    const account = (await session.state()).accounts.find((a) => a.subject === "alice");
    assert.ok(account);
    const disconnected = await session.post("/api/accounts/disconnect", { id: account.id });
    assert.equal(disconnected.status, 200, JSON.stringify(disconnected.body));
    assert.equal((await demo.store.list({ subject: "alice" })).length, 0);
    const third = await invokeWhoami(session);
    await until(async () => {
      const call = callIn(await session.rap(), third);
      return call?.status === "authorizing" && call.authUrl ? call : undefined;
    });
  } finally {
    await demo.close();
  }

  // A third start: the panel lists the earlier calls; the one left waiting was cancelled (its link is gone).
  demo = await startDemo({ dataDir, logger });
  try {
    const session = await consoleSession(demo);
    const calls = (await session.rap()).calls;
    assert.ok(calls.length >= 3, JSON.stringify(calls));
    assert.ok(
      calls.some(
        (call) => call.status === "completed" && /You are alice/.test(String(call.result)),
      ),
    );
    const last = calls.at(-1);
    assert.equal(last?.status, "cancelled", JSON.stringify(last));
    assert.equal(last?.authUrl, null);
  } finally {
    await demo.close();
  }

  // --fresh: an empty vault (and the folder still the demo's).
  demo = await startDemo({ dataDir, fresh: true, logger });
  try {
    assert.equal((await demo.store.list()).length, 0);
  } finally {
    await demo.close();
  }
  for (const port of Object.values(demo.ports)) {
    assert.ok(await releasedBy(port, thisProcess), `port ${port} released by close()`);
  }
});

test("[DEMO-start-foreign] a non-empty folder that is not the demo's is refused before anything starts", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "notes.txt"), "mine");
  await assert.rejects(
    startDemo({ dataDir: dir, fresh: true }),
    (error: unknown) => error instanceof DemoFolderError && error.code === "demo_folder_foreign",
  );
});

test("[DEMO-start-cleanup] a start that fails half-way closes what had started (the IdP's port is free again)", {
  timeout: 60_000,
}, async () => {
  const dataDir = join(tempDir(), "demo");
  const demo = await startDemo({ dataDir });
  const ports = demo.ports;
  await demo.close();
  // A damaged invocation secret: the IdP and the vault start, the tool's step fails.
  writeFileSync(join(dataDir, "rap-invocation.secret"), "not a secret", { mode: 0o600 });
  const steps: string[] = [];
  await assert.rejects(
    startDemo({ dataDir, onProgress: (event) => steps.push(`${event.step}:${event.phase}`) }),
  );
  assert.ok(steps.includes("idp:done") && steps.includes("vault:done"), steps.join());
  assert.ok(steps.includes("tool:failed"), steps.join());
  assert.ok(
    steps.some((s) => s.endsWith(":failed")),
    steps.join(),
  );
  assert.ok(await releasedBy(ports.idp, thisProcess), "the IdP was closed");
});

test("[DEMO-rap-panel-hostile-http] hostile bodies to POST /api/panels/rap/invoke answer 400 with a typed code and start no call", {
  timeout: 60_000,
}, async () => {
  const demo = await startDemo({ dataDir: join(tempDir(), "demo") });
  try {
    const session = await consoleSession(demo);
    const cases: [unknown, string][] = [
      [{ user: "mallory", operation: "whoami" }, "demo_unknown_user"],
      [{ user: "alice", operation: "../../admin" }, "demo_unknown_operation"],
      [{ user: "alice", operation: "echo", text: { nested: true } }, "demo_invalid_text"],
      [{ user: { toString: "alice" }, operation: "whoami" }, "demo_unknown_user"],
    ];
    for (const [body, code] of cases) {
      const answer = await session.post("/api/panels/rap/invoke", body);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
      assert.equal((answer.body.error as { code: string }).code, code);
    }
    assert.deepEqual((await session.rap()).calls, [], "no call was started");
    const echo = await session.post("/api/panels/rap/invoke", {
      user: "bob",
      operation: "echo",
      text: "\u001b[31mred\u202e",
    });
    assert.equal(echo.status, 200);
    const done = await until(async () =>
      (await session.rap()).calls.find((call) => call.status === "completed"),
    );
    assert.equal(done.userId, "bob");
    const shown = String(done.result);
    assert.ok(
      !shown.includes("\u001b") && !shown.includes("\u202e"),
      "the result is shown sanitised",
    );
  } finally {
    await demo.close();
  }
});

test("[DEMO-api-port-taken] the example tool's protected API on a taken port rejects (EADDRINUSE) instead of crashing the process", async () => {
  const { createServer } = await import("node:net");
  const { startExampleTool } = await import("../../src/rap/example/index.ts");
  const { MemoryCredentialStore } = await import("../../src/vault/index.ts");
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    await assert.rejects(
      startExampleTool({
        issuer: "http://127.0.0.1:9",
        store: new MemoryCredentialStore(),
        apiPort: port,
        clientId: "x",
      }),
      (error: unknown) => (error as NodeJS.ErrnoException).code === "EADDRINUSE",
    );
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});

test("[DEMO-start-database-url-ignored] AGENTAUTH_DATABASE_URL in the shell does not split the demo between two stores: its vault stays in the folder, the agent it starts and the printed commands too", async () => {
  const dataDir = tempDir();
  const lines: string[] = [];
  const logger = createLogger({ write: (line) => lines.push(line), level: "warn" });
  const before = process.env.AGENTAUTH_DATABASE_URL;
  process.env.AGENTAUTH_DATABASE_URL = "postgres://demo@127.0.0.1:1/unreachable";
  let demo: RunningDemo | undefined;
  try {
    demo = await startDemo({ dataDir, logger });
    assert.equal(demo.store.constructor.name, "SqliteCredentialStore");
    assert.equal((await demo.store.list()).length, 0);
    for (const { command } of demo.commands.filter((c) => c.command.includes("agentauth"))) {
      assert.match(command, /AGENTAUTH_DATABASE_URL= /, command);
    }
    assert.ok(
      lines.some((line) => line.includes("demo.database_url_ignored")),
      lines.join("\n"),
    );
    assert.ok(!lines.join("\n").includes("unreachable"), "the URL itself is not logged");
  } finally {
    await demo?.close();
    if (before === undefined) delete process.env.AGENTAUTH_DATABASE_URL;
    else process.env.AGENTAUTH_DATABASE_URL = before;
  }
});

test("[DEMO-start-port-race] a port taken between choosing it and listening on it (another demo starting at the same moment): the demo starts anyway on another port and names it as moved", {
  timeout: 60_000,
}, async (t) => {
  const { createServer } = await import("node:net");
  const dataDir = join(tempDir(), "demo");
  const blocker = createServer();
  t.after(() => new Promise((resolve) => blocker.close(resolve)));
  let blocked: number | undefined;
  const demo = await startDemo({
    dataDir,
    onProgress: (event) => {
      // The ports are chosen and saved, the IdP not yet listening: another process takes its port now.
      if (event.step !== "idp" || event.phase !== "start" || blocked !== undefined) return;
      blocked = readSavedPorts(dataDir).idp;
      blocker.listen(blocked, "127.0.0.1");
    },
  });
  try {
    assert.ok(blocked, "the IdP's port was taken while starting");
    assert.notEqual(demo.ports.idp, blocked);
    assert.deepEqual(demo.moved, ["idp"]);
    assert.equal(demo.urls.issuer, `http://127.0.0.1:${demo.ports.idp}`);
    assert.deepEqual(
      readSavedPorts(dataDir),
      demo.ports,
      "the ports it runs on are the saved ones",
    );
    assert.deepEqual(
      listeners(blocked)?.map((listener) => listener.pid),
      [process.pid],
      "the taken port stays with its holder",
    );
  } finally {
    await demo.close();
  }
});
