/** Agents whose stdout is not clean ACP, or that die: typed errors, never a crash or a hang, no process left. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { connectAgent } from "../../src/acp/client/index.ts";
import {
  agentCommand,
  calls,
  cleanEnv,
  connectScripted,
  isRunning,
  stateFolder,
} from "./fixtures/scripted-agent-harness.ts";

const GUARD = { timeout: 30_000 };

function pidOf(dir: string): number {
  const pid = Number(/pid=(\d+)/.exec(calls(dir)[0] ?? "")?.[1]);
  assert.ok(pid > 0, `pid recorded in ${calls(dir)}`);
  return pid;
}

test(
  "[ACP-client-malformed-garbage] an agent printing only log lines: initialize times out, typed, agent stopped",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("garbage", dir, "--mode", "noise");
    await assert.rejects(
      connectAgent(command, args, { env: cleanEnv(), timeouts: { initializeMs: 1500 } }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "acp_initialize_failed");
        assert.match(error.message, /6 lines on stdout that are not JSON-RPC/);
        return true;
      },
    );
    assert.equal(isRunning(pidOf(dir)), false);
  },
);

test(
  "[ACP-client-malformed-garbage] log lines mixed with real messages are skipped; the agent still works",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "garbage", dir, ["--mode", "noisy-ok"]);
    assert.equal((await client.status()).state, "authenticated");
  },
);

test(
  "[ACP-client-malformed-oversized] a message over the size limit is a protocol error, and the agent is stopped",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("garbage", dir, "--mode", "oversized");
    await assert.rejects(
      connectAgent(command, args, { env: cleanEnv(), maxMessageBytes: 64 * 1024 }),
      {
        code: "acp_protocol_error",
      },
    );
    assert.equal(isRunning(pidOf(dir)), false);
  },
);

test(
  "[ACP-client-agent-exited] an agent that exits before answering initialize: acp_agent_exited with its code",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("garbage", dir, "--mode", "exit");
    await assert.rejects(connectAgent(command, args, { env: cleanEnv() }), {
      code: "acp_agent_exited",
      exitCode: 3,
    });
  },
);

test(
  "[ACP-client-agent-exited] an agent that dies mid-session: status() rejects typed, later calls too",
  GUARD,
  async (t) => {
    const dir = stateFolder();
    const client = await connectScripted(t, "garbage", dir, ["--mode", "dies"]);
    await assert.rejects(client.status(), { code: "acp_agent_exited", exitCode: 5 });
    await assert.rejects(client.request("session/new", { cwd: "/tmp", mcpServers: [] }), {
      code: "acp_agent_exited",
    });
  },
);

test(
  "[ACP-client-spawn-failed] a command that does not exist: acp_spawn_failed",
  GUARD,
  async () => {
    await assert.rejects(
      connectAgent("agentauth-no-such-agent-xyz", [], { env: cleanEnv() }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "acp_spawn_failed");
        assert.match(error.message, /ENOENT/);
        return true;
      },
    );
  },
);

test(
  "[ACP-client-version] a v1 agent asked for v2 is a typed initialize error naming the version",
  GUARD,
  async () => {
    const dir = stateFolder();
    const [command, args] = agentCommand("bare", dir);
    await assert.rejects(
      connectAgent(command, args, { env: cleanEnv(), protocolVersion: 2 }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, "acp_initialize_failed");
        assert.match(error.message, /protocol version 1/);
        return true;
      },
    );
  },
);
