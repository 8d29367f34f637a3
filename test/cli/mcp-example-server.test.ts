import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import {
  Client,
  InsufficientScopeError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { agentAuthProvider } from "../../src/mcp/index.ts";
import { loadMcpServerSdk } from "../../src/mcp/sdk.ts";
import { findBearerChallenge, parseWwwAuthenticate } from "../../src/oauth/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { authorizeAndRedeem } from "../support/authorize.ts";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

interface Ready {
  event: string;
  url: string;
  issuer: string;
  scopes: string[];
  stepUpScope: string;
}

async function startExample(extra: string[] = []) {
  const cli = startCli(["mcp", "example-server", "--issuer", idp.issuer, ...extra], {
    AGENTAUTH_HOME: tempDir(),
  });
  const [line] = await cli.waitFor("stdout", /^\{.*\}\n/);
  return { cli, ready: JSON.parse(line) as Ready };
}

async function tokenFor(resource: string, scope: string): Promise<string> {
  const answer = await authorizeAndRedeem(idp.issuer, { resource, scope }, { resource });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.access_token as string;
}

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { authProvider: { token: async () => token } }),
  );
  return client;
}

const text = (result: { content?: unknown }) =>
  (result.content as { type: string; text: string }[])[0]?.text ?? "";

test("[CLI-mcp-example-server] the ready line names the URL; it is a protected MCP server: metadata, 401 challenge, whoami with the verified caller, publish behind a step-up scope; SIGTERM ends it (0)", {
  timeout: 60_000,
}, async (t) => {
  const { cli, ready } = await startExample();
  assert.equal(ready.event, "ready");
  assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.equal(ready.issuer, idp.issuer);
  assert.deepEqual(ready.scopes, ["read"]);
  assert.equal(ready.stepUpScope, "write");

  const metadata = await fetch(
    new URL("/.well-known/oauth-protected-resource/mcp", ready.url),
  ).then((r) => r.json());
  assert.equal(metadata.resource, ready.url);
  assert.deepEqual(metadata.authorization_servers, [idp.issuer]);
  assert.deepEqual(metadata.scopes_supported, ["read", "write"]);

  const bare = await fetch(ready.url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  assert.equal(bare.status, 401);
  await bare.arrayBuffer();
  const challenge = findBearerChallenge(
    parseWwwAuthenticate(bare.headers.get("www-authenticate") ?? ""),
  );
  assert.equal(challenge?.parameters.scope, "read");
  assert.equal(
    challenge?.parameters.resource_metadata,
    new URL("/.well-known/oauth-protected-resource/mcp", ready.url).href,
  );

  const reader = await connect(ready.url, await tokenFor(ready.url, "openid read"));
  t.after(() => reader.close());
  const tools = await reader.listTools();
  assert.deepEqual(tools.tools.map((tool) => tool.name).sort(), ["publish", "whoami"]);
  const who = JSON.parse(text(await reader.callTool({ name: "whoami", arguments: {} })));
  assert.equal(who.subject, "alice");
  assert.ok(who.scopes.includes("read"));
  assert.equal(who.clientId, "agentauth-cli");
  const refused = await reader.callTool({ name: "publish", arguments: {} }).then(
    () => assert.fail("publish needs the write scope"),
    (e: unknown) => e,
  );
  assert.ok(refused instanceof InsufficientScopeError, String(refused));
  assert.deepEqual(refused.requiredScope?.split(" ").sort(), ["read", "write"]);

  const writer = await connect(ready.url, await tokenFor(ready.url, "openid read write"));
  t.after(() => writer.close());
  assert.equal(
    text(await writer.callTool({ name: "publish", arguments: {} })),
    "published as alice",
  );

  // A token for another resource is refused: the audience is this server's URL.
  const other = await tokenFor("https://elsewhere.example.test/mcp", "openid read");
  await assert.rejects(connect(ready.url, other));

  cli.kill("SIGTERM");
  const exit = await cli.exited;
  assert.equal(exit.code, 0, exit.stderr);
  await assert.rejects(fetch(ready.url), "no longer listening");
});

test("[CLI-mcp-example-server-step-up] agentAuthProvider signs in on the 401 and steps up on publish's 403, against the example server", {
  timeout: 60_000,
}, async (t) => {
  const { cli, ready } = await startExample(["--scope", "read", "--step-up-scope", "admin"]);
  t.after(() => cli.kill("SIGTERM"));
  assert.equal(ready.stepUpScope, "admin");
  const asked: URL[] = [];
  const provider = agentAuthProvider({
    serverUrl: ready.url,
    store: new MemoryCredentialStore(),
    subject: "alice",
    clientFor: () => ({ clientId: "agentauth-cli" }),
    onAuthorizationUrl: async (url) => {
      asked.push(url);
      await (await fetch(url)).arrayBuffer();
    },
  });
  const client = new Client({ name: "agentauth-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(ready.url), {
      authProvider: provider,
      fetch: provider.fetch,
    }),
  );
  t.after(() => client.close());
  assert.equal(
    JSON.parse(text(await client.callTool({ name: "whoami", arguments: {} }))).subject,
    "alice",
  );
  const refused = await client.callTool({ name: "publish", arguments: {} }).then(
    () => assert.fail("publish needs admin"),
    (e: unknown) => e,
  );
  assert.ok(refused instanceof InsufficientScopeError, String(refused));
  await provider.stepUp(refused);
  assert.equal(
    text(await client.callTool({ name: "publish", arguments: {} })),
    "published as alice",
  );
  assert.equal(asked.length, 2, "one sign-in, one step-up");
  assert.ok(asked[1]?.searchParams.get("scope")?.split(" ").includes("admin"));
});

