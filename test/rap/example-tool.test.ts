import assert from "node:assert/strict";
import { test } from "node:test";
import { startExampleTool } from "../../src/rap/example/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";
import { authorize } from "./tool-oauth-fixture.ts";

const idp = await useIdp();

test("[RAP-example-protected-api] the example tool's whoami goes through oauth, then calls the protected API with the user's token", async (t) => {
  const store = new MemoryCredentialStore();
  const tool = await startExampleTool({ issuer: idp.issuer, store });
  t.after(() => tool.close());
  const sink = await callbackSink();
  t.after(() => sink.close());

  const toolset = await (await fetch(`${tool.url}/.well-known/rap-toolset`)).json();
  assert.deepEqual(
    toolset.tools.map((x: { name: string; annotations?: { requiresAuth?: string } }) => [
      x.name,
      x.annotations?.requiresAuth,
    ]),
    [
      ["echo", undefined],
      ["whoami", "demo"],
    ],
  );
  const invoke = (id: string, user: string) =>
    fetch(toolset.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        operation: "whoami",
        arguments: {},
        id,
        group_id: "thread-1",
        user_id: user,
        callback_url: sink.url,
      }),
    });
  assert.equal((await invoke("call-1", "alice")).status, 200);
  const oauth = await sink.waitFor((m) => m.type === "oauth" && m.id === "call-1");
  const landed = await authorize(String(oauth.auth_url)); // consent page, Continue, auto-approve
  assert.match(
    landed.page,
    /signed in to the demo API as alice/,
    "the account read from /api/me is shown",
  );
  const result = await sink.waitFor((m) => m.type === "tool_result" && m.id === "call-1");
  assert.equal(result.text, "You are alice at the demo API (scopes: read).");

  // The API itself answers RFC 6750 challenges.
  const bare = await fetch(`${tool.api.url}/api/me`);
  assert.equal(bare.status, 401);
  assert.match(bare.headers.get("www-authenticate") ?? "", /^Bearer resource_metadata="/);
  const bad = await fetch(`${tool.api.url}/api/me`, { headers: { authorization: "Bearer nope" } });
  assert.equal(bad.status, 401);
  assert.match(bad.headers.get("www-authenticate") ?? "", /error="invalid_token"/);

  // A second call by the same user needs no authorization.
  assert.equal((await invoke("call-2", "alice")).status, 200);
  const second = await sink.waitFor((m) => m.id === "call-2");
  assert.equal(second.type, "tool_result");
});
