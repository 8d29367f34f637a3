/**
 * The console in a real browser: `agentauth demo` as a child process, Debian's Chromium driven by playwright-core,
 * and only what a person does — select, click, type, Tab, Enter — on the console page, the example RAP tool's
 * consent page and the embedded authorization server's sign-in and consent pages.
 *
 * Screenshots of every step go to test-results/screenshots/ (CI keeps the folder). With
 * AGENTAUTH_README_SCREENSHOT=1 the ACP/AHP test also writes docs/console.png, the README's picture of the console
 * (every panel busy: ACP and AHP signed in, a finished RAP call).
 */

import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { CHROMIUM_PATH, screenshot, skipWithoutBrowser } from "../support/browser.ts";
import {
  type ConsoleStateShape,
  callsIn,
  demoThread,
  followAuthorize,
  invokeAs,
  markWindow,
  openBrowser,
  readmeScreenshot,
  STEP_MS,
  section,
  signInAtIdp,
  signInToConsole,
  startAttackerPage,
  startDemoProcess,
  windowMarked,
} from "../support/console-browser.ts";

test("[CONSOLE-browser-rap-journey] in Chromium, by clicking: invoke as alice, authorize in a new tab (tool consent, IdP sign-in, consent), the result arrives without reload, the account shows, Disconnect removes it, the next call asks again", {
  timeout: 240_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const demo = await startDemoProcess(t);
  const { context, page } = await openBrowser(t);

  // 1. The printed login link opens the console.
  await signInToConsole(page, demo.urls);
  const accounts = section(page, "Connected accounts");
  await accounts.getByText("No connected accounts yet.").waitFor({ timeout: STEP_MS });
  assert.equal(await accounts.locator("tr[data-account-id]").count(), 0, "a fresh demo vault");
  await screenshot(page, "rap-journey-01-console");
  await markWindow(page);

  // 2. The demo thread: alice invokes whoami; the call waits for her authorization.
  await invokeAs(page, "alice", "whoami");
  const panel = demoThread(page);
  const waiting = callsIn(panel).filter({ hasText: "waiting for authorization" });
  await waiting.first().waitFor({ timeout: STEP_MS });
  assert.equal(await waiting.count(), 1, "one call waits");
  const firstCall = waiting.first();
  const callId = await firstCall.getAttribute("data-call-id");
  assert.ok(callId, "the call has an id");
  const pending = section(page, "Pending authorizations").locator(`li[data-call-id="${callId}"]`);
  await pending.waitFor({ timeout: STEP_MS });
  assert.match(
    String(await pending.textContent()),
    /whoami.*for alice/,
    "whose account it will be",
  );
  const authorize = firstCall.getByRole("link", { name: "Authorize" });
  assert.equal(await authorize.getAttribute("target"), "_blank");
  assert.match(String(await authorize.getAttribute("rel")), /noopener/);
  await screenshot(page, "rap-journey-02-waiting-for-authorization");

  // 3. Authorize opens the tool's consent page in a new tab: Continue.
  const tab = await followAuthorize(context, authorize);
  await tab.getByRole("button", { name: /^Continue/ }).waitFor({ timeout: STEP_MS });
  await screenshot(tab, "rap-journey-03-tool-consent");
  await tab.getByRole("button", { name: /^Continue/ }).click();

  // 4. The authorization server's sign-in page: alice / alice.
  await tab.getByRole("button", { name: "Sign in" }).waitFor({ timeout: STEP_MS });
  await tab.getByLabel(/^user/i).fill("alice");
  await tab.getByLabel(/^password/i).fill("alice");
  await screenshot(tab, "rap-journey-04-idp-sign-in");
  await tab.getByRole("button", { name: "Sign in" }).click();

  // 5. The authorization server's consent page: Allow.
  const allow = tab.getByRole("button", { name: "Allow", exact: true });
  await allow.waitFor({ timeout: STEP_MS });
  await screenshot(tab, "rap-journey-05-idp-consent");
  await allow.click();

  // 6. Back at the tool: signed in.
  await tab.getByRole("heading", { level: 1, name: /signed in/i }).waitFor({ timeout: STEP_MS });
  await screenshot(tab, "rap-journey-06-tool-signed-in");
  await tab.close();

  // 7. The console tab, never reloaded: the call completed with its result, alice's account is listed.
  await page.bringToFront();
  const sameCall = panel.locator(`li[data-call-id="${callId}"]`);
  await sameCall.filter({ hasText: "completed" }).waitFor({ timeout: STEP_MS });
  const result = sameCall.locator("output");
  await result.filter({ hasText: /You are alice/ }).waitFor({ timeout: STEP_MS });
  assert.equal(await sameCall.getByRole("link", { name: "Authorize" }).count(), 0);
  const aliceRow = accounts.locator("tr[data-account-id]").filter({ hasText: "alice" });
  await aliceRow.waitFor({ timeout: STEP_MS });
  assert.equal(await aliceRow.count(), 1, "one account for alice");
  assert.ok(await windowMarked(page), "the result arrived without a reload");
  assert.doesNotMatch(
    await page.content(),
    /access_token|refresh_token|code_verifier|[?&]code=|[?&]token=|Bearer /,
    "the page holds no token, code or verifier",
  );
  await screenshot(page, "rap-journey-07-result-and-account");

  // 8. Disconnect: asked first (issue 21), then the row goes away and the live region says so.
  await aliceRow.getByRole("button", { name: /^Disconnect/ }).click();
  await page
    .getByRole("dialog")
    .getByRole("button", { name: /^Disconnect/ })
    .click();
  await aliceRow.waitFor({ state: "detached", timeout: STEP_MS });
  await page
    .getByRole("status")
    .filter({ hasText: /disconnected/i })
    .waitFor({ timeout: STEP_MS });
  await accounts.getByText("No connected accounts yet.").waitFor({ timeout: STEP_MS });
  await screenshot(page, "rap-journey-08-disconnected");

  // 9. The next call asks again.
  await invokeAs(page, "alice", "whoami");
  const asksAgain = panel
    .locator(`li[data-call-id]:not([data-call-id="${callId}"])`)
    .filter({ hasText: "waiting for authorization" });
  await asksAgain.first().waitFor({ timeout: STEP_MS });
  assert.notEqual(await asksAgain.first().getAttribute("data-call-id"), callId);
  await asksAgain.first().getByRole("link", { name: "Authorize" }).waitFor({ timeout: STEP_MS });
  assert.ok(await windowMarked(page), "still the same page");
  await screenshot(page, "rap-journey-09-asks-again");

  // 10. Ctrl-C stops the demo.
  assert.equal(await demo.stop(), 130, demo.output().stderr);
});

