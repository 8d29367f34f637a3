/**
 * The one check of an MCP server URL (canonicalMcpServerUrl): a table of hostile and ordinary inputs, and the same
 * check seen through each caller (CLI, ACP `session/new`, RAP bridge, MCP client provider). The AHP host bridge's
 * view is in test/ahp/host-mcp-server-url.test.ts (it needs a session).
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { readSessionServers } from "../../src/acp/agent/mcp/servers.ts";
import { mcpServerUrl } from "../../src/cli/commands/mcp.ts";
import {
  agentAuthProvider,
  canonicalMcpServerUrl,
  displayMcpServerUrl,
  McpAuthError,
  McpServerUrlError,
} from "../../src/mcp/index.ts";
import { McpBridgeError, mcpBridgeToolset } from "../../src/rap/mcp-bridge/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

const SECRET = "s3cret-Zq9";

/** [input, expected code] for inputs every caller refuses; every string carries SECRET where a secret could hide. */
const REFUSED: [unknown, string][] = [
  [undefined, "invalid_server_url"],
  [null, "invalid_server_url"],
  [42, "invalid_server_url"],
  [{ href: `https://mcp.example.com/${SECRET}` }, "invalid_server_url"],
  [["https://mcp.example.com/mcp"], "invalid_server_url"],
  ["", "invalid_server_url"],
  ["   ", "invalid_server_url"],
  [`not a url ${SECRET}`, "invalid_server_url"],
  [`//mcp.example.com/${SECRET}`, "invalid_server_url"],
  [`/mcp/${SECRET}`, "invalid_server_url"],
  [`javascript:alert('${SECRET}')`, "invalid_server_url"],
  [`JaVaScRiPt:alert('${SECRET}')`, "invalid_server_url"],
  [`file:///etc/${SECRET}`, "invalid_server_url"],
  [`data:text/html,${SECRET}`, "invalid_server_url"],
  [`ftp://mcp.example.com/${SECRET}`, "invalid_server_url"],
  [`ws://127.0.0.1/${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com/${"a".repeat(2100)}${SECRET}`, "invalid_server_url"],
  // The parser drops tabs and newlines anywhere: "exa\nmple.com" would name a host nobody reads.
  [`https://exa\nmple.com/${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com\t/${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com/\u0000${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com/\u001b[2J${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com/\u202e${SECRET}`, "invalid_server_url"],
  [`https://mcp.\u200bexample.com/${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com/a b${SECRET}`, "invalid_server_url"],
  // "\" is "/" to the parser: this names evil.example, not good.example.
  [`https://evil.example\\@good.example/${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com./${SECRET}`, "invalid_server_url"],
  [`https://mcp.example.com:99999/${SECRET}`, "invalid_server_url"],
  // IPv6 zone identifiers are not in URLs (WHATWG refuses them).
  [`http://[fe80::1%25eth0]/${SECRET}`, "invalid_server_url"],
  [`https://user:${SECRET}@mcp.example.com/mcp`, "server_url_credentials"],
  [`https://${SECRET}@mcp.example.com/mcp`, "server_url_credentials"],
  [`https://${SECRET}:@mcp.example.com/mcp`, "server_url_credentials"],
  // Default-ignorable code points the IDNA mapping drops from a host without a trace (combining grapheme joiner,
  // variation selectors, Hangul fillers that render as a blank): the stored host is not the text a person read.
  [`https://exa\u034fmple.com/${SECRET}`, "invalid_server_url"],
  [`https://exa\ufe0fmple.com/${SECRET}`, "invalid_server_url"],
  [`https://exa\u3164mple.com/${SECRET}`, "invalid_server_url"],
  [`https://exa\u{e0100}mple.com/${SECRET}`, "invalid_server_url"],
  // A percent-encoded host is decoded by the parser: "mcp.example.com%2eevil.example" names a host of evil.example.
  [`https://mcp.example.com%2eevil.example/${SECRET}`, "invalid_server_url"],
  [`https://%6dcp.example.com/${SECRET}`, "invalid_server_url"],
  // Without "//" (or with three) RFC 3986 reads a path and no host, WHATWG reads a host: two readings, refused.
  [`https:mcp.example.com/${SECRET}`, "invalid_server_url"],
  [`https:/mcp.example.com/${SECRET}`, "invalid_server_url"],
  [`https:///mcp.example.com/${SECRET}`, "invalid_server_url"],
  [`http:127.0.0.1/${SECRET}`, "invalid_server_url"],
  [`http://user:${SECRET}@127.0.0.1:1/mcp`, "server_url_credentials"],
  [`http://mcp.example.com/${SECRET}`, "insecure_server_url"],
  [`HTTP://MCP.EXAMPLE.COM/${SECRET}`, "insecure_server_url"],
  [`http://localhost.evil.example/${SECRET}`, "insecure_server_url"],
  [`http://127.0.0.1.evil.example/${SECRET}`, "insecure_server_url"],
  // A resolver may send *.localhost to DNS; an IPv4-mapped address is a disguise of loopback, not a spelling of it.
  [`http://tools.localhost/${SECRET}`, "insecure_server_url"],
  [`http://[::ffff:127.0.0.1]/${SECRET}`, "insecure_server_url"],
  [`http://0.0.0.0/${SECRET}`, "insecure_server_url"],
  [`http://[::]/${SECRET}`, "insecure_server_url"],
  [`http://128.0.0.1/${SECRET}`, "insecure_server_url"],
  [`http://10.0.0.1/${SECRET}`, "insecure_server_url"],
];

