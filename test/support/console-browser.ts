/**
 * Test support for the console's browser tests: `agentauth demo` as a child process (ready line, Ctrl-C), Chromium
 * opened on it, the page's landmarks (docs/console.md "The page") as locators, and the person's part on the
 * authorization server's pages. Chromium itself comes from ./browser.ts.
 */

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { type LaunchedBrowser, launchBrowser, screenshot } from "./browser.ts";
import { REPO_ROOT } from "./cli.ts";

const MAIN = join(REPO_ROOT, "src", "cli", "main.ts");

/** How long one browser step may wait for the page (a person's patience, not a performance claim). */
export const STEP_MS = 30_000;

export interface DemoUrls {
  console: string;
  consoleLogin: string;
  issuer: string;
  [name: string]: string;
}

export interface RunningDemoProcess {
  urls: DemoUrls;
  output(): { stdout: string; stderr: string };
  /** Ctrl-C, then waits for the exit; resolves with the exit code (130 expected). */
  stop(): Promise<number | null>;
}

/** `agentauth demo --json --data-dir <tmp> --fresh` with its own AGENTAUTH_HOME; resolves on the ready line. */
export async function startDemoProcess(t: TestContext): Promise<RunningDemoProcess> {
  const home = mkdtempSync(join(tmpdir(), "agentauth-browser-"));
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith("AGENTAUTH_") || name === "NODE_TEST_CONTEXT") delete env[name];
  }
  const child = spawn(
    process.execPath,
    [MAIN, "demo", "--json", "--data-dir", join(home, "demo"), "--fresh"],
    { cwd: REPO_ROOT, env: { ...env, AGENTAUTH_HOME: home }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const text = { stdout: "", stderr: "" };
  const exited = new Promise<number | null>((resolve) => {
    child.once("close", (code) => resolve(code));
  });
  let stopped: Promise<number | null> | undefined;
  const stop = () => {
    stopped ??= stopChild(child, exited).finally(() =>
      rmSync(home, { recursive: true, force: true }),
    );
    return stopped;
  };
  t.after(stop);
  const ready = new Promise<DemoUrls>((resolve, reject) => {
    for (const stream of ["stdout", "stderr"] as const) {
      child[stream].setEncoding("utf8");
      child[stream].on("data", (chunk: string) => {
        text[stream] += chunk;
        const line = /^\{"event":"ready".*\}$/m.exec(text.stdout)?.[0];
        if (line) resolve(readyUrls(line));
      });
    }
    child.once("error", reject);
    void exited.then((code) =>
      reject(
        new Error(
          `agentauth demo exited (${code}) before its ready line\nstdout: ${text.stdout}\nstderr: ${text.stderr}`,
        ),
      ),
    );
  });
  return { urls: await ready, output: () => ({ ...text }), stop };
}

function readyUrls(line: string): DemoUrls {
  const ready = JSON.parse(line) as { urls?: Partial<DemoUrls> };
  const urls = ready.urls;
  assert.ok(urls, `the ready line has urls: ${line}`);
  assert.match(String(urls.console), /^http:\/\/127\.0\.0\.1:\d+\/$/);
  assert.match(String(urls.consoleLogin), /^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
  return urls as DemoUrls;
}

/** SIGINT (Ctrl-C) and wait; a demo that does not end after its own grace period is killed so nothing leaks. */
async function stopChild(
  child: ChildProcess,
  exited: Promise<number | null>,
): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill("SIGINT");
  const backstop = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    return await exited;
  } finally {
    clearTimeout(backstop);
  }
}

export async function openBrowser(t: TestContext): Promise<LaunchedBrowser> {
  const browser = await launchBrowser({ viewport: { width: 1100, height: 900 } });
  t.after(() => browser.close());
  // A confirm() before Disconnect is a person's "OK".
  browser.context.on("page", (page) => page.on("dialog", (dialog) => void dialog.accept()));
  browser.page.on("dialog", (dialog) => void dialog.accept());
  return browser;
}

/** The `<section>` whose `<h2>` is `name`. */
export function section(page: Page, name: string): Locator {
  return page
    .locator("section")
    .filter({ has: page.getByRole("heading", { level: 2, name, exact: true }) });
}

