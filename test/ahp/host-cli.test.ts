/** `agentauth ahp host serve --example --issuer URL`: ready line on stdout, logs on stderr, clean exit on SIGTERM. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { useIdp } from "../support/idp.ts";
import { WsPeer } from "../support/ws-peer.ts";

const idp = await useIdp();
// main.ts registration is the lead's; drive the command function the same way main.ts will.
const script = `import { ahpHostCommand } from "./src/cli/commands/ahp-host.ts";
import { processIo, reportError } from "./src/cli/io.ts";
const io = processIo();
try { process.exitCode = await ahpHostCommand(process.argv.slice(1), io); } catch (e) { process.exitCode = reportError(io, e); }`;

describe("agentauth ahp host serve", () => {
  it("[AHP-cli-example] prints the ready line, serves whoami gated, exits 0 on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      ["--input-type=module", "-e", script, "serve", "--example", "--issuer", idp.issuer],
      { cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const ready = await new Promise<{ event: string; url: string }>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        stdout += String(d);
        if (stdout.includes("\n")) resolve(JSON.parse(stdout.split("\n")[0] ?? ""));
      });
      child.once("exit", () => reject(new Error(`exited early: ${stderr}`)));
    });
    assert.equal(ready.event, "ready");
    assert.match(ready.url, /^ws:\/\/127\.0\.0\.1:\d+$/);
    const peer = await WsPeer.connect(ready.url);
    await peer.request("initialize", { protocolVersions: ["1.1.0"], clientId: "cli" });
    assert.equal((await peer.request("whoami", {})).error?.code, -32007);
    await peer.close();
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    assert.equal(code, 0);
    assert.equal(stdout.trim().split("\n").length, 1);
    assert.match(stderr, /"event":"ahp.connected"/);
  });

  it("[AHP-cli-example] usage errors exit 2", async () => {
    const child = spawn(
      process.execPath,
      ["--input-type=module", "-e", script, "serve", "--issuer", idp.issuer],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const [code] = await once(child, "exit");
    assert.equal(code, 2);
  });
});