/** [input, canonical URI]: scheme and host lower-cased, fragment dropped, default port dropped, path kept. */
const ACCEPTED: [string | URL, string][] = [
  ["https://mcp.example.com/mcp", "https://mcp.example.com/mcp"],
  ["HTTPS://MCP.Example.COM/Tools/MCP", "https://mcp.example.com/Tools/MCP"],
  ["https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp"],
  ["https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"],
  ["https://mcp.example.com:8443/mcp", "https://mcp.example.com:8443/mcp"],
  ["https://mcp.example.com", "https://mcp.example.com/"],
  ["https://mcp.example.com/mcp/", "https://mcp.example.com/mcp/"],
  ["  https://mcp.example.com/mcp  ", "https://mcp.example.com/mcp"],
  ["http://127.0.0.1:8931/mcp", "http://127.0.0.1:8931/mcp"],
  ["http://127.9.8.7/mcp", "http://127.9.8.7/mcp"],
  ["http://127.1/mcp", "http://127.0.0.1/mcp"],
  ["http://localhost:3000/mcp", "http://localhost:3000/mcp"],
  ["HTTP://LOCALHOST/mcp", "http://localhost/mcp"],
  ["http://[::1]:8931/mcp", "http://[::1]:8931/mcp"],
  ["http://[0:0:0:0:0:0:0:1]/mcp", "http://[::1]/mcp"],
  ["https://[2001:db8::1]/mcp", "https://[2001:db8::1]/mcp"],
  // An IDN homograph (Cyrillic "а") becomes its punycode: what is stored and shown is not the name it imitates.
  ["https://\u0430pple.com/mcp", "https://xn--pple-43d.com/mcp"],
  [new URL("https://mcp.example.com/mcp#x"), "https://mcp.example.com/mcp"],
];

function assertRefused(error: unknown, code: string, label: string): void {
  assert.ok(
    error instanceof McpServerUrlError,
    `${label}: a typed McpServerUrlError, got ${error}`,
  );
  assert.ok(error instanceof McpAuthError);
  assert.equal(error.code, code, label);
  assert.ok(!error.message.includes(SECRET), `${label}: the input is not echoed`);
  assert.ok(!error.message.includes("evil"), `${label}: nor its host`);
  assert.ok(/give|type|use|URLs use/i.test(error.message), `${label}: says what to do`);
}

test("[MCP-server-url] hostile and unusable inputs are typed errors with stable codes that never repeat the URL", () => {
  for (const [input, code] of REFUSED) {
    for (const query of ["refuse", "allow"] as const) {
      let caught: unknown;
      try {
        canonicalMcpServerUrl(input, { query });
      } catch (error) {
        caught = error;
      }
      assertRefused(caught, code, `${JSON.stringify(String(input)).slice(0, 80)} (query ${query})`);
    }
  }
});

test("[MCP-server-url] the canonical URI: scheme and host lower-cased, fragment and default port dropped, the path kept as given", () => {
  for (const [input, canonical] of ACCEPTED) {
    assert.equal(canonicalMcpServerUrl(input).href, canonical, String(input));
  }
  const given = new URL("https://mcp.example.com/mcp#x");
  canonicalMcpServerUrl(given);
  assert.equal(given.hash, "#x", "the caller's URL object is not changed");
});

