import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { eventually } from "../support/rap-tool-stand-in.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

test("[RAP-runtime-cli-default-auth] the real `rap tool serve` and `rap runtime serve` sharing one AGENTAUTH_HOME work with no auth flags, whichever created the secret file", async () => {
  for (const runtimeCreatesSecret of [false, true]) {
    const home = tempDir();
    if (runtimeCreatesSecret) {
      // A runtime started before any tool: it exits (nothing to load) but has created the shared secret file.
      const early = await runCli(["rap", "runtime", "serve", "--toolset", "http://127.0.0.1:9"], {
        AGENTAUTH_HOME: home,
      });
      assert.equal(early.code, 1);
      assert.ok(existsSync(join(home, "rap-invocation.secret")));
    }
    const tool = startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer], {
      AGENTAUTH_HOME: home,
    });
    const toolReady = JSON.parse((await tool.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
    assert.equal(toolReady.invocationAuth, "hmac-sha256");
    const runtime = startCli(["rap", "runtime", "serve", "--toolset", toolReady.url], {
      AGENTAUTH_HOME: home,
    });
    const ready = JSON.parse((await runtime.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
    const token = readFileSync(ready.controlTokenFile, "utf8");
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${ready.url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      });
    const response = await api("/calls", {
      method: "POST",
      body: JSON.stringify({ operation: "echo", arguments: { text: "hello" }, group_id: "g" }),
    });
    assert.equal(response.status, 202);
    const { id, accepted } = (await response.json()) as { id: string; accepted: boolean };
    assert.equal(accepted, true, runtime.output().stderr);
    const call = await eventually(async () => {
      const thread = (await (await api("/threads/g")).json()) as {
        calls: { id: string; status: string; result: { text: string } | null }[];
      };
      return thread.calls.find((c) => c.id === id && c.status === "completed");
    }, "the echo result");
    assert.match(call.result?.text ?? "", /hello/);
    runtime.kill("SIGTERM");
    tool.kill("SIGTERM");
    assert.equal((await runtime.exited).code, 0);
    assert.equal((await tool.exited).code, 0);
  }
});
