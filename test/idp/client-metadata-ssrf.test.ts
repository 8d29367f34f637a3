/**
 * The embedded authorization server fetches a client_id URL it is handed by anyone (draft-ietf-oauth-client-id-
 * metadata-document §6, "Server-Side Request Forgery"): without `allowHttpLoopback` it must never reach loopback,
 * private, link-local (cloud metadata) or other special-use addresses, whether the URL names one directly (in any
 * spelling the URL parser accepts) or through a host name that resolves to one.
 */

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import {
  clientMetadataDocumentResolver,
  isClientIdUrl,
} from "../../src/idp/client-metadata-documents.ts";
import { guardedFetch, isSpecialUseAddress } from "../../src/idp/special-use-addresses.ts";

for (const url of [
  "https://127.0.0.1/c.json",
  "https://127.1.2.3:8443/c.json",
  "https://2130706433/c.json",
  "https://0x7f.1/c.json",
  "https://[::1]/c.json",
  "https://[::ffff:127.0.0.1]/c.json",
  "https://[::ffff:a9fe:a9fe]/c.json",
  "https://localhost/c.json",
  "https://app.localhost/c.json",
  "https://10.0.0.5/c.json",
  "https://172.16.1.1/c.json",
  "https://192.168.1.1/c.json",
  "https://169.254.169.254/latest/meta-data",
  "https://100.64.0.1/c.json",
  "https://0.0.0.0/c.json",
  "https://[fd00::1]/c.json",
  "https://[fe80::1]/c.json",
  "https://[64:ff9b::a9fe:a9fe]/c.json",
]) {
  test(`[IDP-cimd-ssrf] the client_id URL ${url} names a special-use address and is never fetched, with or without allowHttpLoopback for non-loopback`, () => {
    assert.equal(isClientIdUrl(url, {}), false);
  });
}

test("[IDP-cimd-ssrf] public https client_id URLs are still client_id URLs (control)", () => {
  assert.equal(isClientIdUrl("https://agent.example/c.json", {}), true);
  assert.equal(isClientIdUrl("https://93.184.216.34/c.json", {}), true);
  assert.equal(isClientIdUrl("https://[2606:4700::1111]/c.json", {}), true);
});

test("[IDP-cimd-ssrf] allowHttpLoopback admits loopback only, never private or link-local addresses", () => {
  const loose = { allowHttpLoopback: true };
  assert.equal(isClientIdUrl("http://127.0.0.1:9/c.json", loose), true);
  assert.equal(isClientIdUrl("https://127.0.0.1:9/c.json", loose), true);
  assert.equal(isClientIdUrl("https://169.254.169.254/c.json", loose), false);
  assert.equal(isClientIdUrl("https://10.0.0.5/c.json", loose), false);
  assert.equal(isClientIdUrl("http://10.0.0.5/c.json", loose), false);
});

test("[IDP-cimd-ssrf] isSpecialUseAddress knows the special-use ranges (pure)", () => {
  for (const ip of [
    "127.0.0.1",
    "10.1.1.1",
    "169.254.169.254",
    "::1",
    "::ffff:10.0.0.1",
    "fc00::1",
    "::",
  ]) {
    assert.equal(isSpecialUseAddress(ip), true, ip);
  }
  for (const ip of ["93.184.216.34", "8.8.8.8", "2606:4700::1111"]) {
    assert.equal(isSpecialUseAddress(ip), false, ip);
  }
});

// A host name that resolves to a special-use address (or DNS rebinding between a check and the fetch) is caught
// at the socket: the connection to the address actually dialled is cut before any request is written. The guard
// looks at the socket only, so an IP literal exercises it as a resolved name would (without relying on DNS here).
const hits: string[] = [];
const target = createServer((req, res) => {
  hits.push(req.url ?? "");
  res.writeHead(200, { "content-type": "application/json" }).end("{}");
});
await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
after(() => new Promise<void>((resolve) => target.close(() => resolve())));
const port = (target.address() as AddressInfo).port;

test("[IDP-cimd-ssrf] the guarded fetch cuts a connection that lands on a special-use address before any request is sent", async () => {
  const strict = guardedFetch({ allowLoopback: false });
  await assert.rejects(strict(`http://127.0.0.1:${port}/secret`, {}));
  assert.deepEqual(hits, [], "nothing reached the server");
  // Control: the same fetch with loopback allowed reaches it, so the refusal above is the guard's.
  const loose = guardedFetch({ allowLoopback: true });
  const response = await loose(`http://127.0.0.1:${port}/allowed`, {});
  await response.body?.cancel();
  assert.deepEqual(hits, ["/allowed"]);
});

test("[IDP-cimd-ssrf] the resolver without allowHttpLoopback never fetches a loopback client_id URL", async () => {
  hits.length = 0;
  const resolve = clientMetadataDocumentResolver({});
  assert.equal(await resolve(`https://127.0.0.1:${port}/c.json`), undefined);
  assert.equal(await resolve(`https://localhost:${port}/c.json`), undefined);
  assert.deepEqual(hits, []);
});
