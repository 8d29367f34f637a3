/**
 * Review #5: the 1 MB body cap holds while the bytes arrive. A real node:http server streams a chunked answer
 * (no content-length) far larger than the cap; the token-endpoint transport (quirksFetch) and the provider REST
 * client (apiRequest) refuse it with their typed errors and stop reading: the server sees the connection closed
 * long before it has written everything.
 */

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { quirksFetch } from "../../src/oauth/index.ts";
import { apiRequest } from "../../src/providers/index.ts";

const TOTAL = 256 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "a");

/** Streams `{"a":"aaaa...` in 64 KB chunks up to 256 MB, honouring back-pressure; reports how much it wrote. */
async function floodServer(): Promise<{ url: string; finished: Promise<{ written: number }> }> {
  let report: (r: { written: number }) => void = () => {};
  const finished = new Promise<{ written: number }>((resolve) => {
    report = resolve;
  });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    let written = 0;
    let closed = false;
    res.on("close", () => {
      closed = true;
      report({ written });
    });
    res.write('{"a":"');
    const pump = () => {
      while (!closed && written < TOTAL) {
        written += CHUNK.byteLength;
        if (!res.write(CHUNK)) return void res.once("drain", pump);
      }
      if (!closed) res.end('"}');
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, finished };
}

test("[REVIEW-5-token-body-streaming-cap] a chunked token answer past 1 MB is refused (invalid_response) and not read to the end", async () => {
  const { url, finished } = await floodServer();
  const fetchQuirky = quirksFetch({}, "Flood");
  await assert.rejects(
    fetchQuirky(`${url}/token`, { method: "POST", headers: {}, redirect: "manual" }),
    { code: "invalid_response", message: /larger than/ },
  );
  const { written } = await finished;
  assert.ok(written < TOTAL / 4, `the server wrote ${written} bytes before the client stopped`);
});

test("[REVIEW-5-api-body-streaming-cap] a chunked REST answer past 1 MB is refused (provider_response_invalid) and not read to the end", async () => {
  const { url, finished } = await floodServer();
  await assert.rejects(apiRequest(`${url}/user`, { provider: "Flood", what: "account lookup" }), {
    code: "provider_response_invalid",
    message: /too large/,
  });
  const { written } = await finished;
  assert.ok(written < TOTAL / 4, `the server wrote ${written} bytes before the client stopped`);
});
