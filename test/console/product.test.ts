/**
 * Issue 21, the console as a product, in Chromium against `agentauth demo`: the first paint tells the truth, the
 * panels never contradict the accounts table, providers and resources by name, a short intro with the docs, a
 * confirmation before Disconnect revokes, Connect opening a new tab as Authorize does, an activity list that groups
 * repetition and can be filtered, a token timeline per account, no serious or critical axe violation in any state at
 * desktop and narrow widths (screenshots kept under test-results/screenshots/after/), and keyboard-only use.
 *
 * The tests of this file share one demo and one browser, in order: each starts where the previous one left off.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import {
  browserAvailable,
  launchBrowser,
  SCREENSHOT_DIR,
  skipWithoutBrowser,
} from "../support/browser.ts";
import { REPO_ROOT, startCli } from "../support/cli.ts";
import {
  callsIn,
  demoThread,
  invokeAs,
  type RunningDemoProcess,
  STEP_MS,
  section,
  signInAtIdp,
  signInToConsole,
  startDemoProcess,
} from "../support/console-browser.ts";

const AFTER_DIR = join(SCREENSHOT_DIR, "after");
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let demo: RunningDemoProcess;
let page: Page;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let dataDir = "";

before(async (t) => {
  if (!browserAvailable()) return;
  void t;
  // Stopped (and its folder removed) in after(), not by a test's own teardown: every test here uses it.
  demo = await startDemoProcess({ after: () => {} } as never);
  dataDir = String(
    JSON.parse(/^\{"event":"ready".*\}$/m.exec(demo.output().stdout)?.[0] ?? "{}").dataDir,
  );
  browser = await launchBrowser({ viewport: { width: 1280, height: 900 } });
  page = browser.page;
});
after(async () => {
  await browser?.close();
  await demo?.stop();
});

/** Desktop (1280 px) and narrow (390 px) screenshots of the page, then axe: no serious or critical violation. */
async function checkState(p: Page, name: string): Promise<void> {
  const { mkdirSync } = await import("node:fs");
  mkdirSync(AFTER_DIR, { recursive: true });
  const viewport = p.viewportSize() ?? { width: 1280, height: 900 };
  for (const [label, width] of [
    ["desktop", 1280],
    ["narrow", 390],
  ] as const) {
    await p.setViewportSize({ width, height: 900 });
    await p.screenshot({ path: join(AFTER_DIR, `${name}-${label}.png`), fullPage: true });
    const violations = await axe(p);
    assert.deepEqual(
      violations,
      [],
      `${name} at ${width} px: axe found serious or critical violations`,
    );
  }
  await p.setViewportSize(viewport);
}

