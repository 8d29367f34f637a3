/**
 * docs/deploy.md's recipe for N tools and M runtimes behind load balancers, run as written: the two serve commands
 * between its `<!-- recipe -->` markers, with the shell variables it defines set to this machine's values (the
 * balancers are round-robin proxies that keep the Host header), N = M = 2, a real PostgreSQL. A flag the recipe names
 * that the CLI does not have, a variable it uses but does not define, or a layout that does not serve calls through
 * either runtime fails here.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { generateVaultKey } from "../../src/vault/index.ts";
import { roundRobinProxy } from "../rap/fixtures/round-robin-proxy.ts";
import { REPO_ROOT, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";

const PG = await testPostgres();
const idp = await useIdp();

/** The recipe's shell block: its exported names, its other variables, and its `npx agentauth …` commands. */
function recipe() {
  const doc = readFileSync(join(REPO_ROOT, "docs", "deploy.md"), "utf8");
  const section = /<!-- recipe[^>]*-->\s*```sh\n([\s\S]*?)```\s*<!-- \/recipe -->/.exec(doc)?.[1];
  assert.ok(section, "docs/deploy.md has the recipe block");
  const lines = section.split("\n").map((line) => line.trim());
  return {
    exported: lines.flatMap((l) => /^export (\w+)=/.exec(l)?.[1] ?? []),
    variables: lines.flatMap((l) => /^(\w+)=/.exec(l)?.[1] ?? []),
    tool: lines.find((l) => l.startsWith("npx agentauth rap tool serve ")),
    runtime: lines.find((l) => l.startsWith("npx agentauth rap runtime serve ")),
  };
}

/** The command's words after `npx agentauth`, each `$NAME` replaced; a name the test does not know fails. */
function expand(command: string, values: Record<string, string>): string[] {
  return command
    .split(/\s+/)
    .slice(2)
    .map((word) =>
      word.replace(/\$(\w+)/g, (_, name: string) => {
        assert.ok(name in values, `the recipe uses $${name}, which it does not define`);
        return values[name] as string;
      }),
    );
}

test("[DOCS-deploy-recipe] the recipe in docs/deploy.md, run as written with two tools and two runtimes behind two balancers, serves calls through either runtime", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const steps = recipe();
  assert.deepEqual(steps.exported.sort(), ["AGENTAUTH_DATABASE_URL", "AGENTAUTH_VAULT_KEY"]);
  assert.ok(steps.tool && steps.runtime, "a tool command and a runtime command");
  const toolProxy = await roundRobinProxy({ keepHost: true });
  const runtimeProxy = await roundRobinProxy({ keepHost: true });
  t.after(() => toolProxy.close());
  t.after(() => runtimeProxy.close());
  const secrets = tempDir();
  const values: Record<string, string> = {
    SECRET: join(secrets, "rap-invocation.secret"),
    KEY: join(secrets, "rap-runtime.key"),
    ISSUER: idp.issuer,
    TOOLS: toolProxy.url,
    RUNTIMES: runtimeProxy.url,
    PORT: "0",
  };
  assert.deepEqual(
    steps.variables.sort(),
    Object.keys(values)
      .filter((name) => name !== "PORT")
      .sort(),
    "the recipe defines exactly the variables the test sets (PORT is per instance)",
  );
  const shared = {
    AGENTAUTH_DATABASE_URL: await PG.freshDatabase(),
    AGENTAUTH_VAULT_KEY: generateVaultKey(),
  };

  const start = async (command: string) => {
    const cli = startCli(expand(command, values), { ...shared, AGENTAUTH_HOME: tempDir() });
    const ready = JSON.parse((await cli.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]) as {
      url: string;
      listen?: string;
      controlTokenFile?: string;
    };
    const listen = new URL(ready.listen ?? ready.url);
    return {
      cli,
      ready,
      url: listen.origin,
      port: Number(listen.port),
      token: ready.controlTokenFile ? readFileSync(ready.controlTokenFile, "utf8").trim() : "",
    };
  };
  const tools = [await start(steps.tool), await start(steps.tool)];
  toolProxy.setUpstreams(tools.map((tool) => tool.port));
  for (const tool of tools) assert.equal(tool.ready.url, toolProxy.url);
  const runtimes = [await start(steps.runtime), await start(steps.runtime)];
  runtimeProxy.setUpstreams(runtimes.map((runtime) => runtime.port));

  const toolset = (await (await fetch(`${toolProxy.url}/.well-known/rap-toolset`)).json()) as {
    endpoint: string;
  };
  assert.equal(toolset.endpoint, `${toolProxy.url}/invoke`);

  // A call through each runtime's control API; its result read at the other (one database).
  const ids: string[] = [];
  for (const [i, runtime] of runtimes.entries()) {
    const response = await fetch(`${runtime.url}/calls`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${runtime.token}`,
        "content-type": "application/json",
        "idempotency-key": `recipe-${i}`,
      },
      body: JSON.stringify({
        operation: "echo",
        arguments: { text: `via ${i}` },
        group_id: "recipe",
      }),
    });
    const body = (await response.json()) as { id: string; accepted: boolean };
    assert.equal(response.status, 202, JSON.stringify(body));
    assert.equal(body.accepted, true);
    ids.push(body.id);
  }
  for (const [i, id] of ids.entries()) {
    const other = runtimes[1 - i] as (typeof runtimes)[number];
    let text: string | undefined;
    for (let tries = 0; tries < 400 && text === undefined; tries++) {
      const thread = (await (
        await fetch(`${other.url}/threads/recipe`, {
          headers: { authorization: `Bearer ${other.token}` },
        })
      ).json()) as { calls: { id: string; result: { text: string } | null }[] };
      text = thread.calls.find((c) => c.id === id)?.result?.text;
      if (text === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(text, `echo: via ${i}`);
  }
  assert.ok(runtimeProxy.counts.size > 0, "the tools called back through the runtimes' balancer");
  for (const instance of [...tools, ...runtimes]) instance.cli.kill("SIGTERM");
  for (const instance of [...tools, ...runtimes]) {
    const result = await instance.cli.exited;
    assert.equal(result.code, 0, result.stderr.slice(-1000));
  }
});
