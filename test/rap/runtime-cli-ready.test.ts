/**
 * Issue 22 §2: `rap runtime serve` binds its port before it can answer (the toolsets load, the store opens). A
 * request that arrives in between must get an answer, 503 with Retry-After, not hang until the client gives up.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { startCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { echoTool } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

/** A tool whose toolset document is held back until `release()`: the runtime is bound but not ready meanwhile. */
async function heldToolset() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let asked!: () => void;
  const wasAsked = new Promise<void>((resolve) => {
    asked = resolve;
  });
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (req.url === "/.well-known/rap-toolset") {
      asked();
      await released;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: "held", endpoint: `${origin}/invoke`, tools: [echoTool] }));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    wasAsked,
    release,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The answer, or a failure when none came: a guard against the hang this test is about, not a timing assertion. */
async function answer(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: (await response.json()) as Record<string, unknown>,
  };
}

test("[RAP-runtime-serve-ready] while the toolsets load, the bound port answers 503 + Retry-After (control API and callbacks), then serves once ready", async (t) => {
  const tool = await heldToolset();
  t.after(() => tool.close());
  const port = await closedPort();
  const cli = startCli(
    [
      "rap",
      "runtime",
      "serve",
      "--toolset",
      tool.origin,
      "--tool-auth",
      "none",
      "--port",
      String(port),
    ],
    { AGENTAUTH_HOME: tempDir() },
  );
  await tool.wasAsked;
  const early = await answer(`http://127.0.0.1:${port}/tools`);
  assert.equal(early.status, 503, JSON.stringify(early));
  assert.equal(early.retryAfter, "1");
  assert.equal(early.body.error, "starting");
  const callback = await answer(`http://127.0.0.1:${port}/callback/anything`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(callback.status, 503, "a tool's callback is told to retry, not left hanging");
  assert.equal(callback.retryAfter, "1");

  tool.release();
  const [line] = await cli.waitFor("stdout", /^\{"event":"ready".*\}$/m);
  const ready = JSON.parse(line) as { url: string; controlTokenFile: string };
  const token = readFileSync(ready.controlTokenFile, "utf8").trim();
  const served = await answer(`${ready.url}/tools`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(served.status, 200);
  cli.kill("SIGTERM");
  assert.equal((await cli.exited).code, 0);
});
