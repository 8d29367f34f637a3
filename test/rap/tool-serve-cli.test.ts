import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { invocationAuthHeaders } from "../../src/rap/invocation-auth.ts";
import { callbackSink } from "../support/callback-sink.ts";
import { type CliResult, runCli, startCli } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();

/** The process must end by itself; the guard only keeps a hang from blocking the suite (it is not a timing assertion). */
async function ends(result: Promise<CliResult>, what: string): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} kept running`)), 30_000);
  });
  try {
    return await Promise.race([result, guard]);
  } finally {
    clearTimeout(timer);
  }
}

test("[RAP-cli-tool-serve-unreachable-issuer] an issuer that cannot be reached: one sentence on stderr, nothing left running, exit 1", async () => {
  const home = tempDir();
  const result = await ends(
    runCli(["rap", "tool", "serve", "--example", "--issuer", "http://127.0.0.1:1"], {
      AGENTAUTH_HOME: home,
    }),
    "rap tool serve with an unreachable issuer",
  );
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, "", "no ready line");
  const lines = result.stderr
    .trim()
    .split("\n")
    .filter((l) => !l.startsWith("{"));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, /127\.0\.0\.1:1/);
  assert.match(lines[0] as string, /check|start/i);
});

test("[RAP-cli-tool-serve-bad-issuer] an issuer that is not a URL is a usage error: exit 2 before anything is opened", async () => {
  const home = tempDir();
  const result = await ends(
    runCli(["rap", "tool", "serve", "--example", "--issuer", "notaurl"], { AGENTAUTH_HOME: home }),
    "rap tool serve --issuer notaurl",
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--issuer/);
  for (const mode of ["nope"]) {
    const bad = await ends(
      runCli(
        ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--invocation-auth", mode],
        { AGENTAUTH_HOME: home },
      ),
      "bad --invocation-auth",
    );
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--invocation-auth/);
  }
});

test("[RAP-cli-tool-serve-bad-shared-flags] a malformed --public-url or --api-resource, or --host off loopback without --public-url, is a usage error naming the flag: exit 2, nothing opened, hostile text escaped", async () => {
  const home = tempDir();
  const cases: [string[], RegExp][] = [
    [["--public-url", "ftp://tools.example.com"], /--public-url must be an http\(s\) base URL/],
    [
      ["--public-url", "https://tools.example.com/?x=1"],
      /--public-url must be an http\(s\) base URL/,
    ],
    [["--public-url", "not a url\u001b[31m"], /--public-url must be/],
    [
      ["--api-resource", "https://api.example.com/#frag"],
      /--api-resource must be an absolute http\(s\) URI/,
    ],
    [["--api-resource", "urn:x"], /--api-resource must be/],
    [["--host", "0.0.0.0"], /--host 0\.0\.0\.0 is reachable from elsewhere: give --public-url/],
  ];
  for (const [flags, message] of cases) {
    const result = await ends(
      runCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer, ...flags], {
        AGENTAUTH_HOME: home,
      }),
      flags.join(" "),
    );
    assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.ok(!result.stderr.includes("\u001b"), "no raw escape sequence reaches the terminal");
    assert.equal(result.stdout, "");
  }
});

test("[RAP-cli-tool-serve-hmac-default] HMAC by default: the secret file is created 0600, the ready line names the file (never the secret), unsigned invocations get 401", async () => {
  const home = tempDir();
  const tool = startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer], {
    AGENTAUTH_HOME: home,
  });
  const ready = JSON.parse((await tool.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  const file = join(home, "rap-invocation.secret");
  assert.equal(ready.invocationAuth, "hmac-sha256");
  assert.equal(ready.invocationSecretFile, file);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const secret = new Secret(readFileSync(file, "utf8").trim());
  const body = JSON.stringify({
    operation: "echo",
    arguments: { text: "x" },
    id: "c1",
    call_id: null,
    callback_url: "http://127.0.0.1:9/cb",
    group_id: "g",
  });
  const unsigned = await fetch(`${ready.url}/invoke`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  assert.equal(unsigned.status, 401);
  const signed = await fetch(`${ready.url}/invoke`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...invocationAuthHeaders(
        { scheme: "hmac-sha256", secret },
        { method: "POST", host: new URL(ready.url).host, path: "/invoke", body },
      ),
    },
    body,
  });
  assert.equal(signed.status, 200);
  tool.kill("SIGTERM");
  const result = await ends(tool.exited, "rap tool serve after SIGTERM");
  assert.equal(result.code, 0);
  assert.ok(
    !`${result.stdout}${result.stderr}`.includes(secret.reveal()),
    "the secret is never printed",
  );
});

test("[RAP-invocation-replay-durable] rap tool serve keeps accepted signatures in $AGENTAUTH_HOME/rap-tool-replay.db: a signed invocation replayed after a restart (same port) is refused, the operation does not run again", async () => {
  const home = tempDir();
  const sink = await callbackSink();
  const serve = (port: string) =>
    startCli(["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--port", port], {
      AGENTAUTH_HOME: home,
    });
  const first = serve("0");
  const ready = JSON.parse((await first.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  assert.equal(ready.replayLedger, join(home, "rap-tool-replay.db"));
  assert.equal(statSync(ready.replayLedger).mode & 0o777, 0o600);
  const secret = new Secret(readFileSync(join(home, "rap-invocation.secret"), "utf8").trim());
  const body = JSON.stringify({
    operation: "echo",
    arguments: { text: "once" },
    id: "c-replay",
    call_id: null,
    callback_url: sink.url,
    group_id: "g",
  });
  const headers = {
    "content-type": "application/json",
    ...invocationAuthHeaders(
      { scheme: "hmac-sha256", secret },
      { method: "POST", host: new URL(ready.url).host, path: "/invoke", body },
    ),
  };
  const invoke = (url: string) => fetch(`${url}/invoke`, { method: "POST", headers, body });
  assert.equal((await invoke(ready.url)).status, 200);
  await sink.waitFor((m) => m.id === "c-replay");
  first.kill("SIGTERM");
  assert.equal((await ends(first.exited, "rap tool serve")).code, 0);

  const second = serve(new URL(ready.url).port);
  const again = JSON.parse((await second.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  assert.equal(again.url, ready.url);
  const replayed = await invoke(again.url);
  assert.equal(replayed.status, 401);
  assert.equal(((await replayed.json()) as { reason: string }).reason, "replayed");
  second.kill("SIGTERM");
  assert.equal((await ends(second.exited, "rap tool serve")).code, 0);
  assert.equal(sink.forCall("c-replay").length, 1, "echo ran once");
});

test("[RAP-cli-tool-serve-none-warns] --invocation-auth none serves unauthenticated, with a loud warning", async () => {
  const home = tempDir();
  const tool = startCli(
    ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--invocation-auth", "none"],
    { AGENTAUTH_HOME: home },
  );
  const ready = JSON.parse((await tool.waitFor("stdout", /^\{.*"event":"ready".*\}$/m))[0]);
  assert.equal(ready.invocationAuth, "none");
  assert.match(tool.output().stderr, /WARNING.*without invocation authentication/i);
  tool.kill("SIGTERM");
  assert.equal((await ends(tool.exited, "rap tool serve")).code, 0);
});

test("[RAP-cli-tool-serve-port-taken] a port already in use: one sentence naming the port, exit 1, nothing left running", async () => {
  const { createServer } = await import("node:net");
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const result = await ends(
      runCli(
        ["rap", "tool", "serve", "--example", "--issuer", idp.issuer, "--port", String(port)],
        {
          AGENTAUTH_HOME: tempDir(),
        },
      ),
      "rap tool serve on a taken port",
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, "");
    const lines = result.stderr
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("{"));
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0] as string, new RegExp(`port ${port} .*choose another --port`));
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});
