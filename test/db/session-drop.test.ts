/**
 * A session whose connection dies while it opens (the server restarted, pg_terminate_backend, a proxy cut it):
 * `Database.session()` rejects with a typed error and the process lives on. pg emits 'error' on a checked-out
 * client when its connection ends, beside failing the running query; pg-pool removes its own listener at checkout,
 * so a client without ours crashed the process (seen in [RAP-fault-injection] at a PostgreSQL restart: a runtime
 * exited with "Unhandled 'error' event … Connection terminated unexpectedly").
 *
 * The cut is placed exactly: a TCP proxy in front of the test server closes both sides when the session's first
 * statement (`SELECT pg_backend_pid()`) passes through it.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createConnection, createServer, type Socket } from "node:net";
import { after, test } from "node:test";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";

const PG = await testPostgres();

/** A proxy to `target` that, once armed, cuts a connection when `marker` passes from the client. */
async function cuttingProxy(target: URL, marker: string) {
  const sockets = new Set<Socket>();
  let armed = false;
  const { port, hostname } = target;
  const server = createServer((client) => {
    const upstream = createConnection(Number(port), hostname);
    sockets.add(client).add(upstream);
    client.on("error", () => {});
    upstream.on("error", () => {});
    client.on("data", (chunk: Buffer) => {
      if (armed && chunk.includes(marker)) {
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    port: (server.address() as { port: number }).port,
    armedOnce: false,
    arm: () => {
      armed = true;
    },
  };
}

test("[DB-session-drop-no-crash] a connection that dies while a session opens: session() rejects with database_unavailable, the process does not crash", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = new URL(await PG.freshDatabase());
  const proxy = await cuttingProxy(url, "pg_backend_pid");
  url.port = String(proxy.port);
  // In a process of its own: an unhandled 'error' event ends that process, and the test reads how it ended.
  const script = `
    const { openDatabase } = await import(${JSON.stringify(new URL("../../src/db/index.ts", import.meta.url).href)});
    const db = await openDatabase(${JSON.stringify(url.href)}, { component: "t", migrations: [] });
    console.log("opened");
    await new Promise((r) => process.stdin.once("data", r)); // the proxy is armed
    const error = await db.session().then(() => undefined, (e) => e);
    await new Promise((r) => setTimeout(r, 200)); // a late 'error' event would land here
    console.log(JSON.stringify({ name: error?.name, code: error?.code }));
    await db.close();
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => {
    stdout += c;
    if (stdout.startsWith("opened\n") && !proxy.armedOnce) {
      proxy.armedOnce = true;
      proxy.arm();
      child.stdin.end("go\n");
    }
  });
  child.stderr.on("data", (c) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  assert.doesNotMatch(stderr, /Unhandled 'error' event/, stderr);
  assert.equal(code, 0, stderr);
  assert.deepEqual(JSON.parse(stdout.slice("opened\n".length)), {
    name: "DatabaseError",
    code: "database_unavailable",
  });
});
