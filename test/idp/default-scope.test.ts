/**
 * RFC 6749 §3.3 at the embedded server (issue 18 item 6): an authorization request without a scope is processed with
 * the documented default (`read` for a resource, RFC 8707; `openid` otherwise) instead of ending in `access_denied`
 * after the person approved; `offline_access` alone counts as none. And `idp serve` advertises Client ID Metadata
 * Documents when asked to (MCP authorization 2026-07-28; the conformance suite's authorization-server check).
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { authorizeAndRedeem } from "../support/authorize.ts";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();
const RESOURCE = "https://mcp.example.test/mcp";

function claims(token: unknown): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(token).split(".")[1] ?? "", "base64url").toString("utf8"));
}

test("[RFC6749-default-scope] no scope with a resource: a token for that resource with scope read, no ID token", async () => {
  const answer = await authorizeAndRedeem(
    idp.issuer,
    { scope: undefined, resource: RESOURCE },
    { resource: RESOURCE },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.scope, "read");
  assert.equal(answer.body.id_token, undefined);
  assert.equal(claims(answer.body.access_token).aud, RESOURCE);
});

test("[RFC6749-default-scope] no scope and no resource: the person's identity (openid)", async () => {
  const answer = await authorizeAndRedeem(idp.issuer, { scope: undefined });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.match(String(answer.body.scope), /\bopenid\b/);
});

test("[RFC6749-default-scope] offline_access alone counts as no scope: the default is added and a refresh token issued", async () => {
  const answer = await authorizeAndRedeem(
    idp.issuer,
    { scope: "offline_access", resource: RESOURCE },
    { resource: RESOURCE },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.scope, "read");
  assert.equal(typeof answer.body.refresh_token, "string");
});

test("[IDP-cli-client-metadata-documents] idp serve --client-metadata-documents advertises client_id_metadata_document_supported; without it the metadata does not", async () => {
  for (const [flags, advertised] of [
    [["--client-metadata-documents"], true],
    [[], undefined],
  ] as const) {
    const server = startCli(["idp", "serve", ...flags]);
    const [issuer] = await server.waitFor("stdout", /http:\/\/127\.0\.0\.1:\d+/);
    const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    assert.equal(metadata.client_id_metadata_document_supported, advertised);
    server.kill("SIGTERM");
    await server.exited;
  }
  const lone = await runCli(["idp", "serve", "--client-metadata-loopback"]);
  assert.equal(lone.code, 2);
  assert.match(lone.stderr, /--client-metadata-loopback goes with --client-metadata-documents/);
});