test("[MCP-server-url] a query is refused by default (empty `?` included), allowed when the caller says so, and then shown as ?…", () => {
  for (const input of [
    `https://mcp.example.com/mcp?api_key=${SECRET}`,
    "https://mcp.example.com/mcp?",
    `https://mcp.example.com/mcp?${SECRET}#frag`,
    new URL(`http://127.0.0.1:1/mcp?token=${SECRET}`),
  ]) {
    let caught: unknown;
    try {
      canonicalMcpServerUrl(input);
    } catch (error) {
      caught = error;
    }
    assertRefused(caught, "server_url_query", String(input));
    assert.equal((caught as McpServerUrlError).origin?.includes(SECRET), false);
  }
  const kept = canonicalMcpServerUrl(`https://MCP.example.com/mcp?api_key=${SECRET}#frag`, {
    query: "allow",
  });
  assert.equal(kept.href, `https://mcp.example.com/mcp?api_key=${SECRET}`);
  assert.equal(displayMcpServerUrl(kept), "https://mcp.example.com/mcp?…");
  assert.equal(displayMcpServerUrl("https://mcp.example.com/mcp"), "https://mcp.example.com/mcp");
  assert.equal(
    displayMcpServerUrl("https://\u0430pple.com/mcp"),
    "https://xn--pple-43d.com/mcp",
    "a homograph is shown as punycode",
  );
  assert.ok(displayMcpServerUrl(`https://x.example/${"p".repeat(400)}`).length <= 301);
});

test("[MCP-server-url] the error names the server's origin (safe to show) but never userinfo, path, query or fragment; messages say which URL", () => {
  let caught: unknown;
  try {
    canonicalMcpServerUrl(`https://bob:${SECRET}@MCP.example.com:8443/p/${SECRET}?q=${SECRET}`, {
      subject: "The URL of the MCP server “github”",
    });
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof McpServerUrlError);
  assert.equal(caught.origin, "https://mcp.example.com:8443");
  assert.match(caught.message, /^The URL of the MCP server “github” must not carry a user name/);
  assert.ok(!JSON.stringify(caught).includes(SECRET));
});

test("[MCP-server-url-cli] the CLI's <server-url> goes through the one check: control characters, an empty query, a trailing-dot host and a backslash are usage errors with the check's codes", () => {
  for (const [input, code] of [
    [`https://mcp.exa\tmple.com/${SECRET}`, "invalid_server_url"],
    ["https://mcp.example.com/mcp?", "server_url_query"],
    ["https://mcp.example.com./mcp", "invalid_server_url"],
    ["https://evil.example\\@good.example/mcp", "invalid_server_url"],
    [`http://[::ffff:127.0.0.1]/${SECRET}`, "insecure_server_url"],
  ] as const) {
    assert.throws(
      () => mcpServerUrl(input),
      (error: unknown) =>
        (error as { code?: string }).code === code &&
        !(error as Error).message.includes(SECRET) &&
        !(error as Error).message.includes("evil"),
      input,
    );
  }
  assert.equal(mcpServerUrl(" HTTP://LocalHost:1/mcp#x ").href, "http://localhost:1/mcp");
});

test("[MCP-server-url-acp] ACP session/new servers: plain http off loopback is not managed (a token would cross the network unencrypted), nor a URL the parser would read as another host; a query is kept and shown as ?…", () => {
  const [insecure, disguised, newline, keyed, local] = readSessionServers([
    { type: "http", name: "plain", url: `http://mcp.example.com/${SECRET}`, headers: [] },
    { type: "http", name: "near", url: "http://localhost.evil.example/mcp", headers: [] },
    { type: "sse", name: "nl", url: "https://exa\nmple.com/mcp", headers: [] },
    { type: "http", name: "keyed", url: `https://mcp.example.com/mcp?key=${SECRET}`, headers: [] },
    { type: "http", name: "local", url: "http://LOCALHOST:9/mcp#x", headers: [] },
  ]);
  assert.equal(insecure?.invalid?.code, "insecure_server_url");
  assert.equal(insecure?.url, "");
  assert.equal(insecure?.displayUrl, "http://mcp.example.com");
  assert.equal(disguised?.invalid?.code, "insecure_server_url");
  assert.equal(newline?.invalid?.code, "invalid_server_url");
  assert.equal(newline?.url, "");
  assert.equal(newline?.displayUrl, "(unusable URL)", "not the host the parser would have read");
  assert.equal(keyed?.invalid, undefined);
  assert.equal(keyed?.url, `https://mcp.example.com/mcp?key=${SECRET}`);
  assert.equal(keyed?.displayUrl, "https://mcp.example.com/mcp?…");
  assert.equal(local?.invalid, undefined);
  assert.equal(local?.url, "http://localhost:9/mcp");
  for (const s of [insecure, disguised, newline]) {
    assert.ok(!JSON.stringify(s).includes(SECRET));
    assert.match(s?.invalid?.message ?? "", /“(plain|near|nl)”/);
  }
});

