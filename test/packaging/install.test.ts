/**
 * Installing agentauth as a consumer does (issue 8 §4.9): `npm pack` a copy of this checkout (its `prepare`
 * builds dist/), `npm i` the tarball in an empty project, type-check the README's library snippet against the
 * shipped declarations with the consumer's own `tsc`, and run it with node against the embedded authorization
 * server. Also: the binary and `agentauth/vault` on the machine's older system Node say which Node to install.
 * Slow (a build and an install): its own file. Network: the npm registry only (for typescript and @types/node).
 */

import assert from "node:assert/strict";
import { type ExecFileSyncOptions, execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { FETCH_BROWSER } from "../mcp/fixtures/proxy-client.ts";
import { startStatefulMcpServer } from "../mcp/fixtures/stateful-mcp-server.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

const idp = await useIdp();
const NODE = process.execPath;
const NODE_BIN = dirname(NODE);
const rootPkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
/** npm runs scripts with the Node first on PATH: make that the project's Node 24. */
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${NODE_BIN}:${process.env.PATH}`,
  NODE_TEST_CONTEXT: "",
};
for (const name of Object.keys(env)) if (name.startsWith("AGENTAUTH_")) delete env[name];

function run(cmd: string, args: string[], options: ExecFileSyncOptions = {}): string {
  try {
    return execFileSync(cmd, args, { env, encoding: "utf8", stdio: "pipe", ...options }).toString();
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

/** The first ```ts block of the README (the library snippet). */
function readmeSnippet(): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const match = /## Library\s[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme);
  assert.ok(match?.[1], "README.md has a library snippet");
  return match[1];
}

/** docs/mcp.md's client program (the first ```ts block under "Client: agentAuthProvider"). */
function mcpClientSnippet(): string {
  const page = readFileSync(join(REPO_ROOT, "docs", "mcp.md"), "utf8");
  const match = /## Client: `agentAuthProvider`[\s\S]*?```ts\n([\s\S]*?)```/.exec(page);
  assert.ok(match?.[1], "docs/mcp.md has the client program");
  return match[1];
}

/** A copy of the checkout as git sees it (tracked and new files, no dist/), sharing node_modules for the build. */
function copyCheckout(): string {
  const copy = join(tempDir(), "agentauth");
  const files = run("git", ["ls-files", "-co", "--exclude-standard", "-z"], { cwd: REPO_ROOT })
    .split("\0")
    // A node_modules symlink (a git worktree sharing another's) is not matched by .gitignore's "node_modules/".
    .filter((file) => file && file !== "node_modules" && existsSync(join(REPO_ROOT, file)));
  for (const file of files) {
    mkdirSync(dirname(join(copy, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(copy, file));
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
  return copy;
}

// Made here, not inside a test: tempDir() removes a folder when the test (or file) that made it ends.
const consumer = tempDir();
const packs = tempDir();
let installed = false;

test("[PKG-install] npm pack, then npm i <tgz> in an empty project: the README snippet type-checks against dist/*.d.ts", {
  timeout: 600_000,
}, () => {
  const copy = copyCheckout();
  run("npm", ["pack", "--silent", "--pack-destination", packs], { cwd: copy });
  const [tgz] = readdirSync(packs).filter((f) => f.endsWith(".tgz"));
  assert.ok(tgz, "npm pack made a tarball");
  const listing = run("tar", ["-tzf", join(packs, tgz)]);
  for (const file of [
    "package/dist/vault/index.js",
    "package/dist/vault/index.d.ts",
    "package/bin/agentauth.js",
  ]) {
    assert.ok(listing.includes(file), `the tarball ships ${file}`);
  }

  // What a newcomer's project is: `npm init -y` (CommonJS: no "type"), so the docs' programs are .mts files.
  run("npm", ["init", "-y"], { cwd: consumer });
  assert.equal(JSON.parse(readFileSync(join(consumer, "package.json"), "utf8")).type, "commonjs");
  writeFileSync(
    join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2023",
        module: "nodenext",
        moduleResolution: "nodenext",
        strict: true,
        noEmit: true,
        // Our declarations must hold up without skipLibCheck: a consumer's strict build reads them.
        skipLibCheck: false,
        types: ["node"],
      },
      include: ["login.mts", "client.mts", "exports.mts"],
    }),
  );
  run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      join(packs, tgz),
      `typescript@${rootPkg.devDependencies.typescript}`,
      `@types/node@${rootPkg.devDependencies["@types/node"]}`,
    ],
    { cwd: consumer },
  );
  assert.ok(existsSync(join(consumer, "node_modules", "agentauth", "dist", "oauth", "index.js")));
  // The programs exactly as the pages give them.
  writeFileSync(join(consumer, "login.mts"), readmeSnippet());
  writeFileSync(join(consumer, "client.mts"), mcpClientSnippet());
  // Every subpath export's declarations, read in full by a strict consumer build.
  const subpaths = Object.keys(rootPkg.exports).filter((key) => key !== "./package.json");
  assert.ok(subpaths.length >= 7, "oauth, vault, idp, core, acp, ahp, rap");
  writeFileSync(
    join(consumer, "exports.mts"),
    subpaths
      .map(
        (key, i) =>
          `import * as m${i} from "agentauth/${key.slice(2)}";\nconsole.log(Object.keys(m${i}).length);`,
      )
      .join("\n"),
  );
  run(NODE, [join(consumer, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], {
    cwd: consumer,
  });
  installed = true;
});

