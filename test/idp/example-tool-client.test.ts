/**
 * The example RAP tool with the IdP's static client (`startExampleTool({ clientId: EXAMPLE_TOOL_CLIENT_ID })`):
 * no dynamic registration, and the tool's `/oauth/callback` on its own port is accepted.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { EXAMPLE_TOOL_CLIENT_ID } from "../../src/idp/index.ts";
import { startExampleTool } from "../../src/rap/example/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { authorize } from "../rap/tool-oauth-fixture.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();

test("[IDP-static-clients] the example RAP tool signs a user in with the static agentauth-example-tool client, registering nothing", async (t) => {
  const store = new MemoryCredentialStore();
  const tool = await startExampleTool({
    issuer: idp.issuer,
    store,
    clientId: EXAMPLE_TOOL_CLIENT_ID,
  });
  t.after(() => tool.close());
  const sink = await callbackSink();
  t.after(() => sink.close());
  assert.equal(tool.clientId, EXAMPLE_TOOL_CLIENT_ID);

  const toolset = (await (await fetch(`${tool.url}/.well-known/rap-toolset`)).json()) as {
    endpoint: string;
  };
  const invoked = await fetch(toolset.endpoint, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      operation: "whoami",
      arguments: {},
      id: "call-1",
      group_id: "thread-1",
      user_id: "alice",
      callback_url: sink.url,
    }),
  });
  assert.equal(invoked.status, 200);
  const oauth = await sink.waitFor((m) => m.type === "oauth" && m.id === "call-1");
  const landed = await authorize(String(oauth.auth_url));
  assert.equal(landed.redirect.searchParams.get("error"), null, landed.redirect.href);
  assert.equal(landed.redirect.pathname, "/oauth/callback");
  assert.equal(landed.redirect.origin, new URL(tool.url).origin, "the tool's own port");
  const result = await sink.waitFor((m) => m.type === "tool_result" && m.id === "call-1");
  assert.equal(result.text, "You are alice at the demo API (scopes: read).");
  assert.equal(idp.memory().registrations, 0, "no dynamic registration");
});
