import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { startExampleHost } from "../../src/ahp/host/index.ts";
import { ActivityLog, type ConsolePanel } from "../../src/console/index.ts";
import type { AcpPanelState, AhpPanelState } from "../../src/console/wire.ts";
import { consentForm, FollowLinkError, followLink, pageText } from "../../src/demo/follow-link.ts";
import { acpLogin, acpLogout, acpSession, acpStatus } from "../../src/demo/journeys/acp.ts";
import { connectAhpJourney } from "../../src/demo/journeys/ahp.ts";
import { createAcpPanel } from "../../src/demo/panels/acp.ts";
import { createAhpPanel } from "../../src/demo/panels/ahp.ts";
import { openVault } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";

test("[DEMO-journey-acp] status → login (device flow, auto-approved) → session → logout against the example agent process", {
  timeout: 120_000,
}, async () => {
  const idp = await useIdp();
  const dataDir = tempDir("agentauth-demo-acp-");
  const ctx = { issuer: idp.issuer, dataDir };
  const before = await acpStatus(ctx);
  assert.equal(before.signedIn, false);
  assert.ok(before.methods.some((m) => m.id === "oauth"));
  await assert.rejects(acpSession(ctx), "signed out, a session is refused (no login started)");
  const prompts: unknown[] = [];
  const login = await acpLogin(ctx, { autoApprove: true, onPrompt: (p) => prompts.push(p) });
  assert.equal(login.outcome, "signed_in");
  assert.equal(login.signedIn, true);
  assert.equal(prompts.length, 1);
  const session = await acpSession(ctx);
  assert.ok(session.sessionId);
  assert.equal(session.stopReason, "end_turn");
  assert.match(
    session.reply,
    /hello from the agentauth demo/,
    "the agent's echo arrives as session/update",
  );
  const after = await acpLogout(ctx);
  assert.equal(after.signedIn, false);
  assert.equal((await acpStatus(ctx)).signedIn, false);
});

test("[DEMO-journey-ahp-renewal] the demo's AHP client authenticates the example host's resources with short demo-IdP tokens, then renews them before they expire", {
  timeout: 120_000,
}, async () => {
  // Short resource tokens (the demo sets ~6 s) so expiry and renewal happen within the test.
  const idp = await useIdp({ accessTokenTtlSeconds: 6 });
  const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
  const home = tempDir("agentauth-demo-ahp-");
  const store = openVault({ home, env: {} });
  const prompts: unknown[] = [];
  const journey = await connectAhpJourney(
    { ahpUrl: host.url, store },
    { autoApprove: true, onPrompt: (p) => prompts.push(p) },
  );
  try {
    const before = await journey.resources();
    assert.deepEqual(before.map((r) => r.resource).sort(), [
      "https://alpha.example.test/",
      "https://beta.example.test/",
    ]);
    assert.ok(before.every((r) => !r.authenticated && r.subject === null));
    const outcomes = await journey.authenticate();
    assert.equal(outcomes.length, 2);
    assert.equal(prompts.length, 1, "one device sign-in covers both resources on one server");
    const after = await journey.resources();
    assert.ok(after.every((r) => r.authenticated && r.subject !== null && r.expiresAt !== null));
    const alpha = after.find((r) => r.resource === "https://alpha.example.test/");
    const expiresAt = alpha?.expiresAt ?? 0;
    const renewal = await journey.nextRenewal({ resource: "https://alpha.example.test/" });
    assert.equal(renewal.resource, "https://alpha.example.test/");
    const renewed = (await journey.resources()).find((r) => r.resource === renewal.resource);
    assert.ok(renewed && renewed.renewals >= 1 && renewed.lastRenewalAt !== null);
    assert.ok((renewed.expiresAt ?? 0) > expiresAt, "the renewed token expires later");
    assert.deepEqual(await journey.client.request("whoami", {}).then((r) => typeof r), "object");
    assert.equal(JSON.stringify(after).includes("eyJ"), false, "no token in the view");
  } finally {
    await journey.close();
    await host.close();
    await store.close();
  }
});

/** Resolves once the panel's state satisfies `ready` (checked on every change). */
function until<T>(panel: ConsolePanel, ready: (state: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const check = () => {
      const state = panel.state() as T;
      if (!ready(state)) return;
      stop();
      resolve(state);
    };
    const stop = panel.onChange(check);
    check();
  });
}

async function vaultTokens(home: string): Promise<string[]> {
  const store = openVault({ home, env: {} });
  try {
    const out: string[] = [];
    for (const summary of await store.list()) {
      const record = await store.get(summary);
      if (record?.tokens.accessToken) out.push(record.tokens.accessToken.reveal());
      if (record?.tokens.refreshToken) out.push(record.tokens.refreshToken.reveal());
    }
    return out;
  } finally {
    await store.close();
  }
}