async function axe(p: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
  await p.evaluate(AXE);
  const result = (await p.evaluate(async () => {
    const run = (globalThis as unknown as { axe: { run(o: unknown): Promise<unknown> } }).axe.run;
    return run({ resultTypes: ["violations"] });
  })) as {
    violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
}

/** A device sign-in started from a terminal (the summary's commands), approved in this browser as `user`. */
async function terminalDeviceLogin(args: string[], user: string): Promise<void> {
  const cli = startCli(args, { AGENTAUTH_HOME: dataDir });
  const [url] = await cli.waitFor("stderr", /http:\/\/127\.0\.0\.1:\d+\/device\?user_code=[A-Z-]+/);
  const tab = await browser.context.newPage();
  await tab.goto(url);
  await signInAtIdp(tab, user, "after-terminal");
  const result = await cli.exited;
  assert.equal(result.code, 0, result.stderr);
}

test("[CONSOLE-first-paint] the first paint says Loading… until the state arrives, never 'No connected accounts yet.' over a vault that holds some", {
  timeout: 180_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  await terminalDeviceLogin(
    ["login", "--issuer", demo.urls.issuer, "--device", "--subject", "alice"],
    "alice",
  );
  // Hold the state back: what does the page say before it knows?
  const held: (() => void)[] = [];
  await page.route(/\/api\/(state|events)$/, (route) => {
    held.push(() => void route.continue().catch(() => {}));
  });
  const accounts = section(page, "Connected accounts");
  try {
    await signInToConsole(page, demo.urls);
    await accounts.getByText("Loading…").waitFor({ timeout: STEP_MS });
    assert.equal(
      await accounts.getByText("No connected accounts yet.").isVisible(),
      false,
      "the page does not claim an empty vault before it knows",
    );
    await checkState(page, "01-first-paint-loading");
  } finally {
    // The later tests need the page live whatever happened here.
    await page.unroute(/\/api\/(state|events)$/);
    for (const release of held) release();
  }
  await accounts.locator("tr[data-account-id]").first().waitFor({ timeout: STEP_MS });
  assert.equal(await accounts.getByText("Loading…").isVisible(), false);
});

test("[CONSOLE-names-intro] providers and resources by their names, not raw issuer URLs; a short intro links to the docs; a timeline per account", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  await page.reload();
  const accounts = section(page, "Connected accounts");
  const row = accounts.locator("tr[data-account-id]").first();
  await row.waitFor({ timeout: STEP_MS });
  const text = String(await row.textContent());
  assert.match(text, /Demo authorization server/);
  assert.ok(
    !text.includes(demo.urls.issuer),
    `the row shows the issuer's name, not ${demo.urls.issuer}: ${text}`,
  );
  const intro = page.locator("header, main").getByRole("link", { name: /how the console works/i });
  await intro.waitFor({ timeout: STEP_MS });
  const help = await browser.context.request.get(
    new URL(String(await intro.getAttribute("href")), demo.urls.console).href,
  );
  assert.equal(help.status(), 200);
  assert.match(await help.text(), /Disconnect/);
  const timeline = row.getByRole("img", { name: /token/i });
  await timeline.waitFor({ timeout: STEP_MS });
  assert.match(String(await timeline.getAttribute("aria-label")), /expires/);
  await checkState(page, "02-accounts");
});

test("[CONSOLE-panels-agree] an ACP sign-in made from a terminal shows in the ACP panel as signed in as soon as the table lists it, without pressing a button", {
  timeout: 180_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const acp = section(page, "ACP");
  await acp.getByText("Not signed in.", { exact: true }).waitFor({ timeout: STEP_MS });
  // The summary's "ACP: sign in to the example agent", run from a terminal.
  const agent = [
    process.execPath,
    join(REPO_ROOT, "src", "cli", "main.ts"),
    "acp",
    "example-agent",
  ];
  await terminalDeviceLogin(
    ["acp", "login", "--", ...agent, "--issuer", demo.urls.issuer],
    "alice",
  );
  const accounts = section(page, "Connected accounts");
  await accounts
    .locator("tr[data-account-id]")
    .filter({ hasText: /acp-agent/ })
    .waitFor({ timeout: STEP_MS });
  await acp.getByText("Signed in.", { exact: true }).waitFor({ timeout: STEP_MS });
  await checkState(page, "03-acp-signed-in-from-terminal");
});

test("[CONSOLE-disconnect-confirm] Disconnect asks first (what it revokes and where); Cancel keeps the account, confirming revokes it", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const accounts = section(page, "Connected accounts");
  const row = accounts
    .locator("tr[data-account-id]")
    .filter({ hasText: /alice/ })
    .filter({ hasNotText: /acp-agent/ })
    .first();
  await row.getByRole("button", { name: /^Disconnect/ }).click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor({ timeout: STEP_MS });
  assert.match(String(await dialog.textContent()), /revoke/i);
  await checkState(page, "04-disconnect-confirm");
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await dialog.waitFor({ state: "hidden", timeout: STEP_MS });
  assert.equal(await row.count(), 1, "Cancel keeps the account");
  await row.getByRole("button", { name: /^Disconnect/ }).click();
  await dialog.getByRole("button", { name: /^Disconnect/ }).click();
  await row.waitFor({ state: "detached", timeout: STEP_MS });
  await page
    .getByRole("status")
    .filter({ hasText: /disconnected/i })
    .waitFor({ timeout: STEP_MS });
});

