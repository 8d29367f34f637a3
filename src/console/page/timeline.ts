/// <reference lib="dom" />
/**
 * One account's token on a small timeline (a picture says more than a column of times): the current access
 * token's life from its last write to its expiry, "now", and a dot for each sign-in and refresh of that credential
 * the activity remembers. The words are in the SVG's accessible name, so nothing is said by the picture alone.
 */

import type { AccountView, ActivityEvent } from "../wire.ts";

export function tokenTimeline(
  account: AccountView,
  events: readonly ActivityEvent[],
  now: number,
  words: { clock(at: number): string; expiresText(at: number | null, now: number): string },
): SVGSVGElement {
  const NS = "http://www.w3.org/2000/svg";
  const marks = events
    .filter((e) => e.credentialId === account.id && (e.kind === "refresh" || e.kind === "sign_in"))
    .map((e) => e.at);
  const issued = Math.min(account.updatedAt, now);
  const end = account.expiresAt ?? now + Math.max(now - issued, 60_000);
  // The window: from the earliest thing to show to a little past the later of expiry and now.
  const from = Math.min(issued, ...marks, now);
  const to = Math.max(end, now) + (Math.max(end, now) - from) * 0.05 + 1;
  const x = (at: number) => Math.max(0, Math.min(100, ((at - from) / (to - from)) * 100));

  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 100 12");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("class", "timeline");
  svg.setAttribute("role", "img");
  const refreshes = marks.filter((at) => at > account.createdAt + 1000).length;
  svg.setAttribute(
    "aria-label",
    `Token timeline: issued ${words.clock(issued)}, ${words.expiresText(account.expiresAt, now)}; ` +
      (refreshes === 0
        ? "no refresh seen yet"
        : `refreshed ${refreshes} time${refreshes === 1 ? "" : "s"} (last ${words.clock(Math.max(...marks))})`),
  );
  const shape = (name: string, attrs: Record<string, string | number>) => {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    svg.append(node);
    return node;
  };
  shape("line", { x1: 0, y1: 6, x2: 100, y2: 6, class: "tl-track" });
  const tone = account.status === "active" ? "tl-life-ok" : "tl-life-warn";
  shape("rect", {
    x: x(issued),
    y: 3,
    width: Math.max(0.8, x(end) - x(issued)),
    height: 6,
    rx: 1.5,
    class: account.expiresAt === null ? "tl-life-open" : tone,
  });
  for (const at of marks) shape("circle", { cx: x(at), cy: 6, r: 1.6, class: "tl-mark" });
  shape("line", { x1: x(now), y1: 0, x2: x(now), y2: 12, class: "tl-now" });
  return svg;
}
