import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import type { InvocationAuth } from "../../src/rap/invocation-auth.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { echoTool, eventually, standInTool } from "../support/rap-tool-stand-in.ts";

const capture = (lines: Record<string, unknown>[]) => ({
  debug: () => {},
  info: (event: string, fields?: Record<string, unknown>) => void lines.push({ event, ...fields }),
  warn: (event: string, fields?: Record<string, unknown>) => void lines.push({ event, ...fields }),
  error: (event: string, fields?: Record<string, unknown>) => void lines.push({ event, ...fields }),
  child() {
    return this;
  },
});

const secret = () => new Secret(randomBytes(32).toString("base64url"));

async function setup(
  toolAuth: InvocationAuth | undefined,
  runtimeAuth: InvocationAuth | undefined,
) {
  const lines: string[] = [];
  const tool = await standInTool({ ...(toolAuth ? { auth: toolAuth } : {}) });
  const rt = await testRuntime({
    toolsetUrls: [],
    toolsets: [{ url: tool.origin, ...(runtimeAuth ? { auth: runtimeAuth } : {}) }],
    logger: {
      debug: () => {},
      info: (e, f) => void lines.push(JSON.stringify({ e, ...f })),
      warn: (e, f) => void lines.push(JSON.stringify({ e, ...f })),
      error: (e, f) => void lines.push(JSON.stringify({ e, ...f })),
      child() {
        return this;
      },
    },
  });
  return { tool, lines, ...rt };
}

for (const scheme of ["hmac-sha256", "bearer"] as const) {
  test(`[RAP-invoke-auth-${scheme === "bearer" ? "bearer" : "hmac"}] the runtime authenticates the toolset GET, /invoke, /cancel_tool_call and /close_thread with the configured ${scheme} secret`, async () => {
    const auth: InvocationAuth = { scheme, secret: secret() };
    const { tool, runtime } = await setup(auth, auth);
    assert.deepEqual(
      runtime.listTools().map((t) => t.name),
      ["echo"],
      "the toolset loaded through the authenticated GET",
    );
    const outcome = await runtime.invoke({
      groupId: "g",
      id: "c1",
      operation: "echo",
      arguments: { text: "hi" },
    });
    assert.equal(outcome.accepted, true);
    await runtime.invoke({ groupId: "g", id: "c2", operation: "echo", arguments: { text: "x" } });
    await runtime.cancelCall("g", "c1");
    await runtime.closeThread("g");
    assert.deepEqual(tool.refused, []);
    assert.deepEqual(
      tool.authenticated.map((r) => `${r.method} ${r.path}`),
      [
        "GET /.well-known/rap-toolset",
        "POST /invoke",
        "POST /invoke",
        "POST /cancel_tool_call",
        "POST /close_thread",
      ],
    );
  });
}