test("[DEMO-panel-acp] the ACP panel: refresh, login answers with the device prompt for the person, the person approves, logout; activity recorded, no token in state, a second action while busy is refused", {
  timeout: 120_000,
}, async () => {
  const idp = await useIdp();
  const dataDir = tempDir("agentauth-demo-acp-panel-");
  const activity = new ActivityLog();
  const panel = createAcpPanel({ issuer: idp.issuer, dataDir, activity, checkOnStart: false });
  try {
    assert.equal((panel.state() as AcpPanelState).signedIn, null);
    const checked = (await panel.actions.refresh?.({})) as AcpPanelState;
    assert.equal(checked.signedIn, false);
    assert.ok(checked.methods.some((m) => m.id === "oauth"));
    assert.match(checked.agentCommand, /acp example-agent --issuer/);
    const waiting = (await panel.actions.login?.({ unexpected: "<script>" })) as AcpPanelState;
    assert.equal(waiting.busy, "login");
    assert.ok(waiting.prompt?.verificationUriComplete, "the link for the person");
    assert.ok(waiting.prompt?.userCode);
    await assert.rejects(panel.actions.logout?.({}) ?? Promise.reject(), {
      code: "demo_panel_busy",
    });
    // The person opens the link (the test IdP signs in as alice by itself).
    await (await fetch(waiting.prompt.verificationUriComplete)).arrayBuffer();
    const signedIn = await until<AcpPanelState>(panel, (s) => s.busy === null);
    assert.equal(signedIn.signedIn, true, signedIn.lastError ?? "");
    assert.equal(signedIn.prompt, null);
    assert.ok(activity.list().some((e) => e.component === "acp" && e.kind === "sign_in"));
    const tokens = await vaultTokens(dataDir);
    assert.ok(tokens.length > 0);
    const json = JSON.stringify(panel.state());
    for (const token of tokens) assert.equal(json.includes(token), false, "no token in the state");
    const out = (await panel.actions.logout?.({})) as AcpPanelState;
    assert.equal(out.signedIn, false);
    assert.ok(activity.list().some((e) => e.component === "acp" && e.kind === "logout"));
  } finally {
    await panel.close?.();
  }
});

test("[DEMO-panel-ahp] the AHP panel: refresh connects and lists the resources, authenticate answers with the device prompt, the person approves, renewals show as activity; no token in state", {
  timeout: 120_000,
}, async () => {
  const idp = await useIdp({ accessTokenTtlSeconds: 6 });
  const host = await startExampleHost({ issuer: idp.issuer, port: 0 });
  const home = tempDir("agentauth-demo-ahp-panel-");
  const store = openVault({ home, env: {} });
  const activity = new ActivityLog();
  const panel = createAhpPanel({ ahpUrl: host.url, store, activity, connectOnStart: false });
  try {
    const listed = (await panel.actions.refresh?.({})) as AhpPanelState;
    assert.equal(listed.connected, true);
    assert.equal(listed.resources.length, 2);
    assert.ok(listed.resources.every((r) => !r.authenticated));
    const waiting = (await panel.actions.authenticate?.({})) as AhpPanelState;
    assert.equal(waiting.busy, "authenticate");
    assert.ok(waiting.prompt?.verificationUriComplete);
    await (await fetch(waiting.prompt.verificationUriComplete)).arrayBuffer();
    const done = await until<AhpPanelState>(panel, (s) => s.busy === null);
    assert.equal(done.lastError, null);
    assert.ok(
      done.resources.every((r) => r.authenticated && r.subject && r.expiresAt),
      JSON.stringify(done),
    );
    assert.ok(activity.list().some((e) => e.component === "ahp" && e.kind === "sign_in"));
    const renewed = await until<AhpPanelState>(panel, (s) =>
      s.resources.some((r) => r.renewals > 0),
    );
    assert.ok(renewed.resources.some((r) => r.lastRenewalAt !== null));
    assert.ok(activity.list().some((e) => e.component === "ahp" && e.kind === "renewal"));
    const json = JSON.stringify(panel.state());
    for (const token of await vaultTokens(home)) assert.equal(json.includes(token), false);
  } finally {
    await panel.close?.();
    await host.close();
    await store.close();
  }
});

test("[DEMO-follow-link-hostile] follow-link visits loopback pages only, gives up on redirect loops, and reads only a consent form with both hidden fields", {
  timeout: 30_000,
}, async () => {
  await assert.rejects(followLink("https://evil.example/oauth/start?consent=x"), FollowLinkError);
  await assert.rejects(followLink("javascript:alert(1)"), FollowLinkError);
  const server = createServer((req, res) => {
    if (req.url === "/away") res.writeHead(302, { location: "https://evil.example/steal" }).end();
    else if (req.url === "/loop") res.writeHead(302, { location: "/loop" }).end();
    else
      res
        .writeHead(200, { "content-type": "text/html" })
        .end("<p>Hello &amp; <b>bye</b></p><script>x()</script>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await assert.rejects(followLink(`${base}/away`), /loopback/);
    await assert.rejects(followLink(`${base}/loop`), /steps/);
    const page = await followLink(`${base}/page?code=secret`);
    assert.equal(page.text, "Hello & bye");
    assert.equal(page.where, `${base}/page`, "no query in where it ended");
  } finally {
    server.close();
  }
  assert.equal(
    consentForm(
      '<form method="post" action="/s"><input type="hidden" name="consent" value="a"></form>',
    ),
    undefined,
  );
  assert.equal(consentForm("<form><input></form"), undefined);
  assert.deepEqual(
    consentForm(
      '<form method="post" action="/s?a=1&amp;b=2"><input type="hidden" name="consent" value="x&quot;y"><input type="hidden" name="csrf" value="c"></form>',
    ),
    {
      action: "/s?a=1&b=2",
      fields: [
        ["consent", 'x"y'],
        ["csrf", "c"],
      ],
    },
  );
  assert.equal(pageText("<style>p{}</style><h1>A</h1>\n<p>B</p>"), "A B");
});
