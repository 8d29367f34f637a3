/**
 * The proxy when the server or the client misbehaves (issue 19, from a review): every request the client sends is
 * answered, and the proxy neither crashes nor hangs. A restart of the server with requests in flight; a response
 * stream that ends without the answer; a URL with no MCP endpoint; the client going away during a sign-in.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { REPO_ROOT } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  connectThroughProxy,
  endBackgroundSignIn,
  FETCH_BROWSER,
} from "./fixtures/proxy-client.ts";
import { startStatefulMcpServer } from "./fixtures/stateful-mcp-server.ts";

const idp = await useIdp();
const OWN_KEY = ["--header", "Authorization: Bearer own-key"];

/** A Streamable HTTP server written out by hand, answering each JSON-RPC method as `answer` says. */
async function scriptedServer(
  answer: (method: string, body: { id?: unknown }, res: ServerResponse) => void,
): Promise<string> {
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    let text = "";
    req.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      const body = JSON.parse(text) as { id?: unknown; method?: string };
      answer(body.method ?? "", body, res);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  after(() => {
    http.closeAllConnections();
    return new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
}

function initialized(body: { id?: unknown }, res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" }).end(
    JSON.stringify({
      jsonrpc: "2.0",
      id: body.id,
      result: {
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "scripted", version: "1.0.0" },
      },
    }),
  );
}

test("[MCP-proxy-restart-in-flight] the server restarting with eight requests on their way: every one is answered by the new session, none with an error", {
  timeout: 120_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const proxy = await connectThroughProxy(mcp.url, {
    AGENTAUTH_HOME: tempDir(),
    BROWSER: FETCH_BROWSER,
  });
  await proxy.client.callTool({ name: "whoami", arguments: {} });
  mcp.restart();
  const answers = await Promise.all(
    Array.from({ length: 8 }, () =>
      proxy.client.callTool({ name: "whoami", arguments: {} }).then(
        (r) => (r.content as { text: string }[])[0]?.text,
        (e: Error) => e.message,
      ),
    ),
  );
  assert.deepEqual(answers, Array(8).fill("hello alice"));
  await proxy.close();
});

test("[MCP-proxy-stream-ends-unanswered] a response stream that ends without the answer: the request is answered with an error saying its outcome is unknown, not left waiting", {
  timeout: 60_000,
}, async () => {
  const url = await scriptedServer((method, body, res) => {
    if (method === "initialize") return initialized(body, res);
    if (method === "tools/call") {
      // The stream opens, then the server goes away mid-call.
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(": working\n\n");
      return;
    }
    res.writeHead(202).end();
  });
  const proxy = await connectThroughProxy(url, { AGENTAUTH_HOME: tempDir() }, OWN_KEY);
  const failed = await proxy.client
    .callTool({ name: "anything", arguments: {} }, { timeout: 20_000 })
    .then(
      () => "answered",
      (e: Error) => e.message,
    );
  assert.match(
    failed,
    /ended its answer to this request without a result.*whether it ran is unknown/,
  );
  await proxy.close();
});

test("[MCP-proxy-no-endpoint-answered] a URL with no MCP endpoint (404 to everything, --transport http-only): the client's initialize is answered with the reason, and the proxy stays up", {
  timeout: 60_000,
}, async () => {
  const url = await scriptedServer((_method, _body, res) => {
    res.writeHead(404, { "content-type": "text/plain" }).end("no such endpoint");
  });
  const failed = await connectThroughProxy(url, { AGENTAUTH_HOME: tempDir() }, [
    ...OWN_KEY,
    "--transport",
    "http-only",
  ]).then(
    () => "connected",
    (e: Error) => e.message,
  );
  assert.match(failed, /could not get an answer from the MCP server.*404/);
  assert.doesNotMatch(failed, /closed/i, "answered by the proxy, not a dead process");
});

test("[MCP-proxy-stdin-closes-during-sign-in] the client going away while a request waits for a sign-in: the proxy exits 0, without an error", {
  timeout: 60_000,
}, async () => {
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const log = join(home, "browser.log");
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, "src/cli/main.ts"), "mcp", "proxy", mcp.url, "--sign-in-wait", "60"],
    {
      env: {
        PATH: process.env.PATH ?? "",
        AGENTAUTH_HOME: home,
        BROWSER: FETCH_BROWSER,
        FETCH_BROWSER_LOG: log,
        FETCH_BROWSER_HOLD: "1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  after(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await endBackgroundSignIn(home, mcp.url);
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  child.stdin.write(
    `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {},
    })}\n`,
  );
  // The request waits for the person: the browser has been asked.
  for (let i = 0; i < 200 && !existsSync(log); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(existsSync(log) && readFileSync(log, "utf8").length > 0, "the sign-in started");
  child.stdin.end();
  assert.equal(await exited, 0, stderr);
  assert.doesNotMatch(stderr, /finalized|Uncaught|\n\s+at /);
});
