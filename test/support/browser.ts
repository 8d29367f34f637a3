/**
 * Test support: Debian's Chromium driven by playwright-core, for the console's browser tests.
 *
 * Chromium runs headless with a fresh profile in a temp folder and without any background networking (the test
 * machines have no network besides loopback). A machine without /usr/bin/chromium skips the browser tests with a
 * printed notice; with AGENTAUTH_REQUIRE_BROWSER=1 (CI) a missing Chromium is a failure instead.
 */

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { REPO_ROOT } from "./cli.ts";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Where every browser test writes its screenshots (gitignored; CI keeps the folder). */
export const SCREENSHOT_DIR = join(REPO_ROOT, "test-results", "screenshots");

/** The flags the issue asks for: headless, no sandbox (containers), no GPU, no QUIC, nothing fetched in the background. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function browserAvailable(path: string = CHROMIUM_PATH): boolean {
  return existsSync(path);
}

export function browserRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AGENTAUTH_REQUIRE_BROWSER === "1";
}

export function missingBrowserNotice(path: string = CHROMIUM_PATH): string {
  return (
    `${path} not found: the console's browser test is skipped. ` +
    "Install Chromium with `bash scripts/ensure-chromium.sh` to run it."
  );
}

export interface SkipRuleOptions {
  /** Where Chromium must be (default /usr/bin/chromium); tests of the rule itself pass another path. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  /** Where the notice goes (default stderr). */
  notice?: (line: string) => void;
}

/**
 * The skip rule. Returns true when the test was skipped (the caller returns at once). Without Chromium: skip with
 * a notice on stderr, or throw (a failure) when AGENTAUTH_REQUIRE_BROWSER=1.
 */
export function skipWithoutBrowser(
  t: Pick<TestContext, "skip">,
  options: SkipRuleOptions = {},
): boolean {
  const path = options.path ?? CHROMIUM_PATH;
  if (browserAvailable(path)) return false;
  if (browserRequired(options.env)) {
    throw new Error(
      `${path} not found and AGENTAUTH_REQUIRE_BROWSER=1: the browser test must run here. ` +
        "Install Chromium with `bash scripts/ensure-chromium.sh`.",
    );
  }
  const notice = missingBrowserNotice(path);
  (options.notice ?? ((line) => console.error(line)))(`notice: ${notice}`);
  t.skip(notice);
  return true;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  /** The first tab. */
  page: Page;
  userDataDir: string;
  /** Closes Chromium and removes its profile folder; safe to call twice. */
  close(): Promise<void>;
}

export interface LaunchOptions {
  viewport?: { width: number; height: number };
  deviceScaleFactor?: number;
}

/**
 * Starts Chromium with a fresh profile. Playwright refuses `--user-data-dir` among the arguments, so the profile
 * folder goes through launchPersistentContext, which passes it to Chromium as that flag.
 */
export async function launchBrowser(options: LaunchOptions = {}): Promise<LaunchedBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), "agentauth-chromium-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport: options.viewport ?? { width: 1280, height: 900 },
      deviceScaleFactor: options.deviceScaleFactor ?? 1,
    });
  } catch (error) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw error;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  let closed = false;
  return {
    context,
    page,
    userDataDir,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  };
}

/** A full-page screenshot at test-results/screenshots/<step>.png; returns the file's path. */
export async function screenshot(page: Page, step: string): Promise<string> {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(step)) throw new Error(`screenshot step name ${step}`);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${step}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