test("[CONSOLE-connect-new-tab] Connect opens the sign-in in a new tab, as Authorize does; the console tab stays and shows the account when it is done", {
  timeout: 120_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const consoleUrl = page.url();
  const [tab] = await Promise.all([
    browser.context.waitForEvent("page", { timeout: STEP_MS }),
    page.getByRole("button", { name: "Connect", exact: true }).click(),
  ]);
  assert.equal(page.url(), consoleUrl, "the console tab stays where it was");
  // This browser is still signed in at the authorization server as alice (the earlier tests): the sign-in may go
  // straight to the console's "Connected" page.
  await signInAtIdp(tab, "alice", "after-connect");
  const accounts = section(page, "Connected accounts");
  await accounts
    .locator("tr[data-account-id]")
    .filter({ hasText: /alice/ })
    .filter({ hasNotText: /acp-agent/ })
    .waitFor({ timeout: STEP_MS });
  await checkState(page, "05-connected-in-new-tab");
});

test("[CONSOLE-activity] repeated events are grouped (×N) and the list can be filtered", {
  timeout: 120_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const panel = demoThread(page);
  for (let i = 0; i < 3; i++) {
    await invokeAs(page, "carol", "echo");
    await callsIn(panel).filter({ hasText: "completed" }).nth(i).waitFor({ timeout: STEP_MS });
  }
  const activity = section(page, "Activity");
  const grouped = activity.locator("li[data-group-size]").filter({ hasText: /echo completed/ });
  await grouped.first().waitFor({ timeout: STEP_MS });
  assert.ok(Number(await grouped.first().getAttribute("data-group-size")) >= 3);
  assert.match(String(await grouped.first().textContent()), /×\s?[3-9]/);
  await activity.getByLabel("Show").selectOption({ label: "Sign-ins and sign-outs" });
  assert.equal(
    await activity
      .locator("li")
      .filter({ hasText: /echo completed/ })
      .count(),
    0,
  );
  assert.ok((await activity.locator("li").count()) > 0, "the sign-ins stay");
  await checkState(page, "06-activity-filtered");
  await activity.getByLabel("Show").selectOption({ label: "Everything" });
});

test("[CONSOLE-keyboard] keyboard only: Tab to a Disconnect button, Enter opens the confirmation with the focus in it, Escape closes it, focus returns", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  await page.locator("body").focus();
  let found = false;
  for (let presses = 0; presses < 200 && !found; presses++) {
    await page.keyboard.press("Tab");
    found = await page.evaluate(() =>
      /^Disconnect/.test(document.activeElement?.getAttribute("aria-label") ?? ""),
    );
  }
  assert.ok(found, "Tab reaches a Disconnect button");
  assert.ok(
    await page.evaluate(() => document.activeElement?.matches(":focus-visible")),
    "visibly focused",
  );
  const label = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await dialog.waitFor({ timeout: STEP_MS });
  assert.ok(
    await dialog.evaluate((d) => d.contains(document.activeElement)),
    "the focus is in the dialog",
  );
  await checkState(page, "07-keyboard-confirm");
  await page.keyboard.press("Escape");
  await dialog.waitFor({ state: "hidden", timeout: STEP_MS });
  assert.equal(
    await page.evaluate(() => document.activeElement?.getAttribute("aria-label")),
    label,
  );
});

test("[CONSOLE-link-browser] a link opened first by another browser (a previewer) leaves the person a way in: the page names console --link, whose fresh link works", {
  timeout: 60_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const other = await launchBrowser();
  try {
    await other.page.goto(demo.urls.consoleLogin);
    await checkState(other.page, "08-signed-out");
    const text = String(await other.page.textContent("body"));
    assert.match(text, /console --link/);
    const cli = startCli(["console", "--link"], { AGENTAUTH_HOME: dataDir });
    const [, link] = await cli.waitFor("stdout", /\n {2}(http\S+)\n/);
    await cli.exited;
    await other.page.goto(String(link));
    await other.page
      .getByRole("heading", { level: 1, name: "agentauth console" })
      .waitFor({ timeout: STEP_MS });
    await section(other.page, "Connected accounts")
      .locator("tr[data-account-id]")
      .first()
      .waitFor({ timeout: STEP_MS });
  } finally {
    await other.close();
  }
});
