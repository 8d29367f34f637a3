import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";
import { MAX_TIMER_MS, renewalDelayMs } from "../../src/ahp/client/renewal.ts";
import { CancelledError, listenOnLoopback } from "../../src/oauth/index.ts";
import { startProtectedApi } from "../../src/rap/example/index.ts";
import { useIdp } from "../support/idp.ts";

/** Sends a raw HTTP/1.1 request line that Node's parser accepts but WHATWG URL rejects; returns the status line. */
function rawRequest(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    );
    let data = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      data += chunk;
    });
    socket.on("end", () => resolve(data.split("\r\n")[0] ?? ""));
    socket.on("error", reject);
  });
}

test("[BAD-INPUT-request-target] request targets WHATWG URL cannot parse get 400 from the loopback listener, the IdP and the example API, which keep serving", async () => {
  const idp = await useIdp();
  const listener = await listenOnLoopback();
  const api = await startProtectedApi({ issuer: idp.issuer });
  try {
    const ports = [
      Number(new URL(listener.redirectUri).port),
      idp.port,
      Number(new URL(api.url).port),
    ];
    for (const port of ports) {
      for (const target of ["//[", "http://[/", "http://:99999/"]) {
        const status = await rawRequest(port, target);
        assert.match(status, /^HTTP\/1\.1 (400|404)/, `port ${port} target ${target}`);
      }
    }
    assert.equal(
      (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).status,
      200,
      "the IdP still serves",
    );
  } finally {
    await listener.close();
    await api.close();
  }
});

test("[RFC8252-loopback-close] closing the listener ends a pending wait instead of keeping the process alive", async () => {
  const listener = await listenOnLoopback();
  const wait = listener.waitForCallback("state");
  await listener.close();
  await assert.rejects(wait, CancelledError);
});

test("[AHP-client-renewal-timer-cap] renewal delays never exceed what setTimeout honours (a 60-day token does not renew in a loop)", () => {
  const now = 1_000_000;
  const sixtyDays = 60 * 24 * 3600 * 1000;
  assert.equal(renewalDelayMs(now + sixtyDays, now), MAX_TIMER_MS);
  assert.ok((renewalDelayMs(now + 3_600_000, now) ?? 0) < 3_600_000);
});
