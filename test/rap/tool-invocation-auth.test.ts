import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { type InvocationAuth, invocationAuthHeaders } from "../../src/rap/invocation-auth.ts";
import { createToolServer } from "../../src/rap/tool/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { ECHO, invocation, startTool } from "./tool-fixture.ts";

const secret = new Secret("tool-invocation-secret-tool-invocation-secret-0123");
const hmac: InvocationAuth = { scheme: "hmac-sha256", secret };
const bearer: InvocationAuth = { scheme: "bearer", secret };
const sink = await callbackSink();
let handled = 0;
const COUNTED = {
  ...ECHO,
  handler: async (ctx: { arguments: Record<string, unknown> }) => {
    handled++;
    return ECHO.handler(ctx);
  },
};
const signed = await startTool({ operations: [COUNTED], invocationAuth: hmac });
const bearerTool = await startTool({ operations: [COUNTED], invocationAuth: bearer });
const ENDPOINTS = ["/invoke", "/close_thread", "/cancel_tool_call"] as const;
/** The Host a raw request to the signed tool carries, which the signature covers. */
const HOST = new URL(signed.url).host;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A raw request (fetch cannot set Host), so every header is exactly what the test says. */
function send(
  base: string,
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function bodyFor(path: string, id = `call_${Math.random().toString(36).slice(2)}`): string {
  if (path === "/invoke") return JSON.stringify(invocation(sink.url, { id }));
  if (path === "/close_thread") return JSON.stringify({ thread_id: "thread_1" });
  return JSON.stringify({ thread_id: "thread_1", tool_call_id: id });
}

async function assertNothingHappened(before: number): Promise<void> {
  await signed.tool.settled();
  await bearerTool.tool.settled();
  assert.equal(handled, before, "no operation handler ran");
  assert.equal(sink.attempts.length, 0, "the callback receiver saw nothing");
}

function assertUnauthorized(answer: Answer, reason: string, scheme: RegExp): void {
  assert.equal(answer.status, 401, answer.text);
  assert.match(String(answer.headers["www-authenticate"]), scheme);
  const parsed = JSON.parse(answer.text) as { error: string; reason: string; message: string };
  assert.equal(parsed.error, "unauthorized");
  assert.equal(parsed.reason, reason);
  assert.ok(!answer.text.includes(secret.reveal()));
}

test("[RAP-tool-invocation-auth-hmac] unsigned, forged, malformed, stale and replayed requests get 401 on all three endpoints and nothing else happens", async () => {
  sink.reset();
  const before = handled;
  for (const path of ENDPOINTS) {
    const body = bodyFor(path);
    const good = invocationAuthHeaders(hmac, { method: "POST", host: HOST, path, body });
    const cases: [string, Record<string, string>, string][] = [
      ["missing", {}, "missing"],
      ["forged", { ...good, "x-rap-signature": `v2=${"ab".repeat(32)}` }, "bad_signature"],
      [
        "other secret",
        invocationAuthHeaders(
          { scheme: "hmac-sha256", secret: new Secret("x".repeat(43)) },
          { method: "POST", host: HOST, path, body },
        ),
        "bad_signature",
      ],
      [
        "other path",
        invocationAuthHeaders(hmac, { method: "POST", host: HOST, path: "/elsewhere", body }),
        "bad_signature",
      ],
      ["malformed", { ...good, "x-rap-timestamp": "soon" }, "malformed"],
      ["oversized", { ...good, "x-rap-signature": `v2=${"a".repeat(8000)}` }, "malformed"],
      [
        "stale",
        invocationAuthHeaders(hmac, {
          method: "POST",
          host: HOST,
          path,
          body,
          now: Date.now() - 3_600_000,
        }),
        "stale",
      ],
      ["bearer instead", { authorization: `Bearer ${secret.reveal()}` }, "missing"],
    ];
    for (const [name, headers, reason] of cases) {
      const answer = await send(signed.url, path, body, headers);
      assertUnauthorized(answer, reason, /^RAP-HMAC-SHA256 /);
      assert.ok(answer.status === 401, `${path} ${name}`);
    }
  }
  await assertNothingHappened(before);
  assert.ok(signed.logs.some((l) => l.includes("rap.request.refused")));
  assert.ok(!signed.logs.some((l) => l.includes(secret.reveal())));
});

test("[RAP-tool-invocation-auth-replay] a correctly signed request is accepted once; the same request again is refused as replayed", async () => {
  sink.reset();
  for (const path of ENDPOINTS) {
    const body = bodyFor(path);
    const headers = invocationAuthHeaders(hmac, { method: "POST", host: HOST, path, body });
    assert.equal((await send(signed.url, path, body, headers)).status, 200);
    assertUnauthorized(
      await send(signed.url, path, body, headers),
      "replayed",
      /error="invalid_token"/,
    );
  }
  await sink.waitFor((m) => m.type === "tool_result");
  await signed.tool.settled();
  assert.equal(sink.messages.length, 1, "only the first invocation ran");
});

test("[RAP-tool-invocation-auth-bearer] a wrong or missing bearer gets 401 on all three endpoints; the right one is served", async () => {
  sink.reset();
  const before = handled;
  for (const path of ENDPOINTS) {
    for (const [headers, reason] of [
      [{}, "missing"],
      [{ authorization: "Bearer not-the-secret" }, "bad_signature"],
      [{ authorization: `Basic ${secret.reveal()}` }, "malformed"],
      [{ authorization: `Bearer ${"y".repeat(5000)}` }, "malformed"],
    ] as [Record<string, string>, string][]) {
      assertUnauthorized(
        await send(bearerTool.url, path, bodyFor(path), headers),
        reason,
        /^Bearer realm=/,
      );
    }
  }
  await assertNothingHappened(before);
  const body = bodyFor("/invoke");
  assert.equal(
    (await send(bearerTool.url, "/invoke", body, { authorization: `Bearer ${secret.reveal()}` }))
      .status,
    200,
  );
  await sink.waitFor((m) => m.type === "tool_result");
});

test("[RAP-tool-invocation-auth-unread-body] an unauthenticated upload is refused from its headers, before its body is read", async () => {
  const before = handled;
  const big = JSON.stringify({ pad: "z".repeat(900_000) });
  const answer = await send(signed.url, "/invoke", big, {});
  assertUnauthorized(answer, "missing", /RAP-HMAC-SHA256/);
  assert.equal(answer.headers.connection, "close");
  assert.equal(handled, before);
});

test("[RAP-tool-host-rebinding] a loopback tool refuses unknown Host names with 421 on every endpoint; its own names pass", async () => {
  sink.reset();
  const before = handled;
  const port = new URL(signed.url).port;
  for (const path of [...ENDPOINTS, "/.well-known/rap-toolset"]) {
    for (const host of [
      "evil.example",
      `evil.example:${port}`,
      "127.0.0.1:1",
      `localhost:${port}.evil.example`,
    ]) {
      const body = bodyFor(path);
      const answer = await send(signed.url, path, body, {
        host,
        ...invocationAuthHeaders(hmac, { method: "POST", host: HOST, path, body }),
      });
      assert.equal(answer.status, 421, `${path} with Host ${host}`);
      assert.equal(JSON.parse(answer.text).error, "misdirected_request");
    }
  }
  await assertNothingHappened(before);
  for (const host of [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `[::1]:${port}`,
    `LOCALHOST:${port}`,
  ]) {
    // Distinct bodies: an identical signed request inside the same second is a replay.
    const body = JSON.stringify({ thread_id: `thread_${host}` });
    const answer = await send(signed.url, "/close_thread", body, {
      host,
      ...invocationAuthHeaders(hmac, { method: "POST", host, path: "/close_thread", body }),
    });
    assert.equal(answer.status, 200, host);
  }
});

test("[RAP-tool-host-allowed] allowedHosts adds names to the loopback list", async () => {
  const { url } = await startTool({ operations: [ECHO], allowedHosts: ["tools.internal:8443"] });
  const ok = await send(url, "/close_thread", "{}", { host: "tools.internal:8443" });
  assert.equal(ok.status, 200);
  assert.equal(
    (await send(url, "/close_thread", "{}", { host: "other.internal:8443" })).status,
    421,
  );
});

test("[RAP-tool-oversized-headers] headers over Node's limit are answered 431 and the server keeps serving", async () => {
  const answer = await send(signed.url, "/invoke", "{}", {
    "x-rap-signature": "v".repeat(20_000),
  }).catch(() => ({ status: 431 }) as Answer);
  assert.equal(answer.status, 431);
  assert.equal((await send(signed.url, "/invoke", "{}", {})).status, 401);
});

test("[RAP-invocation-hmac-host-bound] the tool refuses a request signed for another tool's host, whatever Host it carries", async () => {
  sink.reset();
  const before = handled;
  const port = new URL(signed.url).port;
  for (const path of ENDPOINTS) {
    const body = bodyFor(path);
    // What tool B (another port, another name) could replay here after receiving it from the runtime.
    for (const host of ["127.0.0.1:1", "tool-b.example"]) {
      const forB = invocationAuthHeaders(hmac, { method: "POST", host, path, body });
      assertUnauthorized(
        await send(signed.url, path, body, forB),
        "bad_signature",
        /error="invalid_token"/,
      );
      const asB = await send(signed.url, path, body, { host, ...forB });
      assert.equal(asB.status, 421, `${path}: sent with Host ${host}`);
    }
    // Another of the tool's own names, signed for and sent with that name, is accepted.
    const own = `localhost:${port}`;
    const mine = await send(signed.url, path, body, {
      host: own,
      ...invocationAuthHeaders(hmac, { method: "POST", host: own, path, body }),
    });
    assert.equal(mine.status, 200, `${path} via ${own}`);
  }
  await signed.tool.settled();
  assert.equal(handled, before + 1, "only the invocation signed for this tool ran");
});

test("[RAP-invocation-hmac-host-bound] behind a proxy that rewrites Host, a signature for the publicBaseUrl host verifies", async () => {
  // The handler mounted on the application's own server, as behind a reverse proxy: no loopback Host list.
  const proxied = createToolServer({
    toolset: { name: "proxied" },
    operations: [COUNTED],
    invocationAuth: hmac,
    publicBaseUrl: "https://tools.example/rap",
  });
  const server = createServer(proxied.handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => {
    proxied.shutdown();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const path = "/rap/close_thread";
  const cases: [string, string, number][] = [
    // The runtime signed for tools.example; the proxy delivered it with the backend's Host.
    ["tools.example", new URL(origin).host, 200],
    ["tools.example", "tools.example", 200],
    // Signed for another tool: refused whatever Host comes with it.
    ["tools.other.example", "tools.other.example", 401],
    ["tools.other.example", new URL(origin).host, 401],
  ];
  for (const [signedFor, host, status] of cases) {
    const body = JSON.stringify({ thread_id: `thread_${signedFor}_${host}` });
    const answer = await send(origin, path, body, {
      host,
      ...invocationAuthHeaders(hmac, { method: "POST", host: signedFor, path, body }),
    });
    assert.equal(answer.status, status, `signed for ${signedFor}, sent with Host ${host}`);
  }
});
