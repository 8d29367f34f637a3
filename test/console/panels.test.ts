/** Panels: their state in ConsoleState, their actions through /api/panels/:id/:action, typed errors for the rest. */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { ConsolePanel, ConsoleState, RapPanelState } from "../../src/console/index.ts";
import { AgentAuthError } from "../../src/core/errors.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { nextState, postJson, signedInConsole } from "./support.ts";

function rapPanel(): ConsolePanel & { invoked: Record<string, unknown>[] } {
  const listeners = new Set<() => void>();
  const state: RapPanelState = {
    users: ["alice", "bob", "carol"],
    operations: ["whoami", "echo"],
    calls: [],
  };
  const invoked: Record<string, unknown>[] = [];
  return {
    id: "rap",
    title: "Demo thread (RAP)",
    invoked,
    state: () => state,
    actions: {
      async invoke(input) {
        if (input.user !== "alice" && input.user !== "bob" && input.user !== "carol") {
          throw new AgentAuthError("demo_user_unknown", "Choose alice, bob or carol.");
        }
        invoked.push(input);
        state.calls.push({
          groupId: `demo-${input.user}`,
          id: `call-${invoked.length}`,
          userId: String(input.user),
          operation: "whoami",
          status: "authorizing",
          authUrl: "http://127.0.0.1:9/consent",
          result: null,
          isError: false,
          at: Date.now(),
        });
        for (const listener of listeners) listener();
        return { id: `call-${invoked.length}` };
      },
      async explode() {
        throw new Error("internal detail with a token at-should-not-leak");
      },
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

test("[CONSOLE-panels-action] a panel's state is in ConsoleState; its action runs with the JSON body and its change is pushed", async () => {
  const panel = rapPanel();
  const signedIn = await signedInConsole({ store: new MemoryCredentialStore(), panels: [panel] });
  const page = await (
    await fetch(signedIn.console.url, { headers: { cookie: signedIn.cookie } })
  ).text();
  for (const landmark of [
    ">Demo thread (RAP)</h2>",
    '<select name="demo-user">',
    '<select name="demo-operation">',
    ">Invoke</button>",
  ]) {
    assert.ok(page.includes(landmark), landmark);
  }
  assert.ok(!page.includes(">ACP</h2>"), "only the panels given");
  let answer: Awaited<ReturnType<typeof postJson>> | undefined;
  const state = await nextState<ConsoleState>(
    signedIn,
    (s) => (s.panels[0]?.state as RapPanelState | undefined)?.calls.length === 1,
    async () => {
      answer = await postJson(signedIn, "/api/panels/rap/invoke", {
        user: "alice",
        operation: "whoami",
      });
    },
  );
  assert.equal(answer?.status, 200);
  assert.deepEqual(answer?.json, { id: "call-1" });
  assert.deepEqual(panel.invoked, [{ user: "alice", operation: "whoami" }]);
  assert.equal(state.panels[0]?.id, "rap");
  assert.equal(state.panels[0]?.title, "Demo thread (RAP)");
});

test("[CONSOLE-panels-errors] malformed JSON, unknown panels and actions, and failing actions answer typed JSON errors", async () => {
  const signedIn = await signedInConsole({
    store: new MemoryCredentialStore(),
    panels: [rapPanel()],
  });
  const code = (answer: { json: Record<string, unknown> }) =>
    (answer.json.error as { code: string }).code;
  for (const body of ["{", "", "[1,2]", "null", '"text"', "42"]) {
    const answer = await postJson(signedIn, "/api/panels/rap/invoke", body);
    assert.equal(answer.status, 400, body);
    assert.equal(code(answer), "console_body_invalid");
    assert.deepEqual(Object.keys(answer.json), ["error"]);
  }
  const unknownPanel = await postJson(signedIn, "/api/panels/acp/login", {});
  assert.equal(unknownPanel.status, 404);
  assert.equal(code(unknownPanel), "console_unknown_panel");
  for (const action of ["nope", "constructor", "__proto__", "toString", "hasOwnProperty"]) {
    const answer = await postJson(signedIn, `/api/panels/rap/${action}`, {});
    assert.equal(answer.status, 404, action);
    assert.equal(code(answer), "console_unknown_action");
  }
  for (const path of [
    "/api/panels/rap",
    "/api/panels/rap/invoke/extra",
    "/api/panels/RAP/invoke",
    "/api/nothing",
  ]) {
    const answer = await postJson(signedIn, path, {});
    assert.equal(answer.status, 404, path);
  }
  const refused = await postJson(signedIn, "/api/panels/rap/invoke", { user: "mallory" });
  assert.equal(refused.status, 400);
  assert.equal(code(refused), "demo_user_unknown");
  const exploded = await postJson(signedIn, "/api/panels/rap/explode", {});
  assert.equal(exploded.status, 500);
  assert.equal(code(exploded), "console_action_failed");
  assert.ok(!JSON.stringify(exploded.json).includes("at-should-not-leak"));
  const get = await fetch(new URL("/api/panels/rap/invoke", signedIn.console.url), {
    headers: { cookie: signedIn.cookie },
  });
  assert.equal(get.status, 405);
  const put = await fetch(new URL("/api/state", signedIn.console.url), {
    method: "POST",
    headers: { cookie: signedIn.cookie },
  });
  assert.equal(put.status, 405);
});