test("[RAP-invoke-auth-refused] a tool answering 401 ends the call at once with an error result that says the tool refused the runtime's credentials; never retried, no secret shown", async () => {
  const runtimeSecret = secret();
  const { tool, runtime, lines } = await setup(
    { scheme: "hmac-sha256", secret: secret() },
    { scheme: "hmac-sha256", secret: runtimeSecret },
  );
  // Discovery itself was refused: the toolset is reported as a failure naming the credentials.
  const failure = runtime.problems().failures[0];
  assert.equal(failure?.code, "rap_toolset_unreachable");
  assert.match(failure?.message ?? "", /refused the runtime's credentials/);
  // The toolset GET is signed once more in the next second (a restarted runtime's first GET can be a replay to the
  // tool); a wrong secret is refused both times, and nothing further is tried.
  assert.deepEqual(
    tool.refused.map((r) => r.reason),
    ["bad_signature", "bad_signature"],
  );
  assert.ok(!JSON.stringify(runtime.problems()).includes(runtimeSecret.reveal()));
  assert.ok(!lines.join("\n").includes(runtimeSecret.reveal()));
});

test("[RAP-invoke-auth-refused] an invocation answered 401 (no credentials configured) becomes an error result naming what to check, after exactly one attempt", async () => {
  const toolSecret = secret();
  // The toolset document is public here; only invocations are checked (so the catalog loads).
  const tool = await standInTool({});
  const lines: Record<string, unknown>[] = [];
  const rt = await testRuntime({ toolsetUrls: [tool.origin], logger: capture(lines) });
  tool.options.auth = { scheme: "bearer", secret: toolSecret };
  const outcome = await rt.runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.equal(outcome.accepted, false);
  const call = await eventually(async () => {
    const c = await rt.runtime.getCall("g", "c1");
    return c?.result ? c : undefined;
  }, "the error result");
  assert.equal(call.status, "failed");
  assert.equal(call.result?.isError, true);
  assert.match(call.result?.text ?? "", /^Error: /);
  assert.match(call.result?.text ?? "", /refused the runtime's credentials \(HTTP 401\)/);
  assert.match(call.result?.text ?? "", /secret/);
  assert.match(call.result?.text ?? "", /Bearer/, "names the scheme the tool asked for");
  assert.equal(tool.attempts.get("c1") ?? 0, 0, "the stand-in never reached its ack");
  assert.equal(tool.refused.filter((r) => r.path === "/invoke").length, 1, "one attempt only");
  const logged = lines.find((l) => l.event === "rap.runtime.invoke_failed");
  assert.equal(logged?.status, 401);
  assert.match(String(logged?.reason), /refused the runtime's credentials/);
  assert.ok(!JSON.stringify(lines).includes(toolSecret.reveal()));
});

test("[RAP-invoke-auth-hmac] a 5xx after the signature was accepted is retried with a fresh signature (not refused as a replay)", async () => {
  const auth: InvocationAuth = { scheme: "hmac-sha256", secret: secret() };
  const tool = await standInTool({ auth, ack: (_inv, attempt) => (attempt < 3 ? 503 : 200) });
  const rt = await testRuntime({ toolsetUrls: [], toolsets: [{ url: tool.origin, auth }] });
  const outcome = await rt.runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.deepEqual(tool.refused, []);
  assert.equal(tool.attempts.get("c1"), 3);
  assert.equal(outcome.accepted, true);
});

test("[RAP-invoke-auth-config] a toolset configured twice, or a URL that does not parse, is refused at creation with a typed error", async () => {
  const { createRuntime, MemoryRuntimeStore } = await import("../../src/rap/runtime/index.ts");
  const auth: InvocationAuth = { scheme: "bearer", secret: secret() };
  await assert.rejects(
    createRuntime({
      toolsetUrls: [],
      toolsets: [{ url: "not a url", auth }],
      store: new MemoryRuntimeStore(),
      secretKey: new Uint8Array(32),
    }),
    /not a URL/,
  );
  await assert.rejects(
    createRuntime({
      toolsetUrls: ["http://127.0.0.1:1"],
      toolsets: [{ url: "http://127.0.0.1:1", auth }],
      store: new MemoryRuntimeStore(),
      secretKey: new Uint8Array(32),
    }),
    (error: unknown) => {
      assert.match(String(error), /configured twice with different authentication/);
      assert.ok(!String(error).includes(auth.secret.reveal()));
      return true;
    },
  );
});

test("[RAP-invoke-auth-real-tool] against the real tool server (createToolServer with invocationAuth): the signed call completes; a runtime with the wrong secret gets an error result and the handler never runs", async () => {
  const { startTool, ECHO } = await import("./tool-fixture.ts");
  const shared = secret();
  let runs = 0;
  const { url } = await startTool({
    operations: [
      {
        ...ECHO,
        handler: async (ctx) => {
          runs++;
          return ECHO.handler(ctx);
        },
      },
    ],
    invocationAuth: { scheme: "hmac-sha256", secret: shared },
  });
  const good = await testRuntime({
    toolsets: [{ url, auth: { scheme: "hmac-sha256", secret: shared } }],
  });
  await good.runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "hi" },
  });
  const done = await good.runtime.waitForResult("g", "c1");
  assert.equal(done.result.text, "echo: hi");
  assert.equal(runs, 1);

  // Discovery is public on the tool side, so the catalog loads; the invocation itself is refused.
  const wrong = await testRuntime({
    toolsets: [{ url, auth: { scheme: "hmac-sha256", secret: secret() } }],
  });
  const outcome = await wrong.runtime.invoke({
    groupId: "g",
    id: "c2",
    operation: "echo",
    arguments: { text: "no" },
  });
  assert.equal(outcome.accepted, false);
  const refused = await wrong.runtime.waitForResult("g", "c2");
  assert.equal(refused.status, "failed");
  assert.match(refused.result.text, /refused the runtime's credentials \(HTTP 401\)/);
  assert.match(refused.result.text, /RAP-HMAC-SHA256/);
  await wrong.runtime.closeThread("g");
  assert.equal(runs, 1, "the handler never ran for the refused call");
});

test("[RAP-runtime-auth-same-origin] an endpoint on another origin than the toolset URL gets no credentials unless authOrigins names that origin", async () => {
  const auth: InvocationAuth = { scheme: "bearer", secret: secret() };
  const elsewhere = await standInTool({ auth });
  // The toolset document (public here) names an endpoint on another server: a spoofed or compromised toolset.
  const toolset = await standInTool({
    toolset: () => ({ name: "split", endpoint: `${elsewhere.origin}/invoke`, tools: [echoTool] }),
  });
  const withheld = await testRuntime({
    toolsetUrls: [],
    toolsets: [{ url: toolset.origin, auth }],
  });
  const first = await withheld.runtime.invoke({
    groupId: "g",
    id: "c1",
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.equal(first.accepted, false);
  assert.deepEqual(
    elsewhere.refused.map((r) => `${r.path} ${r.reason}`),
    ["/invoke missing"],
    "the other origin received no credentials",
  );
  const call = await eventually(async () => {
    const c = await withheld.runtime.getCall("g", "c1");
    return c?.result ? c : undefined;
  }, "the error result");
  assert.match(call.result?.text ?? "", /^Error: /);
  assert.match(call.result?.text ?? "", /another origin than its toolset/);
  assert.match(call.result?.text ?? "", /authOrigins/);
  assert.ok(!(call.result?.text ?? "").includes(auth.secret.reveal()));

  const trusted = await testRuntime({
    toolsetUrls: [],
    toolsets: [{ url: toolset.origin, auth, authOrigins: [elsewhere.origin] }],
  });
  const second = await trusted.runtime.invoke({
    groupId: "g",
    id: "c2",
    operation: "echo",
    arguments: { text: "hi" },
  });
  assert.equal(second.accepted, true);
  assert.deepEqual(
    elsewhere.authenticated.map((r) => `${r.method} ${r.path}`),
    ["POST /invoke"],
    "sent once the origin is named",
  );
});

test("[RAP-runtime-auth-same-origin] authOrigins entries must be origins (scheme://host[:port])", async () => {
  const auth: InvocationAuth = { scheme: "bearer", secret: secret() };
  await assert.rejects(
    testRuntime({
      toolsetUrls: [],
      toolsets: [{ url: "http://127.0.0.1:1", auth, authOrigins: ["http://127.0.0.1:2/invoke"] }],
    }),
    (error: Error) => error instanceof RangeError && /authOrigins/.test(error.message),
  );
});

test("[RAP-invoke-auth-hmac-restart] a runtime restarted within the same second still loads a toolset whose tool refuses replayed signatures (the GET is re-signed in a later second)", async () => {
  const { fetchToolset } = await import("../../src/rap/runtime/discovery.ts");
  const auth: InvocationAuth = { scheme: "hmac-sha256", secret: secret() };
  const tool = await standInTool({ tools: [echoTool], auth });
  const options = { authFor: () => auth, allowInsecureHttp: true };
  // Two starts inside one second sign the same GET identically; the tool accepts a signature once.
  while (Date.now() % 1000 > 300) await new Promise((resolve) => setTimeout(resolve, 20));
  const first = await fetchToolset(tool.origin, options);
  const second = await fetchToolset(tool.origin, options);
  assert.deepEqual(
    second.tools.map((t) => t.name),
    first.tools.map((t) => t.name),
  );
  assert.ok(tool.refused.length <= 1, "at most the one replayed attempt was refused");
});