export function demoThread(page: Page): Locator {
  return section(page, "Demo thread (RAP)");
}

export function callsIn(panel: Locator): Locator {
  return panel.locator("li[data-call-id]");
}

export async function signInToConsole(page: Page, urls: DemoUrls): Promise<void> {
  await page.goto(urls.consoleLogin);
  await page
    .getByRole("heading", { level: 1, name: "agentauth console" })
    .waitFor({ timeout: STEP_MS });
  assert.equal(
    new URL(page.url()).search,
    "",
    "the one-time token left the address bar (303 to /)",
  );
}

export async function invokeAs(page: Page, user: string, operation: string): Promise<void> {
  const panel = demoThread(page);
  await panel.getByLabel("User").selectOption(user);
  await panel.getByLabel("Operation").selectOption(operation);
  await panel.getByRole("button", { name: "Invoke", exact: true }).click();
}

/** The tab the Authorize link opens (target=_blank), after the click that opens it. */
export async function followAuthorize(context: BrowserContext, link: Locator): Promise<Page> {
  const [tab] = await Promise.all([
    context.waitForEvent("page", { timeout: STEP_MS }),
    link.click(),
  ]);
  await tab.waitForLoadState("domcontentloaded");
  return tab;
}

/**
 * Plays the person on the authorization server's pages in `tab`, whatever the order they come in: confirm the
 * device code (Continue), sign in, Allow; done at "Signed in". Each step waits for the next page's heading.
 */
export async function signInAtIdp(tab: Page, user: string, shots: string): Promise<void> {
  const heading = tab.getByRole("heading", { level: 1 });
  let title = "";
  for (let step = 1; step <= 6; step++) {
    const next = title
      ? heading.filter({ hasNotText: new RegExp(`^${escapeRegExp(title)}$`) })
      : heading;
    await next.waitFor({ timeout: STEP_MS });
    title = (await heading.textContent())?.trim() ?? "";
    await screenshot(tab, `${shots}-idp-${step}`);
    // "Connected": the console's own callback page, where a Connect ends.
    if (/^(signed in|connected)$/i.test(title)) return tab.close();
    if (/confirm device|connect a device/i.test(title)) {
      await tab.getByRole("button", { name: "Continue" }).click();
    } else if (/^sign in$/i.test(title)) {
      await tab.getByLabel(/^user/i).fill(user);
      await tab.getByLabel(/^password/i).fill(user);
      await tab.getByRole("button", { name: "Sign in" }).click();
    } else if (await tab.getByRole("button", { name: "Allow", exact: true }).count()) {
      await tab.getByRole("button", { name: "Allow", exact: true }).click();
    } else {
      throw new Error(
        `unexpected page at the authorization server: ${title}: ${await tab.textContent("body")}`,
      );
    }
  }
  throw new Error(`the sign-in did not finish: last page ${title}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Marks the page's window: the mark survives only while the page is never reloaded or left. */
export async function markWindow(page: Page): Promise<void> {
  await page.evaluate(() => {
    (globalThis as unknown as { agentauthNoReload: boolean }).agentauthNoReload = true;
  });
}

export async function windowMarked(page: Page): Promise<boolean> {
  return page.evaluate(
    () => (globalThis as unknown as { agentauthNoReload?: boolean }).agentauthNoReload === true,
  );
}

/** A page of another origin on loopback ("Another site"), closed when the test ends. */
export async function startAttackerPage(t: TestContext): Promise<{ port: number }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(
      '<!doctype html><html lang="en"><title>Another site</title><h1>Another site</h1></html>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { port: address.port };
}

/** The part of ConsoleState (src/console/wire.ts) this file reads. */
export interface ConsoleStateShape {
  pending: unknown[];
  panels: { id: string; state: { calls?: unknown[] } }[];
}

/** docs/console.png: the whole console page, 1280 px wide (AGENTAUTH_README_SCREENSHOT=1). */
export async function readmeScreenshot(page: Page): Promise<void> {
  const path = join(REPO_ROOT, "docs", "console.png");
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path, fullPage: true });
  const size = statSync(path).size;
  assert.ok(size < 300_000, `docs/console.png is ${size} bytes; keep it under 300 KB`);
}