/** `node <file>` in the consumer project as the page says, opening each URL it prints the way a browser would. */
async function runProgram(
  file: string,
  extraEnv: NodeJS.ProcessEnv,
  url: RegExp,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(NODE, [file], {
    cwd: consumer,
    env: { ...env, AGENTAUTH_HOME: tempDir(), ...extraEnv },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  let opened = false;
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
    const match = url.exec(stderr);
    // A device prompt names the page and the code apart: the page with the code is what a person opens.
    const found = match?.[2] ? `${match[1]}?user_code=${match[2]}` : match?.[1];
    if (found && !opened) {
      opened = true;
      // The auto-approving server signs in as alice when the page is opened (and follows the redirect back).
      void fetch(found).then((page) => page.arrayBuffer());
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, stdout, stderr };
}

test("[PKG-install] [DOCS-readme-library] the README's library program runs as written (node login.mts) in an npm init -y project, against the embedded server's own client", {
  timeout: 120_000,
}, async () => {
  assert.ok(installed, "the install test ran first");
  const result = await runProgram(
    "login.mts",
    { AGENTAUTH_ISSUER: idp.issuer },
    /Open (http:\/\/127\.0\.0\.1:\d+\/device), code ([A-Z-]+)/,
  );
  assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  assert.match(result.stdout, /^Signed in as alice; the access token has \d+ characters\.$/m);
});

test("[PKG-install] [DOCS-mcp-client] docs/mcp.md's client program runs as written (node client.mts) in an npm init -y project: sign-in, then the tool's answer", {
  timeout: 120_000,
}, async () => {
  assert.ok(installed, "the install test ran first");
  const { startProtectedMcpServer } = await import("../mcp/fixtures/protected-mcp-server.ts");
  const mcp = await startProtectedMcpServer({ issuer: idp.issuer });
  const result = await runProgram(
    "client.mts",
    { MCP_SERVER_URL: mcp.url },
    /Open (http:\/\/127\.0\.0\.1:\d+\/\S+) to sign in/,
  );
  assert.equal(result.code, 0, `stdout: ${result.stdout}\nstderr: ${result.stderr}`);
  assert.match(result.stdout, /hello/);
});

test("[PKG-install] [DOCS-npx-agentauth] after npm install, the CLI runs as the docs say: npx agentauth", () => {
  assert.ok(installed, "the install test ran first");
  assert.equal(
    run("npx", ["--no-install", "agentauth", "--version"], { cwd: consumer }).trim(),
    rootPkg.version,
  );
});

/** `npx --no agentauth …` in the consumer: the installed binary, never a download. */
function npxAgentauth(args: string[], options: { home?: string } = {}): string {
  return run("npx", ["--no", "agentauth", ...args], {
    cwd: consumer,
    env: { ...env, AGENTAUTH_HOME: options.home ?? tempDir() },
  });
}

test("[PKG-demo-script] the installed package runs the unattended demo, every step (the compiled demo starts its ACP agent from the package)", {
  timeout: 300_000,
}, () => {
  assert.ok(installed, "the install test ran first");
  let transcript: string;
  try {
    transcript = npxAgentauth(["demo", "--script"]);
  } catch (error) {
    assert.fail((error as Error).message);
  }
  assert.match(transcript, /✓ ACP {2}status/);
  assert.match(transcript, /✓ ACP {2}logout/);
  assert.doesNotMatch(transcript, /✗/);
});

/** Runs one printed shell command in the consumer project, as a person would paste it. */
function shell(
  command: string,
  home: string,
): { status: number | null; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync("sh", ["-c", command], {
      cwd: consumer,
      env: { ...env, AGENTAUTH_HOME: home },
      encoding: "utf8",
      stdio: "pipe",
      timeout: 120_000,
    });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number | null; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The command with --help added to agentauth's own part (before `--`, which starts an agent's command line). */
function withHelp(command: string): string {
  const at = command.indexOf(" -- ");
  return at === -1 ? `${command} --help` : `${command.slice(0, at)} --help${command.slice(at)}`;
}

test("[PKG-printed-commands] every command the installed demo prints works from the project it is installed in: --help of each, the ACP status for real", {
  timeout: 300_000,
}, async () => {
  assert.ok(installed, "the install test ran first");
  const home = tempDir();
  // The installed binary itself, not through npx: a signal to npx does not reach the demo it started.
  const bin = join(consumer, "node_modules", "agentauth", "bin", "agentauth.js");
  const demo = spawn(NODE, [bin, "demo", "--json", "--port", "0"], {
    cwd: consumer,
    env: { ...env, AGENTAUTH_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => demo.once("close", resolve));
  try {
    let stdout = "";
    let stderr = "";
    demo.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const ready = await new Promise<{ commands: { label: string; command: string }[] }>(
      (resolve, reject) => {
        demo.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          const line = stdout.split("\n").find((l) => l.startsWith('{"event":"ready"'));
          if (line) resolve(JSON.parse(line));
        });
        void exited.then(() => reject(new Error(`the demo ended: ${stderr}`)));
      },
    );
    assert.ok(ready.commands.length >= 5, "the demo prints its commands");
    for (const { command } of ready.commands) {
      assert.doesNotMatch(command, /npm run|src\/cli|\.ts\b/, `${command} needs a checkout`);
      const help = shell(withHelp(command), home);
      assert.equal(help.status, 0, `${withHelp(command)}\n${help.stdout}${help.stderr}`);
      assert.match(help.stdout, /agentauth|Usage/, withHelp(command));
    }
    const acpStatus = ready.commands.find((c) => / acp status /.test(c.command));
    assert.ok(acpStatus, "the demo prints an acp status command");
    const status = shell(acpStatus.command, home);
    assert.equal(status.status, 0, `${acpStatus.command}\n${status.stdout}${status.stderr}`);
    assert.match(status.stdout, /State: {4}unauthenticated/);
  } finally {
    demo.kill("SIGTERM");
    await exited;
  }
});

test("[PKG-readme-commands] every `npx agentauth …` command in the README runs from an installed package (--help)", {
  timeout: 300_000,
}, () => {
  assert.ok(installed, "the install test ran first");
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  // Whole commands only: not the `npx agentauth …` / `<command>` placeholders of the prose.
  const commands = [...readme.matchAll(/`(npx agentauth [^`]+)`/g)]
    .map((m) => m[1] ?? "")
    .filter((command) => !/[…<]/.test(command));
  assert.ok(commands.length >= 4, "the README shows how to run the installed package");
  const home = tempDir();
  for (const command of commands) {
    const help = shell(withHelp(command.replace(/^npx agentauth/, "npx --no agentauth")), home);
    assert.equal(help.status, 0, `${command}\n${help.stdout}${help.stderr}`);
  }
});

test("[PKG-mcp-proxy] the installed package alone runs agentauth mcp proxy for an MCP client (the official MCP SDKs come with it): a browser sign-in, then a tool call", {
  timeout: 180_000,
}, async () => {
  assert.ok(installed, "the install test ran first");
  const mcp = await startStatefulMcpServer({ issuer: idp.issuer });
  const home = tempDir();
  const transport = new StdioClientTransport({
    command: NODE,
    args: [
      join(consumer, "node_modules", "agentauth", "bin", "agentauth.js"),
      "mcp",
      "proxy",
      mcp.url,
    ],
    cwd: consumer,
    env: { PATH: env.PATH ?? "", HOME: home, AGENTAUTH_HOME: home, BROWSER: FETCH_BROWSER },
    stderr: "pipe",
  });
  const client = new Client({ name: "pkg-test-client", version: "1.0.0" });
  try {
    await client.connect(transport);
    const answer = await client.callTool({ name: "whoami", arguments: {} });
    assert.deepEqual(answer.content, [{ type: "text", text: "hello alice" }]);
  } finally {
    await client.close();
  }
});

test("[PKG-node-version] on the system's older Node, the binary prints one line naming the Node it needs", () => {
  const old = olderSystemNode();
  if (!old) return;
  const bin = installed
    ? join(consumer, "node_modules", "agentauth", "bin", "agentauth.js")
    : join(REPO_ROOT, "bin", "agentauth.js");
  const result = spawnSyncText(old.path, [bin, "--version"]);
  assert.equal(result.status, 1);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    `agentauth: needs Node.js 22.18.0 or newer, and this is Node.js ${old.version}; install a current Node.js (https://nodejs.org) and run it again.\n`,
  );
});

test("[PKG-node-version] on the system's older Node, agentauth/vault imports and opening a vault says which Node to install", () => {
  const old = olderSystemNode();
  if (!old) return;
  assert.ok(installed, "the install test ran first");
  const script = [
    'import { openVault } from "agentauth/vault";',
    "try { openVault(); console.log('opened'); }",
    "catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })); }",
  ].join("\n");
  writeFileSync(join(consumer, "old-node.mjs"), script);
  const home = tempDir();
  const result = spawnSyncText(old.path, ["old-node.mjs"], { cwd: consumer, home });
  assert.equal(result.status, 0, result.stderr);
  const error = JSON.parse(result.stdout);
  assert.equal(error.code, "node_too_old");
  assert.match(
    error.message,
    /needs Node\.js 22\.18\.0 or newer \(node:sqlite\), and this is Node\.js 20\./,
  );
  assert.deepEqual(readdirSync(home), [], "nothing was created");
});

/** The machine's own Node when it is older than 22.18 (the issue's case), else undefined (nothing to test). */
function olderSystemNode(): { path: string; version: string } | undefined {
  for (const path of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    if (!existsSync(path)) continue;
    const version = run(path, ["-p", "process.versions.node"]).trim();
    if (Number(version.split(".")[0]) < 22) return { path, version };
  }
  process.stderr.write(
    "[PKG-node-version] no Node older than 22 on this machine: nothing to check\n",
  );
  return undefined;
}

function spawnSyncText(
  cmd: string,
  args: string[],
  options: { cwd?: string; home?: string } = {},
): { status: number | null; stdout: string; stderr: string } {
  try {
    const stdout = execFileSync(cmd, args, {
      cwd: options.cwd,
      env: { ...env, AGENTAUTH_HOME: options.home ?? tempDir() },
      encoding: "utf8",
      stdio: "pipe",
    });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number | null; stdout: string; stderr: string };
    return { status: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}
