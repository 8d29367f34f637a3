/**
 * A client metadata document names itself: anyone can publish `client_name: "agentauth CLI"` at a URL of their own.
 * The person deciding must see where the document lives (CIMD draft, security considerations; MCP authorization
 * 2026-07-28: the authorization server should show the client_id's host), or a look-alike name wins the consent.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { startDocumentServer } from "../mcp/fixtures/mcp-client.ts";
import { authorizationUrl, pkce } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";
import { Browser } from "./browser.ts";

const idp = await useIdp({
  autoApproveAs: undefined,
  clientIdMetadataDocuments: { allowHttpLoopback: true },
});
const docs = await startDocumentServer();

test("[IDP-cimd-consent-host] the sign-in page for a client_id URL shows the host that published the document next to its self-chosen name", async () => {
  const clientId = docs.json("/impostor.json", {});
  docs.json("/impostor.json", {
    client_id: clientId,
    client_name: "agentauth CLI",
    redirect_uris: ["http://127.0.0.1/callback"],
    token_endpoint_auth_method: "none",
  });
  const { challenge } = await pkce();
  const page = await new Browser().visit(
    authorizationUrl(idp.issuer, challenge, { client_id: clientId }),
    idp.issuer,
  );
  assert.match(page.html, /agentauth CLI/);
  assert.match(page.html, new RegExp(new URL(clientId).host.replace(/\./g, "\\.")));
});

test("[IDP-cimd-consent-host] a registered client keeps its plain name (control)", async () => {
  const { challenge } = await pkce();
  const page = await new Browser().visit(authorizationUrl(idp.issuer, challenge), idp.issuer);
  assert.doesNotMatch(page.html, /published by|127\.0\.0\.1:\d+/);
});

test("[IDP-cimd-consent-host] the device flow's confirm page shows the publishing host too", async () => {
  const clientId = docs.json("/impostor-device.json", {});
  docs.json("/impostor-device.json", {
    client_id: clientId,
    client_name: "agentauth CLI",
    redirect_uris: ["http://127.0.0.1/callback"],
    grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
    response_types: [],
    token_endpoint_auth_method: "none",
  });
  const started = await fetch(`${idp.issuer}/device/auth`, {
    method: "POST",
    body: new URLSearchParams({ client_id: clientId, scope: "openid" }),
  });
  const { verification_uri_complete } = (await started.json()) as Record<string, string>;
  assert.ok(verification_uri_complete, "the device authorization was accepted");
  const browser = new Browser();
  const input = await browser.visit(new URL(verification_uri_complete), idp.issuer);
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(input.html);
  assert.ok(form);
  const fields: Record<string, string> = {};
  for (const tag of (form[2] ?? "").matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(tag[0])?.[1];
    if (name) fields[name] = /value="([^"]*)"/.exec(tag[0])?.[1] ?? "";
  }
  const confirm = await browser.visit(new URL(form[1] ?? "", idp.issuer), idp.issuer, fields);
  assert.match(confirm.html, /agentauth CLI/);
  assert.match(confirm.html, new RegExp(new URL(clientId).host.replace(/\./g, "\\.")));
});
