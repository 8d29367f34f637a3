/** Hostile input against every one of helper B's simulators (Google, Microsoft, GitLab, Atlassian, Linear, Notion): oversized bodies get 413, malformed bodies and credentials a 4xx, unknown paths 404, and the server keeps answering. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { startAtlassianSimulator } from "./atlassian.ts";
import { startGitLabSimulator } from "./gitlab.ts";
import { startGoogleSimulator } from "./google.ts";
import { startLinearSimulator } from "./linear.ts";
import { startMicrosoftSimulator } from "./microsoft.ts";
import { startNotionSimulator } from "./notion.ts";

interface Target {
  name: string;
  start: () => Promise<{ url: string; close(): Promise<void>; stats(): Record<string, number> }>;
  token: string;
  authorize: string;
}
const TARGETS: Target[] = [
  {
    name: "google",
    start: () => startGoogleSimulator(),
    token: "/token",
    authorize: "/o/oauth2/v2/auth",
  },
  {
    name: "microsoft",
    start: () => startMicrosoftSimulator(),
    token: "/common/oauth2/v2.0/token",
    authorize: "/common/oauth2/v2.0/authorize",
  },
  {
    name: "gitlab",
    start: () => startGitLabSimulator(),
    token: "/oauth/token",
    authorize: "/oauth/authorize",
  },
  {
    name: "atlassian",
    start: () => startAtlassianSimulator(),
    token: "/oauth/token",
    authorize: "/authorize",
  },
  {
    name: "linear",
    start: () => startLinearSimulator(),
    token: "/oauth/token",
    authorize: "/oauth/authorize",
  },
  {
    name: "notion",
    start: () => startNotionSimulator(),
    token: "/v1/oauth/token",
    authorize: "/v1/oauth/authorize",
  },
];

const closers: (() => Promise<void>)[] = [];
after(() => Promise.all(closers.map((c) => c())));

for (const t of TARGETS) {
  test(`[SIM-${t.name}-hostile] oversized, malformed and garbage requests get 4xx and the simulator keeps answering`, async () => {
    const s = await t.start();
    closers.push(() => s.close());
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${s.url}${t.token}`, { method: "POST", headers, body });
    assert.equal(
      (await post("a".repeat(70_000), { "content-type": "application/x-www-form-urlencoded" }))
        .status,
      413,
    );
    for (const [body, type] of [
      ["{", "application/json"],
      ["[1,2]", "application/json"],
      ['{"grant_type":{"nested":true}}', "application/json"],
      ["grant_type=a&grant_type=b", "application/x-www-form-urlencoded"],
      ["\u0000\uffff%%%", "text/plain"],
    ] as const) {
      const r = await post(body, { "content-type": type });
      assert.ok(r.status >= 400 && r.status < 500, `${body} as ${type} answered ${r.status}`);
      await r.arrayBuffer();
    }
    const garbageAuth = await post("grant_type=authorization_code&code=x", {
      "content-type": "application/x-www-form-urlencoded",
      authorization: "Basic %%%not-base64",
    });
    assert.ok(garbageAuth.status >= 400 && garbageAuth.status < 500);
    await garbageAuth.arrayBuffer();
    const weird = await fetch(`${s.url}${t.authorize}?client_id=%E0%A4%A&redirect_uri=%zz`, {
      redirect: "manual",
    });
    assert.ok(weird.status >= 400 && weird.status < 500);
    await weird.arrayBuffer();
    // Microsoft reads the first segment as a tenant (an unknown one is AADSTS90002), so use a known tenant there.
    const missing = await fetch(`${s.url}${t.name === "microsoft" ? "/common" : ""}/no/such/path`);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
    assert.equal(s.stats().codeExchanges ?? 0, 0, "nothing malformed reached a code exchange");
    const alive = await post("grant_type=refresh_token&refresh_token=x", {
      "content-type": "application/x-www-form-urlencoded",
    });
    assert.ok(alive.status >= 400 && alive.status < 500, "still answering");
    await alive.arrayBuffer();
  });
}
