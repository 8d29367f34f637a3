/** Issue 21: the activity list groups repetition (renewals every few minutes) and filters by kind; pure. */

import assert from "node:assert/strict";
import { test } from "node:test";
import { ACTIVITY_FILTERS, groupActivity } from "../../src/console/page/activity.ts";
import type { ActivityEvent } from "../../src/console/wire.ts";

let seq = 0;
function event(kind: ActivityEvent["kind"], summary: string): ActivityEvent {
  seq++;
  return { seq, at: 1_000 * seq, component: "ahp", kind, summary };
}

test("[CONSOLE-activity-group] consecutive identical events (component, kind, words) are one group, newest first; anything between splits them", () => {
  const renew = (n: number) =>
    Array.from({ length: n }, () => event("renewal", "Renewed https://alpha.example.test/"));
  const events = [
    event("sign_in", "AHP authenticated https://alpha.example.test/ as alice"),
    ...renew(5),
    event("error", "Renewing failed"),
    ...renew(2),
  ];
  const groups = groupActivity(events);
  assert.deepEqual(
    groups.map((g) => [g.first.kind, g.events.length]),
    [
      ["renewal", 2],
      ["error", 1],
      ["renewal", 5],
      ["sign_in", 1],
    ],
  );
  const five = groups[2];
  assert.ok(five);
  assert.deepEqual(
    five.events.map((e) => e.seq),
    [...five.events.map((e) => e.seq)].sort((a, b) => a - b),
    "a group keeps its events oldest first (for its time span)",
  );
  assert.deepEqual(groupActivity([]), []);
});

test("[CONSOLE-activity-filter] every kind of event is shown by 'Everything' and by at least one narrower filter", () => {
  const kinds: ActivityEvent["kind"][] = [
    "sign_in",
    "refresh",
    "refresh_refused",
    "revoke",
    "logout",
    "expiry_notice",
    "renewal",
    "authorization_requested",
    "authorization_completed",
    "result",
    "console_link",
    "error",
  ];
  assert.equal(ACTIVITY_FILTERS[0]?.kinds, "all");
  for (const kind of kinds) {
    assert.ok(
      ACTIVITY_FILTERS.slice(1).some((f) => f.kinds !== "all" && f.kinds.includes(kind)),
      `${kind} has a filter`,
    );
  }
});
