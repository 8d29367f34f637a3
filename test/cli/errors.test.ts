import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { after, test } from "node:test";
import { type CliIo, reportError } from "../../src/cli/io.ts";
import { describeSystemError } from "../../src/cli/system-errors.ts";
import { AgentAuthError } from "../../src/core/errors.ts";
import { runCli } from "../support/cli.ts";
import { closedPort } from "../support/closed-port.ts";
import { tempDir } from "../support/tmp.ts";

const STACK_FRAME = /^\s+at /m;

/** A real listener on a loopback port, closed when the file's tests end. */
async function occupiedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return address.port;
}

/** The error a real operation fails with. */
function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  assert.fail("expected the operation to fail");
}

async function listenError(port: number): Promise<unknown> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", resolve);
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(undefined)));
  });
}

test("[CLI-port-in-use] idp serve on a port in use says so and how to get a free one, exit 1", {
  timeout: 60_000,
}, async () => {
  const port = await occupiedPort();
  const result = await runCli(["idp", "serve", "--port", String(port)], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    `agentauth: port ${port} is in use; pass --port 0 for a free one. [port_in_use]\n`,
  );
});

test("[CLI-port-in-use] demo --port on a port in use says so, exit 1; --json gives the same as JSON", {
  timeout: 60_000,
}, async () => {
  const port = await occupiedPort();
  const result = await runCli(["demo", "--port", String(port), "--json"], {
    AGENTAUTH_HOME: tempDir(),
  });
  assert.equal(result.code, 1, result.stderr);
  // The demo's --port is the console's port; the demo names which part wanted it.
  assert.deepEqual(JSON.parse(result.stdout), {
    error: {
      code: "demo_port_taken",
      message: `Port ${port} (console) is in use; choose another --port, or 0 for any free port.`,
    },
  });
  assert.doesNotMatch(result.stderr, STACK_FRAME);
});

test("[CLI-system-errors] EADDRINUSE from a real listen names the port and the fix", async () => {
  const port = await occupiedPort();
  const text = describeSystemError(await listenError(port));
  assert.deepEqual(text, {
    code: "port_in_use",
    message: `port ${port} is in use; pass --port 0 for a free one.`,
  });
});

test("[CLI-system-errors] ENOENT, EISDIR and EACCES on files name the path and what to do", () => {
  const dir = tempDir();
  const missing = join(dir, "no-such-file");
  assert.deepEqual(describeSystemError(caught(() => readFileSync(missing))), {
    code: "not_found",
    message: `no such file or folder: ${missing}; check the path you passed.`,
  });
  const folder = join(dir, "folder");
  mkdirSync(folder);
  assert.equal(describeSystemError(caught(() => readFileSync(folder)))?.code, "is_a_folder");
  // EACCES as a non-root user would see it (the suite may run as root, where chmod does not stop reads).
  const denied = Object.assign(new Error("EACCES: permission denied, open '/etc/x'"), {
    code: "EACCES",
    syscall: "open",
    path: "/etc/x",
  });
  assert.match(
    describeSystemError(denied)?.message ?? "",
    /^permission denied on \/etc\/x; check the owner/,
  );
  const lowPort = Object.assign(new Error("listen EACCES"), {
    code: "EACCES",
    syscall: "listen",
    port: 80,
  });
  assert.equal(
    describeSystemError(lowPort)?.message,
    "port 80 needs privileges this process lacks; pass --port 0 for a free one (or a port above 1023).",
  );
});

test("[CLI-system-errors] a refused connection found in fetch's cause chain says what to check", async () => {
  const port = await occupiedPort();
  const closed = await closedPort();
  const error = await fetch(`http://127.0.0.1:${closed}/`).catch((e: unknown) => e);
  const text = describeSystemError(error);
  assert.equal(text?.code, "connection_refused");
  assert.match(text?.message ?? "", /^nothing is listening at 127\.0\.0\.1:\d+; check the URL/);
  assert.ok(port > 0);
});

test("[CLI-system-errors] unknown and hostile values are not described (the generic fallback applies)", () => {
  for (const value of [
    undefined,
    null,
    "EADDRINUSE",
    42,
    new Error("plain"),
    { code: "ERR_INVALID_URL" },
    { code: { toString: () => "EADDRINUSE" } },
    Object.assign(new Error("x"), { code: "EADDRINUSE", port: "\u001b[2J" }),
  ]) {
    const text = describeSystemError(value);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: detecting them is the point.
    if (text) assert.doesNotMatch(text.message, /[\u0000-\u001f]/);
  }
  const looped: { cause?: unknown } = {};
  looped.cause = looped;
  assert.equal(describeSystemError(looped), undefined);
});

test("[CLI-system-errors] an unexpected error is reported by class with what to do next; --json too", () => {
  const out: string[] = [];
  const io: CliIo = {
    stdout: (t) => out.push(`out:${t}`),
    stderr: (t) => out.push(`err:${t}`),
    env: {},
    interactive: false,
  };
  const secretish = new TypeError("Cannot read properties of undefined (token=abc123)");
  assert.equal(reportError(io, secretish), 1);
  assert.equal(reportError(io, secretish, { json: true }), 1);
  assert.deepEqual(out, [
    "err:agentauth: unexpected TypeError; run with AGENTAUTH_LOG_LEVEL=debug for details. [unexpected]\n",
    'out:{"error":{"code":"unexpected","message":"unexpected TypeError; run with AGENTAUTH_LOG_LEVEL=debug for details."}}\n',
  ]);
});

test("[CLI-system-errors] a typed error's message from a peer is printed without control characters", () => {
  const out: string[] = [];
  const io: CliIo = { stdout: () => {}, stderr: (t) => out.push(t), env: {}, interactive: false };
  reportError(
    io,
    new AgentAuthError("oauth_error", "The server said: \u001b]0;pwned\u0007 bad\u202e"),
  );
  assert.deepEqual(out, ["agentauth: The server said:  ]0;pwned  bad [oauth_error]\n"]);
});
