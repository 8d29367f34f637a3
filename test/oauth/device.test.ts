import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CancelledError,
  DeviceFlowError,
  type DevicePrompt,
  deviceLogin,
  discoverAuthorizationServer,
} from "../../src/oauth/index.ts";
import { useIdp } from "../support/idp.ts";

const client = { clientId: "agentauth-cli" };

/** Opens the verification page like a person's browser would; the server auto-approves. */
async function approve(prompt: DevicePrompt): Promise<void> {
  const response = await fetch(prompt.verificationUriComplete ?? prompt.verificationUri);
  await response.arrayBuffer();
}

test("[RFC8628-device-flow] the device flow shows a URL and code, polls, and returns tokens once approved", async () => {
  const idp = await useIdp({ deviceIntervalSeconds: 1 });
  const as = await discoverAuthorizationServer(idp.issuer);
  const prompts: DevicePrompt[] = [];
  let approving: Promise<void> | undefined;
  const tokens = await deviceLogin({
    as,
    client,
    scope: "openid email offline_access",
    onPrompt: (p) => {
      prompts.push(p);
    },
    // The person approves once a poll has been answered "pending" (an event, not a 1.5 s timer that a loaded
    // machine could let overtake the first poll).
    onPoll: (e) => {
      const prompt = prompts[0];
      if (e.result === "pending" && prompt) approving ??= approve(prompt);
    },
  });
  await approving;
  assert.equal(prompts.length, 1);
  assert.match(prompts[0]?.userCode ?? "", /^[A-Z]{4}-[A-Z]{4}$/);
  assert.ok(prompts[0]?.verificationUri.startsWith(idp.issuer));
  assert.equal(tokens.subject, "alice");
  assert.ok(tokens.refreshToken);
  assert.ok(
    (idp.stats.byGrant["urn:ietf:params:oauth:grant-type:device_code"]?.error ?? 0) >= 1,
    "it polled while pending",
  );
});

test("[RFC8628-slow-down] slow_down adds 5 seconds to the interval, and the client then stops being told to slow down", {
  // A failure (no slow_down ever) would otherwise poll on until the 10-minute device code expires.
  timeout: 60_000,
}, async () => {
  // The server advertises 1 s but enforces 5 s: our second poll is too early and earns a slow_down; after it the
  // client polls every 6 s, which the rule allows. (5 s, not 3: a loaded machine would have to hold the second poll
  // back 4 s, not 2, for it to come late enough to escape the rule.)
  const idp = await useIdp({ deviceIntervalSeconds: 1, deviceEnforcedIntervalSeconds: 5 });
  const as = await discoverAuthorizationServer(idp.issuer);
  const polls: { result: string; intervalSeconds: number }[] = [];
  let prompt: DevicePrompt | undefined;
  const login = deviceLogin({
    as,
    client,
    scope: "openid",
    onPrompt: (p) => {
      prompt = p;
    },
    onPoll: (e) => {
      polls.push(e);
      // Approve only after the slow_down so the next poll (6 s later) is the one that succeeds.
      if (e.result === "slow_down" && prompt) void approve(prompt);
    },
  });
  // First poll (t≈1 s) is pending; the second (t≈2 s) is too early for the 5 s rule.
  const tokens = await login;
  assert.ok(tokens.accessToken);
  assert.equal(
    idp.stats.slowDowns,
    1,
    "exactly one slow_down: after it the client kept the longer interval",
  );
  const slow = polls.find((p) => p.result === "slow_down");
  assert.equal(slow?.intervalSeconds, 6, "interval grew from 1 s by 5 s");
});

test("[RFC8628-expires-in] an unapproved device code ends with a typed device_code_expired error", async () => {
  const idp = await useIdp({ deviceIntervalSeconds: 1, deviceCodeTtlSeconds: 2 });
  const as = await discoverAuthorizationServer(idp.issuer);
  await assert.rejects(
    deviceLogin({ as, client, scope: "openid", onPrompt: () => {} }),
    (e: unknown) => e instanceof DeviceFlowError && e.code === "device_code_expired",
  );
});

test("[RFC8628-cancel] the device flow is cancellable through an AbortSignal", async () => {
  const idp = await useIdp({ deviceIntervalSeconds: 1 });
  const as = await discoverAuthorizationServer(idp.issuer);
  const controller = new AbortController();
  const login = deviceLogin({
    as,
    client,
    scope: "openid",
    signal: controller.signal,
    onPrompt: () => controller.abort(),
  });
  await assert.rejects(
    login,
    (e: unknown) => e instanceof CancelledError && e.code === "cancelled",
  );
});

test("[RFC8628-unsupported] a server without a device endpoint gives a typed error", async () => {
  const idp = await useIdp();
  const as = {
    ...(await discoverAuthorizationServer(idp.issuer)),
    device_authorization_endpoint: undefined,
  };
  await assert.rejects(
    deviceLogin({ as, client, onPrompt: () => {} }),
    (e: unknown) => e instanceof DeviceFlowError && e.code === "device_flow_unsupported",
  );
});
