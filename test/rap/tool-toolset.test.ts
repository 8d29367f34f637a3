import assert from "node:assert/strict";
import { test } from "node:test";
import { createToolServer, ToolConfigError } from "../../src/rap/tool/index.ts";
import { ToolsetSchema } from "../../src/rap/wire.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { ECHO, startTool } from "./tool-fixture.ts";

const provider = {
  issuer: "https://login.example.com",
  client: { clientId: "rap-tool" },
  scope: "repo:read",
};

test("[RAP-toolset-validated] the discovery document is valid, points at /invoke, and flags requiresAuth", async () => {
  const { url } = await startTool({
    operations: [
      { ...ECHO, annotations: { readOnly: true, "x-acme-tier": "free" } },
      {
        ...ECHO,
        name: "private_echo",
        requiresAuth: "github",
        displayScript: '"echo " + args.text',
      },
    ],
    providers: { github: provider },
    store: new MemoryCredentialStore(),
  });
  const response = await fetch(`${url}/.well-known/rap-toolset`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const document = ToolsetSchema.parse(await response.json());
  assert.equal(document.endpoint, `${url}/invoke`);
  assert.equal(document.name, "test-tools");
  assert.deepEqual(
    document.tools.map((t) => [t.name, t.annotations]),
    [
      ["echo", { readOnly: true, "x-acme-tier": "free" }],
      ["private_echo", { requiresAuth: "github" }],
    ],
  );
  assert.deepEqual(document.tools[0]?.inputSchema, ECHO.inputSchema);
});

test("[RAP-toolset-validated] publicBaseUrl with a path prefix: routes and endpoint live under it", async () => {
  const tool = createToolServer({
    toolset: { name: "prefixed" },
    operations: [ECHO],
    publicBaseUrl: "https://tools.example.com/github/",
  });
  assert.equal(tool.toolset().endpoint, "https://tools.example.com/github/invoke");
});

test("[RAP-toolset-validated] configuration errors are startup errors", () => {
  const cases: [string, Parameters<typeof createToolServer>[0], string][] = [
    [
      "invalid inputSchema",
      { toolset: { name: "t" }, operations: [{ ...ECHO, inputSchema: { type: "strin" } }] },
      "input_schema_invalid",
    ],
    [
      "unknown keyword (typo)",
      {
        toolset: { name: "t" },
        operations: [{ ...ECHO, inputSchema: { type: "object", requried: ["x"] } }],
      },
      "input_schema_invalid",
    ],
    [
      "another draft",
      {
        toolset: { name: "t" },
        operations: [
          {
            ...ECHO,
            inputSchema: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" },
          },
        ],
      },
      "input_schema_invalid",
    ],
    [
      "duplicate operation",
      { toolset: { name: "t" }, operations: [ECHO, ECHO] },
      "duplicate_operation",
    ],
    [
      "unknown provider",
      {
        toolset: { name: "t" },
        operations: [{ ...ECHO, requiresAuth: "gitlab" }],
        store: new MemoryCredentialStore(),
      },
      "provider_unknown",
    ],
    [
      "annotation without requiresAuth",
      {
        toolset: { name: "t" },
        operations: [{ ...ECHO, annotations: { requiresAuth: "github" } }],
        providers: { github: provider },
      },
      "requires_auth_mismatch",
    ],
    [
      "no store",
      {
        toolset: { name: "t" },
        operations: [{ ...ECHO, requiresAuth: "github" }],
        providers: { github: provider },
      },
      "store_missing",
    ],
    [
      "http issuer off loopback",
      {
        toolset: { name: "t" },
        operations: [ECHO],
        providers: { github: { ...provider, issuer: "http://login.example.com" } },
      },
      "insecure_url",
    ],
    [
      "http redirect URI off loopback",
      {
        toolset: { name: "t" },
        operations: [{ ...ECHO, requiresAuth: "github" }],
        providers: { github: provider },
        store: new MemoryCredentialStore(),
        publicBaseUrl: "http://tools.example.com",
      },
      "insecure_url",
    ],
    [
      "empty toolset",
      { toolset: { name: "t" }, operations: [], publicBaseUrl: "https://tools.example.com" },
      "toolset_invalid",
    ],
    [
      "name too long",
      {
        toolset: { name: "t".repeat(200) },
        operations: [ECHO],
        publicBaseUrl: "https://tools.example.com",
      },
      "toolset_invalid",
    ],
    [
      "base URL with a query",
      {
        toolset: { name: "t" },
        operations: [ECHO],
        publicBaseUrl: "https://tools.example.com/?a=1",
      },
      "base_url_invalid",
    ],
  ];
  for (const [what, options, code] of cases) {
    assert.throws(
      () => createToolServer(options),
      (error: unknown) => {
        assert.ok(error instanceof ToolConfigError, what);
        assert.equal(error.code, code, what);
        return true;
      },
    );
  }
});

test("[RAP-toolset-validated] before a base URL is known the handler answers 503 instead of guessing from Host", async () => {
  const tool = createToolServer({ toolset: { name: "t" }, operations: [ECHO] });
  assert.throws(() => tool.toolset(), ToolConfigError);
  const { createServer } = await import("node:http");
  const server = createServer(tool.handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const response = await fetch(`http://127.0.0.1:${port}/.well-known/rap-toolset`);
  assert.equal(response.status, 503);
  await response.arrayBuffer();
  server.close();
});
