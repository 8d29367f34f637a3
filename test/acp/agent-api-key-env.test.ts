/**
 * `authenticate {methodId: "api-key"}` with the key only in the agent's environment, the way acpx does it
 * (`ACPX_AUTH_<METHOD_ID>` in acpx's environment is passed on to the agent process; `authenticate` carries no
 * `_meta`). The method's declared environment variables are a second source after `_meta["api-key"]`. Driven by the
 * real SDK client over the example agent's stdio.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { test } from "node:test";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import { agentEnv, EXAMPLE_AGENT, vaultSummaries } from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };

interface Outcome {
  authenticate: unknown;
  session: unknown;
  status: unknown;
  stderr: string;
}

/** Spawns the example agent with `env`, then initialize, authenticate (params given), session/new, auth/status. */
async function journey(
  t: { after: (fn: () => unknown) => void },
  home: string,
  env: Record<string, string>,
  params: acp.AuthenticateRequest,
): Promise<Outcome> {
  const child = spawn(process.execPath, ["--no-warnings", EXAMPLE_AGENT], {
    env: { ...agentEnv({ issuer: idp.issuer, home }), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const closed = new Promise<unknown>((resolve) => child.once("close", resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await closed;
  });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const settle = <T>(p: Promise<T>) =>
    p.then(
      (v) => v,
      (e: unknown) => e,
    );
  const outcome = await acp.client({ name: "acpx-like" }).connectWith(stream, async (agent) => {
    // acpx sends no auth.terminal and no elicitation capability.
    await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const authenticate = await settle(agent.request(acp.methods.agent.authenticate, params));
    const session = await settle(
      agent.request(acp.methods.agent.session.new, { cwd: home, mcpServers: [] }),
    );
    const status = await agent.request(acp.methods.agent.auth.status, {});
    return { authenticate, session, status };
  });
  child.stdin.end();
  await closed;
  return { ...outcome, stderr };
}

for (const variable of ["AGENTAUTH_EXAMPLE_API_KEY", "ACPX_AUTH_API_KEY"]) {
  test(
    `[ACP-apikey-env-authenticate] authenticate {methodId:"api-key"} without _meta succeeds with the key in $${variable}; the key is not copied to the vault`,
    TIMEOUT,
    async (t) => {
      const home = tempDir();
      const key = `echo-${crypto.randomUUID()}`;
      const outcome = await journey(t, home, { [variable]: key }, { methodId: "api-key" });
      assert.deepEqual(outcome.authenticate, {});
      assert.equal(typeof (outcome.session as { sessionId?: unknown }).sessionId, "string");
      assert.deepEqual(outcome.status, {
        state: "authenticated",
        accounts: [{ label: `$${variable}`, active: true }],
      });
      // The environment stays the source of truth: nothing to delete on logout, nothing left behind.
      assert.deepEqual(await vaultSummaries(home), []);
      assert.ok(!outcome.stderr.includes(key), "the key never reaches stderr");
    },
  );
}

test(
  "[ACP-apikey-env-refused] a key in the environment that the method refuses answers -32602 naming the variable, never the key",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const key = `nope-${crypto.randomUUID()}`;
    const outcome = await journey(
      t,
      home,
      { AGENTAUTH_EXAMPLE_API_KEY: key },
      { methodId: "api-key" },
    );
    const error = outcome.authenticate as acp.RequestError;
    assert.ok(error instanceof acp.RequestError, "authenticate was refused");
    assert.equal(error.code, -32602);
    assert.match(error.message, /\$AGENTAUTH_EXAMPLE_API_KEY/);
    assert.match(error.message, /refused/);
    assert.ok(!JSON.stringify(error).includes(key), "the refused key is not echoed back");
    assert.ok(!outcome.stderr.includes(key));
    assert.deepEqual(await vaultSummaries(home), []);
  },
);

test(
  "[ACP-apikey-env-missing] with neither _meta nor the environment, -32602 says both ways to pass a key",
  TIMEOUT,
  async (t) => {
    const outcome = await journey(t, tempDir(), {}, { methodId: "api-key" });
    const error = outcome.authenticate as acp.RequestError;
    assert.ok(error instanceof acp.RequestError);
    assert.equal(error.code, -32602);
    assert.match(
      error.message,
      /: no API key: pass one in _meta\["api-key"\] \(a string or \{apiKey\}\)/,
    );
    assert.match(error.message, /\$AGENTAUTH_EXAMPLE_API_KEY/);
    assert.equal((outcome.session as acp.RequestError).code, -32000, "still not signed in");
  },
);

test(
  '[ACP-apikey-refusal-words] each refusal says what was wrong and what to send instead: both shapes _meta["api-key"] takes, a refused key',
  TIMEOUT,
  async (t) => {
    const malformed = await journey(
      t,
      tempDir(),
      {},
      {
        methodId: "api-key",
        _meta: { "api-key": 42 },
      },
    );
    const shape = malformed.authenticate as acp.RequestError;
    assert.equal(shape.code, -32602);
    assert.match(shape.message, /_meta\["api-key"\] is not an API key/);
    assert.match(shape.message, /a string, or \{apiKey: string\}/);

    const key = `nope-${crypto.randomUUID()}`;
    const refused = await journey(
      t,
      tempDir(),
      {},
      {
        methodId: "api-key",
        _meta: { "api-key": key },
      },
    );
    const error = refused.authenticate as acp.RequestError;
    assert.equal(error.code, -32602);
    assert.match(error.message, /the API key was refused: .*nothing was stored.*valid key/);
    assert.ok(!JSON.stringify(error).includes(key));
  },
);

test(
  "[ACP-apikey-meta-first] a key in _meta wins over the environment and is stored; the environment key is not",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const envKey = `echo-env-${crypto.randomUUID()}`;
    const metaKey = `echo-meta-${crypto.randomUUID()}`;
    const outcome = await journey(
      t,
      home,
      { AGENTAUTH_EXAMPLE_API_KEY: envKey },
      { methodId: "api-key", _meta: { "api-key": { apiKey: metaKey } } },
    );
    assert.deepEqual(outcome.authenticate, {});
    const stored = await vaultSummaries(home);
    assert.equal(stored.length, 1, "the key passed in _meta is kept in the vault");
    assert.ok(!outcome.stderr.includes(envKey) && !outcome.stderr.includes(metaKey));
  },
);

test(
  '[ACP-apikey-meta-string] the kit also reads _meta["api-key"] as a plain string, the shape gemini-cli reads and clients send it',
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    const metaKey = `echo-string-${crypto.randomUUID()}`;
    const outcome = await journey(
      t,
      home,
      {},
      {
        methodId: "api-key",
        _meta: { "api-key": metaKey },
      },
    );
    assert.deepEqual(outcome.authenticate, {});
    assert.equal((await vaultSummaries(home)).length, 1, "stored as a key passed in _meta");
    assert.ok(!outcome.stderr.includes(metaKey));
  },
);