test("[CONSOLE-browser-acp-ahp] in Chromium, by clicking: Sign in (ACP) and Authenticate (AHP) show a device prompt whose link signs in at the authorization server, the panels then say signed in; Sign out (ACP) signs out", {
  timeout: 240_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const demo = await startDemoProcess(t);
  const { context, page } = await openBrowser(t);
  await signInToConsole(page, demo.urls);
  await markWindow(page);

  // ACP: the demo's own ACP client signs in to the example agent with the device flow.
  // The panel checks the agent's status first (a click meanwhile is refused as busy): wait for its answer.
  const acp = section(page, "ACP");
  await acp.getByText("Not signed in.", { exact: true }).waitFor({ timeout: STEP_MS });
  await acp.getByRole("button", { name: "Sign in (ACP)" }).click();
  const acpLink = acp.getByRole("link");
  await acpLink.waitFor({ timeout: STEP_MS });
  assert.match(String(await acp.textContent()), /enter the code [A-Z0-9-]+/);
  await screenshot(page, "acp-ahp-01-acp-device-prompt");
  await signInAtIdp(await followAuthorize(context, acpLink), "alice", "acp-ahp-02-acp");
  await acp.getByText("Signed in.", { exact: true }).waitFor({ timeout: STEP_MS });
  await acpLink.waitFor({ state: "detached", timeout: STEP_MS });
  await screenshot(page, "acp-ahp-03-acp-signed-in");

  // AHP: the demo's AHP client authenticates to the example host's resources (the browser's IdP session stays).
  const ahp = section(page, "AHP");
  await ahp.getByRole("button", { name: "Authenticate (AHP)" }).click();
  const ahpLink = ahp.getByRole("link");
  await ahpLink.waitFor({ timeout: STEP_MS });
  await signInAtIdp(await followAuthorize(context, ahpLink), "alice", "acp-ahp-04-ahp");
  const resources = ahp.locator("li[data-resource]");
  await resources.first().waitFor({ timeout: STEP_MS });
  const count = await resources.count();
  assert.ok(count >= 1, "the example host protects resources");
  await ahp
    .locator("li[data-resource]")
    .filter({ hasText: /: signed in, as / })
    .nth(count - 1)
    .waitFor({ timeout: STEP_MS });
  assert.equal(await resources.filter({ hasText: "not signed in" }).count(), 0);
  assert.ok(await windowMarked(page), "the panels changed without a reload");
  await screenshot(page, "acp-ahp-05-ahp-signed-in");
  if (process.env.AGENTAUTH_README_SCREENSHOT === "1") {
    // The RAP panel with a finished call too, for the README's picture of every protocol at once.
    await invokeAs(page, "alice", "echo");
    await callsIn(demoThread(page))
      .filter({ hasText: "completed" })
      .first()
      .waitFor({ timeout: STEP_MS });
    await readmeScreenshot(page);
  }

  // Sign out (ACP).
  await acp.getByRole("button", { name: "Sign out (ACP)" }).click();
  await acp.getByText("Not signed in.", { exact: true }).waitFor({ timeout: STEP_MS });
  await screenshot(page, "acp-ahp-06-acp-signed-out");

  assert.equal(await demo.stop(), 130, demo.output().stderr);
});

