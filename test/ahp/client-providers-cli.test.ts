/**
 * `agentauth ahp login|status` as a process against a host whose resource names a GitHub Enterprise server (the
 * GitHub simulator's own origin, GHES layout), configured only through the environment and one flag:
 * AGENTAUTH_GITHUB_HOST, --provider-client-id github=ID, AGENTAUTH_GITHUB_CLIENT_SECRET.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { after, test } from "node:test";
import { openVault } from "../../src/vault/index.ts";
import { startGitHubSimulator } from "../sims/github.ts";
import { tempDir } from "../support/tmp.ts";
import { OCTO, startOctoHost } from "./client-providers-host.ts";

const CLI = join(import.meta.dirname, "fixtures", "ahp-client-cli.ts");
const GUARD = { timeout: 60_000 };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  onStderr?: (text: string) => void,
): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], { env });
  after(() => child.exitCode === null && child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
    onStderr?.(stderr);
  });
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

test(
  "[AHP-client-provider-cli-ghes] ahp login signs in with the GitHub preset for a GHES server named by the host (env + --provider-client-id), ahp status then reports ready; no secret printed",
  GUARD,
  async () => {
    const sim = await startGitHubSimulator({ deviceIntervalSeconds: 1 });
    after(() => sim.close());
    const server = `${sim.url}/login/oauth`;
    const url = await startOctoHost(server, sim);
    const env = {
      ...process.env,
      AGENTAUTH_HOME: tempDir(),
      NODE_TEST_CONTEXT: "",
      AGENTAUTH_GITHUB_HOST: sim.url,
      AGENTAUTH_GITHUB_CLIENT_SECRET: sim.clientSecret,
    };
    const approved = new Set<string>();
    const login = await run(
      ["login", "--json", "--provider-client-id", `github=${sim.clientId}`, url],
      env,
      (stderr) => {
        const code = /and enter the code\s+([A-Z0-9]{4}-[A-Z0-9]{4})/.exec(stderr)?.[1];
        if (code && !approved.has(code)) {
          approved.add(code);
          sim.approveDevice(code);
        }
      },
    );
    assert.equal(login.code, 0, login.stderr);
    assert.ok(login.stderr.includes(`${sim.url}/login/device`), login.stderr);
    const [line] = login.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(line.event, "authenticated");
    assert.equal(line.id, OCTO);
    assert.equal(line.issuer, server);
    assert.equal(line.account.login, "alice");
    assert.equal(approved.size, 1);

    const status = await run(["status", "--json", url], env);
    assert.equal(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout);
    assert.equal(report.resources[0].ready, true);

    const store = openVault({ env });
    const [summary] = await store.list({ issuer: server });
    const record = summary && (await store.get(summary));
    await store.close();
    assert.equal(record?.provider?.name, "github");
    assert.equal(
      record?.tokens.clientSecret?.reveal(),
      sim.clientSecret,
      "the secret is sealed with the credential",
    );
    const token = record?.tokens.accessToken?.reveal() ?? "missing";
    const printed = login.stdout + login.stderr + status.stdout + status.stderr;
    assert.ok(!printed.includes(token), "no access token printed");
    assert.ok(!printed.includes(sim.clientSecret), "no client secret printed");
  },
);

test(
  "[AHP-client-provider-cli-client-id-missing] ahp login for a GitHub server without a client id fails, naming the variable and the flag",
  GUARD,
  async () => {
    const sim = await startGitHubSimulator();
    after(() => sim.close());
    const url = await startOctoHost(`${sim.url}/login/oauth`, sim);
    const env = {
      ...process.env,
      AGENTAUTH_HOME: tempDir(),
      NODE_TEST_CONTEXT: "",
      AGENTAUTH_GITHUB_HOST: sim.url,
      AGENTAUTH_GITHUB_CLIENT_ID: "",
    };
    const login = await run(["login", url], env);
    assert.notEqual(login.code, 0);
    assert.match(login.stderr, /AGENTAUTH_GITHUB_CLIENT_ID/);
    assert.match(login.stderr, /--provider-client-id github=ID/);
    assert.equal(sim.stats().deviceCodes, 0);
  },
);