test("[MCP-server-url-rap] the RAP bridge refuses at construction what the one check refuses (before any request), with its own error class", async () => {
  for (const [serverUrl, code] of [
    [`https://exa\nmple.com/${SECRET}`, "invalid_server_url"],
    [`http://[::ffff:127.0.0.1]:1/${SECRET}`, "invalid_server_url"],
    ["https://mcp.example.com./mcp", "invalid_server_url"],
    [`https://mcp.example.com/mcp?k=${SECRET}`, "server_url_query"],
  ] as const) {
    const error = await mcpBridgeToolset({ serverUrl, publicBaseUrl: "http://127.0.0.1:1" }).then(
      () => assert.fail("built"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof McpBridgeError, String(error));
    assert.equal(error.code, code, serverUrl);
    assert.ok(!error.message.includes(SECRET));
  }
});

test("[MCP-server-url-provider] agentAuthProvider refuses a plain-http server off loopback (its tokens would cross the network unencrypted) and keeps a query (the host configured it)", () => {
  const store = new MemoryCredentialStore();
  for (const serverUrl of [`http://mcp.example.com/${SECRET}`, "https://exa\nmple.com/mcp"]) {
    assert.throws(
      () => agentAuthProvider({ serverUrl, store, subject: "alice" }),
      (error: unknown) =>
        error instanceof McpAuthError &&
        error.code === "invalid_server_url" &&
        !error.message.includes(SECRET),
      serverUrl,
    );
  }
  const keyed = agentAuthProvider({
    serverUrl: "https://mcp.example.com/mcp?tenant=a",
    store,
    subject: "alice",
  });
  assert.equal(keyed.canonicalUri, "https://mcp.example.com/mcp?tenant=a");
});

test("[MCP-server-url-provider] a kept query (it may be a key) never reaches the provider's error messages: they show the URL as ?…", async () => {
  const store = new MemoryCredentialStore();
  const serverUrl = `https://mcp.example.com/mcp?api_key=${SECRET}`;
  const cases: [string, Parameters<ReturnType<typeof agentAuthProvider>["stepUp"]>[0], object][] = [
    ["login_required", { requiredScope: "read" }, {}],
    ["step_up_exhausted", { requiredScope: "read" }, { maxStepUps: 0 }],
    [
      "resource_metadata_cross_origin",
      { requiredScope: "read", resourceMetadataUrl: new URL("https://other.example/prm") },
      {},
    ],
  ];
  for (const [code, challenge, extra] of cases) {
    const provider = agentAuthProvider({ serverUrl, store, subject: "alice", ...extra });
    const error = await provider.stepUp(challenge).then(
      () => assert.fail("stepped up"),
      (e: unknown) => e,
    );
    assert.ok(error instanceof McpAuthError, String(error));
    assert.equal(error.code, code);
    assert.ok(!error.message.includes(SECRET), `${code}: ${error.message}`);
    assert.match(error.message, /https:\/\/mcp\.example\.com\/mcp\?…/, code);
  }
});

test("[MCP-server-url-acp] a server the client authenticates itself (its own Authorization header) over plain http stays the client's business: client_managed, not an insecure_server_url error (the kit sends it no token)", () => {
  const headers = [{ name: "Authorization", value: `Bearer ${SECRET}` }];
  const [lan, broken] = readSessionServers([
    { type: "http", name: "lan", url: "http://192.168.1.5:8080/mcp#x", headers },
    { type: "http", name: "broken", url: "http://exa\nmple.com/mcp", headers },
  ]);
  assert.equal(lan?.invalid, undefined, lan?.invalid?.message);
  assert.equal(lan?.clientManaged, true);
  assert.equal(lan?.url, "http://192.168.1.5:8080/mcp");
  assert.equal(lan?.displayUrl, "http://192.168.1.5:8080/mcp");
  // Only the plain-http rule gives way: a URL the parser would read as another host is still refused.
  assert.equal(broken?.invalid?.code, "invalid_server_url");
});
