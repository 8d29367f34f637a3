import assert from "node:assert/strict";
import { test } from "node:test";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";
import { invocation, post, startTool } from "./tool-fixture.ts";
import { authorize, oauthOperations, providers, RAP_TOOL_CLIENT } from "./tool-oauth-fixture.ts";

test("[RAP-oauth-timeout] [RAP-oauth-state-expired] an authorization nobody completes ends with an error; its link then does nothing", async () => {
  const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
  const sink = await callbackSink();
  const { tool, url } = await startTool({
    operations: oauthOperations(idp),
    providers: providers(idp),
    store: new MemoryCredentialStore(),
    authorizationTimeoutMs: 50,
  });
  const body = invocation(sink.url, { operation: "whoami", arguments: {}, user_id: "u-slow" });
  assert.equal((await post(`${url}/invoke`, body)).status, 200);
  const oauth = await sink.waitFor((m) => m.id === body.id);
  assert.equal(oauth.type, "oauth");
  const result = await sink.waitFor((m) => m.id === body.id && m.type === "tool_result");
  assert.equal(
    result.text,
    "Error: Authorization for Demo ID was not completed within 1 second, so whoami did not run. Ask again to get a new sign-in link.",
  );
  const before = JSON.stringify(idp.stats.byGrant.authorization_code ?? null);
  const landed = await authorize(String(oauth.auth_url));
  assert.equal(landed.status, 400, "the expired state is refused");
  assert.match(landed.page, /not valid/);
  await tool.settled();
  assert.equal(JSON.stringify(idp.stats.byGrant.authorization_code ?? null), before, "no exchange");
  assert.equal(sink.forCall(String(body.id)).length, 2, "oauth, then exactly one tool_result");
});

test("[RAP-oauth-timeout] the default authorization timeout is 10 minutes", async () => {
  const { DEFAULT_AUTHORIZATION_TIMEOUT_MS } = await import("../../src/rap/tool/index.ts");
  assert.equal(DEFAULT_AUTHORIZATION_TIMEOUT_MS, 600_000);
});