test("[CONSOLE-browser-keyboard] in Chromium, by keyboard only: Tab reaches Invoke (with a visible focus), Enter invokes, the call waits for authorization", {
  timeout: 180_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const demo = await startDemoProcess(t);
  const { page } = await openBrowser(t);
  await signInToConsole(page, demo.urls);
  const panel = demoThread(page);
  const invoke = panel.getByRole("button", { name: "Invoke", exact: true });
  await invoke.waitFor({ timeout: STEP_MS });
  assert.equal(await callsIn(panel).count(), 0, "no calls yet");

  // Tab from the top of the page until the Invoke button has the focus.
  await page.locator("body").focus();
  let focused = false;
  for (let presses = 0; presses < 200 && !focused; presses++) {
    await page.keyboard.press("Tab");
    focused = await invoke.evaluate((button) => button === document.activeElement);
  }
  assert.ok(focused, "Tab reaches Invoke");
  assert.ok(
    await invoke.evaluate((button) => button.matches(":focus-visible")),
    "the focus is visible",
  );
  await screenshot(page, "keyboard-01-invoke-focused");

  await page.keyboard.press("Enter");
  const waiting = callsIn(panel).filter({ hasText: "waiting for authorization" });
  await waiting.first().waitFor({ timeout: STEP_MS });
  assert.equal(await waiting.count(), 1);
  await waiting.first().getByRole("link", { name: "Authorize" }).waitFor({ timeout: STEP_MS });
  await screenshot(page, "keyboard-02-invoked");

  assert.equal(await demo.stop(), 130, demo.output().stderr);
});

test("[CONSOLE-browser-zoom] in Chromium at 400 % zoom (320 CSS px): one column, nothing wider than the window", {
  timeout: 180_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const demo = await startDemoProcess(t);
  const { page } = await openBrowser(t);
  await signInToConsole(page, demo.urls);
  // A finished call with its result and a waiting one with its Authorize link, so every part has content.
  await invokeAs(page, "alice", "echo");
  const panel = demoThread(page);
  await callsIn(panel).filter({ hasText: "completed" }).first().waitFor({ timeout: STEP_MS });
  await invokeAs(page, "bob", "whoami");
  await callsIn(panel)
    .filter({ hasText: "waiting for authorization" })
    .first()
    .waitFor({ timeout: STEP_MS });

  // 1280 px at 400 % = 320 CSS px (WCAG 1.4.10 reflow).
  await page.setViewportSize({ width: 320, height: 256 });
  const overflow = await page.evaluate(() => {
    const root = document.documentElement;
    const right = (element: Element) => element.getBoundingClientRect().right;
    const tooWide = (element: Element) => right(element) > root.clientWidth + 1;
    // The outermost elements that stick out, named so a failure says where to look.
    const wide = Array.from(document.querySelectorAll("body *"))
      .filter(
        (element) => tooWide(element) && !(element.parentElement && tooWide(element.parentElement)),
      )
      .map(
        (element) =>
          `<${element.tagName.toLowerCase()}${element.id ? ` id=${element.id}` : ""}> ${Math.round(right(element))} px "${(element.textContent ?? "").trim().slice(0, 60)}"`,
      );
    return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide };
  });
  await screenshot(page, "zoom-400-top");
  await panel.getByRole("button", { name: "Invoke", exact: true }).scrollIntoViewIfNeeded();
  await screenshot(page, "zoom-400-demo-thread");
  assert.ok(
    overflow.scrollWidth <= overflow.clientWidth,
    `at 400 % zoom the page is ${overflow.scrollWidth} px wide in a ${overflow.clientWidth} px window; ` +
      `sticking out: ${overflow.wide.join("; ")}`,
  );
  assert.equal(await demo.stop(), 130, demo.output().stderr);
});

