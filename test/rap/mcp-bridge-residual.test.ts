/**
 * Residual defects of the RAP MCP bridge (second readers' reports): which request's answer explains a failure, a
 * server URL with a query, and a token straddling the cut of a server's error text. Real SDK client, real sockets:
 * a small MCP server on loopback that misbehaves on purpose.
 */

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { secret } from "../../src/core/secret.ts";
import { McpBridgeError, McpCallError, mcpBridgeToolset } from "../../src/rap/mcp-bridge/index.ts";
import { resultText } from "../../src/rap/mcp-bridge/result.ts";
import { withMcpSession } from "../../src/rap/mcp-bridge/session.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { startBridge } from "./mcp-bridge-fixture.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const idp = await useIdp();

interface Stand {
  url: string;
  /** Set: RFC 9728 metadata names this authorization server, and tools/call answers 403 insufficient_scope for
   * `demand` (a scope the grant already holds: the server's requirements are inconsistent). */
  issuer?: string;
  demand?: string;
  /** How the background GET stream is answered. */
  get: "refuse-401" | "refuse-403-scope" | "reset" | "405";
  /** The JSON-RPC error message tools/call answers with. */
  callError: string;
  gets: number;
}

/** Answers initialize and tools/call (a JSON-RPC error, after the GET stream was answered), GET as `get` says. */
async function startStand(): Promise<Stand> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const stand: Stand = { url, get: "405", callError: "no such thing", gets: 0 };
  let getAnswered: () => void = () => {};
  let answered = new Promise<void>((resolve) => {
    getAnswered = resolve;
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (req.url === "/.well-known/oauth-protected-resource/mcp") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            resource: url,
            authorization_servers: [stand.issuer],
            scopes_supported: ["read"],
          }),
        );
        return;
      }
      if (req.method === "GET") {
        stand.gets++;
        if (stand.get === "reset") req.socket.destroy();
        else if (stand.get === "405") res.writeHead(405).end();
        else if (stand.get === "refuse-401") {
          res.writeHead(401, { "www-authenticate": 'Bearer error="invalid_token"' }).end();
        } else {
          res
            .writeHead(403, {
              "www-authenticate": 'Bearer error="insufficient_scope", scope="admin"',
            })
            .end();
        }
        getAnswered();
        return;
      }
      if (req.method === "DELETE") return void res.writeHead(405).end();
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (message.id === undefined) return void res.writeHead(202).end();
      const json = (body: Record<string, unknown>) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, ...body }));
      };
      if (message.method === "initialize") {
        // Each session gets a fresh wait for its own GET stream.
        answered = new Promise<void>((resolve) => {
          getAnswered = resolve;
        });
        return json({
          result: {
            protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
            capabilities: { tools: {} },
            serverInfo: { name: "stand", version: "1.0.0" },
          },
        });
      }
      if (stand.demand !== undefined) {
        res.writeHead(403, {
          "www-authenticate": `Bearer error="insufficient_scope", scope="${stand.demand}"`,
        });
        res.end();
        return;
      }
      // The background GET has been answered (and seen by the client) before this request's own answer.
      await answered;
      await new Promise((resolve) => setTimeout(resolve, 100));
      json({ error: { code: -32602, message: stand.callError } });
    })().catch(() => res.destroy());
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return stand;
}

async function sessionError(stand: Stand, token = "tok-residual-0123456789"): Promise<unknown> {
  try {
    await withMcpSession(
      { serverUrl: new URL(stand.url), token: secret(token), label: "act" },
      (client, signal) => client.callTool({ name: "act", arguments: {} }, { signal }),
    );
  } catch (error) {
    return error;
  }
  assert.fail("the call succeeded");
}

test("[RAP-mcp-bridge-attribution] a failed request is explained by its own answer only: a refusal or reset of the SDK's background GET stream does not turn a later tool error into a token refusal, a step-up or 'unreachable'", async () => {
  const stand = await startStand();
  for (const get of ["refuse-401", "refuse-403-scope", "reset"] as const) {
    stand.get = get;
    stand.gets = 0;
    const error = await sessionError(stand);
    assert.ok(stand.gets > 0, `${get}: the SDK opened its GET stream`);
    assert.ok(error instanceof McpCallError, `${get}: a typed McpCallError, got ${String(error)}`);
    assert.equal(error.reason, "mcp_tool_error", get);
    assert.match(error.message, /The MCP server refused act: no such thing/, get);
  }
});

