/// <reference lib="dom" />
/**
 * The activity list, newest first: repeated events (the same component, kind and words one after another, such as
 * renewals every two minutes) are one line with "×N" and their time span, and a filter shows one kind of event.
 */

import type { ActivityEvent, ActivityKind, ConsoleState } from "../wire.ts";
import type { Kit } from "./kit.ts";

export interface ActivityGroup {
  first: ActivityEvent;
  /** Oldest first. */
  events: ActivityEvent[];
}

/** The filter's choices: their labels and the kinds each shows ("all": every kind). */
export const ACTIVITY_FILTERS: readonly {
  id: string;
  label: string;
  kinds: "all" | ActivityKind[];
}[] = [
  { id: "all", label: "Everything", kinds: "all" },
  {
    id: "sign-ins",
    label: "Sign-ins and sign-outs",
    kinds: ["sign_in", "logout", "revoke", "console_link"],
  },
  {
    id: "refreshes",
    label: "Refreshes and renewals",
    kinds: ["refresh", "refresh_refused", "renewal", "expiry_notice"],
  },
  {
    id: "authorizations",
    label: "Authorizations and results",
    kinds: ["authorization_requested", "authorization_completed", "result"],
  },
  { id: "problems", label: "Problems", kinds: ["error", "refresh_refused"] },
];

/** Pure: newest first, consecutive events with the same component, kind and summary as one group. */
export function groupActivity(events: readonly ActivityEvent[]): ActivityGroup[] {
  const groups: ActivityGroup[] = [];
  for (const event of [...events].reverse()) {
    const last = groups.at(-1);
    if (
      last &&
      last.first.component === event.component &&
      last.first.kind === event.kind &&
      last.first.summary === event.summary
    ) {
      last.events.unshift(event);
    } else {
      groups.push({ first: event, events: [event] });
    }
  }
  return groups;
}

export function activityView(
  kit: Kit,
  group: typeof groupActivity,
  filters: typeof ACTIVITY_FILTERS,
) {
  const { byId, el, clock } = kit;
  const select = document.querySelector<HTMLSelectElement>('select[name="activity-filter"]');
  let last: ConsoleState | undefined;
  if (select && select.options.length === 0) {
    select.append(...filters.map((f) => el("option", f.label, { value: f.id })));
  }
  select?.addEventListener("change", () => {
    if (last) render(last);
  });

  function render(state: ConsoleState): void {
    last = state;
    const list = byId("activity-list");
    if (!list) return;
    const chosen = filters.find((f) => f.id === select?.value) ?? filters[0];
    const shown = state.activity.filter(
      (e) => !chosen || chosen.kinds === "all" || chosen.kinds.includes(e.kind),
    );
    const items = group(shown).map(({ first, events }) => {
      const newest = events.at(-1) ?? first;
      const oldest = events[0] ?? first;
      const item = el("li", undefined, {
        "data-seq": String(newest.seq),
        "data-kind": first.kind,
        ...(events.length > 1 ? { "data-group-size": String(events.length) } : {}),
      });
      const when = events.length > 1 ? `${clock(oldest.at)}–${clock(newest.at)}` : clock(newest.at);
      item.append(el("time", when, { datetime: new Date(newest.at).toISOString() }));
      item.append(el("span", first.component.toUpperCase(), { class: "tag" }));
      item.append(el("span", first.summary, { class: "what" }));
      if (events.length > 1) {
        item.append(
          el("span", `×${events.length}`, { class: "count", title: `${events.length} times` }),
        );
      }
      return item;
    });
    list.replaceChildren(...items);
    const empty = byId("activity-empty");
    if (empty) {
      empty.hidden = items.length > 0;
      empty.textContent =
        state.activity.length > 0 ? "Nothing of this kind yet." : "Nothing has happened yet.";
    }
  }

  return { render };
}