test("[CONSOLE-browser-session] in Chromium: no session → the sign-in-needed page; the printed link works once and sets an HttpOnly SameSite=Strict cookie the page cannot read; another site's page cannot invoke", {
  timeout: 180_000,
}, async (t) => {
  if (skipWithoutBrowser(t)) return;
  const demo = await startDemoProcess(t);
  const { context, page } = await openBrowser(t);

  // Without the link: 401 and how to get a fresh one.
  const bare = await page.goto(demo.urls.console);
  assert.equal(bare?.status(), 401);
  await page.getByText(/no console session/i).waitFor({ timeout: STEP_MS });
  await screenshot(page, "session-01-no-session");

  // The link: a session cookie the page's script cannot read.
  await signInToConsole(page, demo.urls);
  const cookies = await context.cookies(demo.urls.console);
  const session = cookies.find((cookie) => cookie.name === "agentauth_console");
  assert.ok(session, "the session cookie is set");
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, "Strict");
  assert.equal(session.path, "/");
  assert.doesNotMatch(await page.evaluate(() => document.cookie), /agentauth_console/);

  // Pages of other origins, served by a plain loopback server of this test, send what a browser lets them: a
  // cookie-carrying no-cors POST, and a JSON POST that needs a CORS preflight. Nothing may happen.
  const attacker = await startAttackerPage(t);
  const attack = async (origin: string): Promise<string[]> => {
    const tab = await context.newPage();
    try {
      await tab.goto(`${origin}/`);
      await tab.getByRole("heading", { name: "Another site" }).waitFor({ timeout: STEP_MS });
      return await tab.evaluate(async (target) => {
        const outcomes: string[] = [];
        const body = JSON.stringify({ user: "alice", operation: "echo", input: { text: "csrf" } });
        try {
          await fetch(target, {
            method: "POST",
            mode: "no-cors",
            credentials: "include",
            headers: { "content-type": "text/plain" },
            body,
          });
          outcomes.push("no-cors: sent, answer opaque");
        } catch (error) {
          outcomes.push(`no-cors: ${(error as Error).name}`);
        }
        try {
          const answer = await fetch(target, {
            method: "POST",
            credentials: "include",
            headers: { "content-type": "application/json" },
            body,
          });
          outcomes.push(`cors: readable ${answer.status}`);
        } catch (error) {
          outcomes.push(`cors: ${(error as Error).name}`);
        }
        return outcomes;
      }, `${demo.urls.console}api/panels/rap/invoke`);
    } finally {
      await tab.close();
    }
  };
  // Another port of 127.0.0.1 is the same site (the SameSite=Strict cookie goes along): the console itself must
  // refuse (foreign Origin, not JSON, no CSRF token). localhost is another site (no cookie, Sec-Fetch-Site).
  for (const origin of [`http://127.0.0.1:${attacker.port}`, `http://localhost:${attacker.port}`]) {
    assert.deepEqual(
      await attack(origin),
      ["no-cors: sent, answer opaque", "cors: TypeError"],
      `from ${origin}: the simple request is answered (opaquely), the preflighted one never leaves the browser`,
    );
  }
  // Every attacking request was answered before fetch resolved; the console's own state shows none was run.
  const state = await page.evaluate(async () => {
    const answer = await fetch("/api/state");
    return (await answer.json()) as ConsoleStateShape;
  });
  const rap = state.panels.find((panel) => panel.id === "rap");
  assert.ok(rap, "the demo has the RAP panel");
  assert.deepEqual(rap.state.calls, [], "no call was invoked from another site");
  assert.equal(state.pending.length, 0);
  await screenshot(page, "session-02-signed-in-nothing-invoked");

  // The link worked once: a browser without the cookie cannot use it again.
  await context.clearCookies();
  const again = await page.goto(demo.urls.consoleLogin);
  assert.equal(again?.status(), 401, "the one-time token is spent");
  await page.getByText(/no console session/i).waitFor({ timeout: STEP_MS });
  await screenshot(page, "session-03-link-spent");

  assert.equal(await demo.stop(), 130, demo.output().stderr);
});

test("[CONSOLE-browser-skip-rule] without Chromium the browser tests skip with a notice, unless AGENTAUTH_REQUIRE_BROWSER=1 makes that a failure", () => {
  const missing = join(tmpdir(), "agentauth-no-such-chromium", "chromium");
  const skipped: string[] = [];
  const notices: string[] = [];
  const context = { skip: (message?: string) => void skipped.push(String(message)) };
  const notice = (line: string) => void notices.push(line);

  assert.equal(skipWithoutBrowser(context, { path: missing, env: {}, notice }), true);
  assert.equal(skipped.length, 1);
  assert.match(skipped[0] ?? "", /not found: the console's browser test is skipped/);
  assert.match(notices[0] ?? "", /^notice: .*bash scripts\/ensure-chromium\.sh/);

  assert.throws(
    () =>
      skipWithoutBrowser(context, {
        path: missing,
        env: { AGENTAUTH_REQUIRE_BROWSER: "1" },
        notice,
      }),
    /not found and AGENTAUTH_REQUIRE_BROWSER=1: the browser test must run here/,
  );
  assert.equal(skipped.length, 1, "a required browser is never skipped");

  // Chromium present: nothing skipped, nothing printed.
  const present = { path: process.execPath, env: { AGENTAUTH_REQUIRE_BROWSER: "1" }, notice };
  assert.equal(skipWithoutBrowser(context, present), false);
  assert.equal(notices.length, 1);
  assert.equal(CHROMIUM_PATH, "/usr/bin/chromium");
});
