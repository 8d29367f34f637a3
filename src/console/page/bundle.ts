/**
 * The page script as one file: each part is a self-contained function (no import reaches the browser; type imports
 * are erased), served as its own source text and handed the others through `parts`. The parts are typechecked with
 * the DOM library like any module, and the whole stays within `script-src 'self'`.
 */

import { accountsView } from "./accounts.ts";
import { ACTIVITY_FILTERS, activityView, groupActivity } from "./activity.ts";
import { consoleKit } from "./kit.ts";
import { panelsView } from "./panels.ts";
import { consoleMain, type PageParts } from "./script.ts";
import { tokenTimeline } from "./timeline.ts";

const FUNCTIONS: Record<Exclude<keyof PageParts, "filters">, (...args: never[]) => unknown> = {
  kit: consoleKit,
  timeline: tokenTimeline,
  accounts: accountsView,
  group: groupActivity,
  activity: activityView,
  panels: panelsView,
};

export const CONSOLE_SCRIPT = `"use strict";
(() => {
const parts = {};
${Object.entries(FUNCTIONS)
  .map(([name, fn]) => `parts.${name} = ${fn.toString()};`)
  .join("\n")}
parts.filters = ${JSON.stringify(ACTIVITY_FILTERS)};
(${consoleMain.toString()})(parts);
})();
`;