test("[RAP-mcp-bridge-server-url-query] a server URL with a query is refused at construction with a typed server_url_query that does not repeat the URL (RFC 8707 §2: a resource carries no query; it usually holds a key)", async () => {
  for (const serverUrl of [
    "https://mcp.example.com/mcp?api_key=sekrit-value",
    new URL("http://127.0.0.1:1/mcp?token=sekrit-value"),
    "https://mcp.example.com/mcp?",
  ]) {
    let caught: unknown;
    try {
      await mcpBridgeToolset({ serverUrl, publicBaseUrl: "http://127.0.0.1:1" });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof McpBridgeError, String(caught));
    assert.equal(caught.code, "server_url_query", String(serverUrl));
    assert.doesNotMatch(caught.message, /sekrit|example\.com|127\.0\.0\.1/);
    assert.match(caught.message, /without it/);
  }
});

test("[RAP-mcp-bridge-secret-before-cut] a token straddling the cut of a server's error text is withheld whole: checked before the text is cut (JSON-RPC errors and isError results)", async () => {
  const token = "tok-straddle-ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const stand = await startStand();
  stand.callError = `${"a".repeat(490)}${token}`;
  const error = await sessionError(stand, token);
  assert.ok(error instanceof McpCallError, String(error));
  assert.equal(error.reason, "mcp_tool_error");
  assert.ok(!error.message.includes(token.slice(0, 8)), "no part of the token in the message");
  assert.match(error.message, /withheld/);
  // Split by a control character the cleaning removes: still the token once cleaned.
  stand.callError = `oops ${token.slice(0, 10)}\u0007${token.slice(10)}`;
  const split = await sessionError(stand, token);
  assert.ok(split instanceof McpCallError && !split.message.includes(token.slice(0, 8)));

  const isError = {
    isError: true,
    content: [{ type: "text", text: `${"b".repeat(1990)}${token}` }],
  };
  let result: unknown;
  try {
    resultText("act", isError, 200_000, secret(token));
  } catch (caught) {
    result = caught;
  }
  assert.ok(result instanceof McpCallError, String(result));
  assert.ok(!result.message.includes(token.slice(0, 8)), "no part of the token in the message");
  assert.match(result.message, /withheld/);
  // Without the token in it, the text is cut as before.
  assert.throws(
    () =>
      resultText(
        "act",
        { isError: true, content: [{ type: "text", text: "c".repeat(3000) }] },
        200_000,
        secret(token),
      ),
    (e: unknown) => e instanceof McpCallError && /c… \(cut\)$/.test(e.message),
  );
});

test("[RAP-mcp-bridge-step-up-adds-nothing] an MCP server that keeps demanding a scope the user's grant already holds (as the authorization server reported it) ends the call with a typed step_up_adds_nothing error instead of asking the person again on every call", async () => {
  const stand = await startStand();
  stand.issuer = idp.issuer;
  const store = new MemoryCredentialStore();
  const bridge = await startBridge(store, {
    serverUrl: stand.url,
    tools: [{ name: "act", description: "Acts.", inputSchema: { type: "object" } }],
  });
  const first = await bridge.call("u-ada", "act");
  let link: string | undefined;
  for (let i = 0; i < 400 && !link; i++) {
    link = bridge.recorded.authorizations.find((a) => a.id === first)?.authUrl;
    if (!link) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(link, "the first call asks the person to sign in");
  stand.demand = "read";
  await authorize(link);
  await bridge.runtime.waitForResult("thread", first);
  const record = await store.get({ subject: "u-ada", issuer: idp.issuer, resource: stand.url });
  assert.ok(record?.scopes.includes("read"), `the grant holds read: ${record?.scopes}`);

  const asked = bridge.recorded.authorizations.length;
  const again = await bridge.call("u-ada", "act");
  // Either the call ends, or the person is asked again (the defect): whichever comes first, no waiting for the
  // authorization timeout.
  let call = await bridge.runtime.getCall("thread", again);
  for (let i = 0; i < 400; i++) {
    if (bridge.recorded.authorizations.length > asked) break;
    if (call?.status === "completed" || call?.status === "failed") break;
    await new Promise((r) => setTimeout(r, 25));
    call = await bridge.runtime.getCall("thread", again);
  }
  assert.equal(
    bridge.recorded.authorizations.length,
    asked,
    `the person is not asked again (granted: ${record?.scopes}; ${bridge.logs.filter((l) => l.includes("step_up")).join(" ")})`,
  );
  const settled = await bridge.runtime.waitForResult("thread", again);
  const text = String(settled.result?.text ?? "");
  assert.match(text, /already granted/);
  assert.match(text, /scope requirements/);
  assert.ok(
    bridge.logs.some((line) => line.includes("step_up_adds_nothing")),
    "logged with its code",
  );
});
