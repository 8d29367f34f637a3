/** The kit's reading of a client's `mcpServers` (pure): hostile names, URLs, headers and counts. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { readSessionServers } from "../../src/acp/agent/mcp/index.ts";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

test("[ACP-mcp-servers-remote-only] only http and sse servers are managed; stdio and malformed entries are ignored", () => {
  const servers = readSessionServers([
    { name: "local", command: "/bin/true", args: [], env: [] },
    { type: "http", name: "a", url: "https://mcp.example/mcp", headers: [] },
    { type: "sse", name: "b", url: "http://127.0.0.1:9/sse", headers: [] },
    { type: "websocket", name: "c", url: "wss://x.example/" },
    null,
    "http://not-an-object.example/",
    42,
  ]);
  assert.deepEqual(
    servers.map((s) => [s.name, s.transport, s.url]),
    [
      ["a", "http", "https://mcp.example/mcp"],
      ["b", "sse", "http://127.0.0.1:9/sse"],
    ],
  );
  assert.deepEqual(readSessionServers(undefined), []);
  assert.deepEqual(readSessionServers({ 0: { type: "http" } }), []);
});

test("[ACP-mcp-servers-hostile-url] a URL that is not http(s), or carries a user name or password, is a typed invalid entry", () => {
  const [file, js, creds, garbage] = readSessionServers([
    { type: "http", name: "file", url: "file:///etc/passwd", headers: [] },
    { type: "http", name: "js", url: "javascript:alert(1)", headers: [] },
    { type: "http", name: "creds", url: "https://bob:hunter2@mcp.example/mcp", headers: [] },
    { type: "http", name: "garbage", url: { href: "https://x" }, headers: [] },
  ]);
  assert.equal(file?.invalid?.code, "invalid_server_url");
  assert.equal(js?.invalid?.code, "invalid_server_url");
  assert.equal(garbage?.invalid?.code, "invalid_server_url");
  assert.equal(creds?.invalid?.code, "credentials_in_url");
  assert.equal(creds?.displayUrl, "https://mcp.example");
  assert.ok(!JSON.stringify(creds).includes("hunter2"), "the password is kept nowhere");
  assert.equal(creds?.url, "");
});

test("[ACP-mcp-servers-hostile-name] control, escape and bidi characters are removed from names; long names are cut", () => {
  const [server, long, empty] = readSessionServers([
    {
      type: "http",
      name: "evil\u001b[31m\u202eeman\r\nNext",
      url: "https://m.example/mcp",
      headers: [],
    },
    { type: "http", name: "x".repeat(10_000), url: "https://m.example/2", headers: [] },
    { type: "http", name: "\u0007\u0008", url: "https://m.example/3", headers: [] },
  ]);
  assert.ok(!UNSAFE.test(server?.name ?? ""), JSON.stringify(server?.name));
  assert.match(server?.name ?? "", /^evil.*eman.*Next$/);
  assert.ok((long?.name.length ?? 0) <= 101);
  assert.equal(empty?.name, "unnamed");
});

test("[ACP-mcp-servers-display-url] the shown URL has no query (it may carry a key) and no fragment; the key keeps the query", () => {
  const [server] = readSessionServers([
    { type: "http", name: "q", url: "https://m.example/mcp?api_key=sk-123#frag", headers: [] },
  ]);
  assert.equal(server?.displayUrl, "https://m.example/mcp?…");
  assert.equal(server?.url, "https://m.example/mcp?api_key=sk-123");
});

test("[ACP-mcp-servers-headers] an Authorization header marks the server client-managed; unsafe header names or values are dropped", () => {
  const [managed, plain] = readSessionServers([
    {
      type: "http",
      name: "m",
      url: "https://m.example/mcp",
      headers: [
        { name: "authorization", value: "Bearer from-the-client" },
        { name: "X-Split", value: "a\r\nInjected: yes" },
        { name: "Bad Name", value: "v" },
        { name: "X-Ok", value: "fine" },
        "junk",
      ],
    },
    { type: "http", name: "p", url: "https://m.example/2", headers: "nope" },
  ]);
  assert.equal(managed?.clientManaged, true);
  assert.deepEqual(
    managed?.headers.map((h) => h.name),
    ["authorization", "X-Ok"],
  );
  assert.equal(plain?.clientManaged, false);
  assert.deepEqual(plain?.headers, []);
});

test("[ACP-mcp-servers-many] hundreds of servers: the first 32 are managed, the rest are marked too_many_servers", () => {
  const many = Array.from({ length: 500 }, (_, i) => ({
    type: "http",
    name: `s${i}`,
    url: `https://m.example/${i}`,
    headers: [],
  }));
  const servers = readSessionServers(many);
  assert.equal(servers.filter((s) => !s.invalid).length, 32);
  assert.equal(servers.filter((s) => s.invalid?.code === "too_many_servers").length, 468);
  assert.equal(readSessionServers(many, 3).filter((s) => !s.invalid).length, 3);
});
