/**
 * Review #15: the token response's extra fields (kept for account readers) never carry a secret: token members are
 * removed at any depth, a subtree too deep to inspect is dropped rather than returned unfiltered, and Slack's
 * `incoming_webhook` (its `url` posts to a channel with no other credential) is dropped.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { toTokenSet } from "../../src/oauth/index.ts";

test("[REVIEW-15-extra-deep-subtree-dropped] a token nested past the inspection depth is not returned", () => {
  let deep: Record<string, unknown> = { access_token: "xoxp-DEEP-SECRET" };
  for (let i = 0; i < 20; i++) deep = { next: deep };
  const set = toTokenSet(
    { access_token: "a", token_type: "bearer", wrapper: deep } as never,
    undefined,
    0,
  );
  assert.ok(!JSON.stringify(set.extra).includes("DEEP-SECRET"));
  assert.ok("wrapper" in set.extra, "the shallow part of the subtree stays");
});

test("[REVIEW-15-extra-incoming-webhook-dropped] Slack's incoming_webhook (a secret URL) is not kept; team stays", () => {
  const set = toTokenSet(
    {
      access_token: "a",
      token_type: "bearer",
      team: { id: "T1", name: "Acme" },
      incoming_webhook: {
        channel: "#general",
        url: "https://hooks.slack.com/services/T1/B1/WEBHOOK-SECRET",
      },
    } as never,
    undefined,
    0,
  );
  assert.ok(!JSON.stringify(set.extra).includes("WEBHOOK-SECRET"));
  assert.equal("incoming_webhook" in set.extra, false);
  assert.deepEqual(set.extra.team, { id: "T1", name: "Acme" });
});
