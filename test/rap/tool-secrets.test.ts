import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MemoryPendingStore } from "../../src/oauth/index.ts";
import type { PendingCallAuthorization } from "../../src/rap/tool/index.ts";
import { openVault } from "../../src/vault/index.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { invocation, startTool } from "./tool-fixture.ts";
import {
  authorize,
  captureLogs,
  oauthOperations,
  person,
  providers,
  providerUrl,
  RAP_TOOL_CLIENT,
  whoami,
} from "./tool-oauth-fixture.ts";

test("[RAP-no-secret-leak] no token, code or verifier in any log line, callback, HTTP response or stored URL", async () => {
  const idp = await useIdp({ clients: [RAP_TOOL_CLIENT] });
  const sink = await callbackSink();
  const home = tempDir();
  const store = openVault({ home, env: {} });
  const { logs, logger } = captureLogs();
  // The verifier only exists inside the pending store's value: wrap the store to see it (and what it keeps).
  const verifiers: string[] = [];
  const stored: PendingCallAuthorization[] = [];
  const inner = new MemoryPendingStore<PendingCallAuthorization>();
  const pending = {
    create(value: PendingCallAuthorization, ttlMs?: number) {
      verifiers.push(value.authorization.codeVerifier.reveal());
      stored.push(value);
      return inner.create(value, ttlMs);
    },
    consume: (state: string | null | undefined) => inner.consume(state),
    size: () => inner.size(),
  };
  const { tool, url } = await startTool({
    operations: [
      ...oauthOperations(idp),
      {
        name: "throws_token",
        description: "A buggy handler whose error message holds the token.",
        inputSchema: { type: "object" },
        requiresAuth: "demo",
        handler: async ({ accessToken }) => {
          await whoami(idp, accessToken);
          throw new Error(`upstream said no to ${accessToken?.reveal()}`);
        },
      },
    ],
    providers: providers(idp),
    store,
    pending,
    logger,
  });
  const responses: string[] = [];
  const send = async (fields: Record<string, unknown>) => {
    const body = invocation(sink.url, { arguments: {}, user_id: "u-secret", ...fields });
    const response = await fetch(`${url}/invoke`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    responses.push(await response.text());
    return body;
  };
  const codes: string[] = [];
  const tokens: string[] = [];
  const key = { subject: "u-secret", issuer: idp.issuer, resource: "" };
  const keepTokens = async () => {
    const record = await store.get(key);
    for (const s of [
      record?.tokens.accessToken,
      record?.tokens.refreshToken,
      record?.tokens.idToken,
    ]) {
      if (s) tokens.push(s.reveal());
    }
  };

  responses.push(await (await fetch(`${url}/.well-known/rap-toolset`)).text());
  // 1. A full authorization: oauth message, the person's redirect (its code captured), the result.
  const first = await send({ operation: "whoami" });
  const oauth = await sink.waitFor((m) => m.id === first.id);
  const landed = await authorize(String(oauth.auth_url));
  codes.push(landed.redirect.searchParams.get("code") ?? "");
  responses.push(landed.page);
  assert.equal(
    (await sink.waitFor((m) => m.id === first.id && m.type === "tool_result")).text,
    "signed in as alice (Alice Liddell)",
  );
  await keepTokens();
  // 2. A refresh (the rotated tokens are secrets too).
  const record = await store.get(key);
  assert.ok(record);
  const { id: _i, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  await store.put({ ...input, expiresAt: Date.now() - 1000 });
  const second = await send({ operation: "whoami" });
  await sink.waitFor((m) => m.id === second.id && m.type === "tool_result");
  await keepTokens();
  // 3. Buggy handlers: one returns the token, one throws it.
  const leaky = await send({ operation: "leaky" });
  const withheld = await sink.waitFor((m) => m.id === leaky.id);
  assert.match(
    String(withheld.text),
    /^Error: leaky's result was withheld because it contained a credential/,
  );
  const throwing = await send({ operation: "throws_token" });
  assert.match(
    String((await sink.waitFor((m) => m.id === throwing.id)).text),
    /^Error: throws_token failed unexpectedly/,
  );
  // 4. A failed exchange and a replayed redirect also log and answer something.
  const third = await send({ operation: "whoami", user_id: "u-secret-2" });
  const oauth3 = await sink.waitFor((m) => m.id === third.id);
  const state3 = (await providerUrl(String(oauth3.auth_url))).searchParams.get("state") ?? "";
  const bad = await person.fetch(
    `${url}/oauth/callback?${new URLSearchParams({ code: "bogus", state: state3, iss: idp.issuer })}`,
  );
  responses.push(await bad.text());
  await sink.waitFor((m) => m.id === third.id && m.type === "tool_result");
  const replay = await person.fetch(landed.redirect);
  responses.push(await replay.text());
  await tool.settled();

  const secrets = { tokens, codes, verifiers };
  assert.equal(tokens.length, 6, "access, refresh and ID token, before and after the refresh");
  assert.equal(new Set(tokens).size, 6);
  assert.equal(codes.filter(Boolean).length, 1);
  assert.equal(verifiers.length, 2);
  const outputs = {
    logs: logs.join(""),
    callbacks: sink.attempts.map((a) => a.body).join("\n"),
    responses: responses.join("\n"),
    storedPending: JSON.stringify(stored),
  };
  assert.ok(outputs.logs.includes("rap.oauth.authorized"), "the logs were captured");
  assert.ok(outputs.callbacks.includes(String(oauth.auth_url)), "the callbacks were captured");
  assert.ok(outputs.responses.includes("return to your conversation"), "the pages were captured");
  for (const [kind, values] of Object.entries(secrets)) {
    for (const value of values) {
      for (const [where, text] of Object.entries(outputs)) {
        assert.ok(!text.includes(value), `a ${kind} value appears in ${where}`);
      }
    }
  }
  // The auth_url carries the challenge, never the verifier; the vault file is encrypted at rest.
  for (const file of readdirSync(home).filter((f) => f.startsWith("vault.db"))) {
    const bytes = readFileSync(join(home, file)).toString("latin1");
    for (const value of tokens) assert.ok(!bytes.includes(value), `a token appears in ${file}`);
  }
  await store.close();
});