test("[CLI-mcp-example-server-input] missing or bad --issuer, a bad --port or scope, and a port in use: exit 2 or 1 with one sentence", async (t) => {
  const env = { AGENTAUTH_HOME: tempDir() };
  const missing = await runCli(["mcp", "example-server"], env);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /needs --issuer URL/);
  for (const issuer of [
    "ftp://127.0.0.1/",
    "http://idp.example.test",
    "https://u:pw-secret@idp.example.test",
  ]) {
    const bad = await runCli(["mcp", "example-server", "--issuer", issuer, "--json"], env);
    assert.equal(bad.code, 2, issuer);
    assert.equal(JSON.parse(bad.stdout).error.code, "invalid_issuer_url");
    assert.ok(!bad.stdout.includes("pw-secret"));
  }
  const port = await runCli(
    ["mcp", "example-server", "--issuer", idp.issuer, "--port", "http"],
    env,
  );
  assert.equal(port.code, 2);
  assert.match(port.stderr, /--port must be an integer from 0 to 65535/);
  const scope = await runCli(
    ["mcp", "example-server", "--issuer", idp.issuer, "--scope", 'read "quoted"'],
    env,
  );
  assert.equal(scope.code, 2);
  assert.match(scope.stderr, /--scope takes scope names/);

  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  t.after(() => taken.close());
  const inUse = await runCli(
    [
      "mcp",
      "example-server",
      "--issuer",
      idp.issuer,
      "--port",
      String((taken.address() as { port: number }).port),
      "--json",
    ],
    env,
  );
  assert.equal(inUse.code, 1, inUse.stderr);
  assert.equal(JSON.parse(inUse.stdout).error.code, "port_in_use");
});

test("[CLI-mcp-example-server-sdk-missing] without @modelcontextprotocol/server installed, loading it is a typed error that says what to install", async () => {
  const name = "@modelcontextprotocol/server-not-installed-here";
  const missing = await loadMcpServerSdk("The example MCP server", () => import(name), name).then(
    () => assert.fail("the package does not exist"),
    (e: unknown) => e as { code?: string; message?: string },
  );
  assert.equal(missing.code, "mcp_sdk_missing");
  assert.match(missing.message ?? "", /npm install @modelcontextprotocol\/server/);
  // Any other failure (a broken install) is not disguised as a missing package.
  const broken = new Error("boom");
  await assert.rejects(
    loadMcpServerSdk("The example MCP server", () => Promise.reject(broken)),
    (e) => e === broken,
  );
  // The control: the installed SDK loads.
  const sdk = await loadMcpServerSdk("The example MCP server");
  assert.equal(typeof sdk.createMcpHandler, "function");
});
