/** The whole `ConsoleState` from its sources (pure: listings and views in, the JSON the page reads out). */

import type { Logger } from "../core/log.ts";
import { isReservedSubject } from "../oauth/index.ts";
import type { CredentialSummary, UnreadableCredential } from "../vault/types.ts";
import type { ConsoleNames } from "./names.ts";
import { accountViews, unreadableView } from "./views.ts";
import type {
  ActivityEvent,
  ConnectTargetView,
  ConsoleState,
  PanelView,
  PendingView,
} from "./wire.ts";

/** A demo panel as the console sees it (docs/console.md). */
export interface ConsolePanel {
  id: "rap" | "acp" | "ahp";
  title: string;
  /** JSON, never a secret: RapPanelState / AcpPanelState / AhpPanelState (wire.ts). */
  state(): unknown;
  /** Each action validates its own input. */
  actions: Record<string, (input: Record<string, unknown>) => Promise<unknown>>;
  onChange(listener: () => void): () => void;
  close?(): Promise<void>;
}

export function panelViews(panels: readonly ConsolePanel[], logger?: Logger): PanelView[] {
  const views: PanelView[] = [];
  for (const panel of panels) {
    try {
      views.push({ id: panel.id, title: panel.title, state: panel.state() as PanelView["state"] });
    } catch (error) {
      logger?.warn("console.panel_state_failed", { panel: panel.id, error });
    }
  }
  return views;
}

export function buildState(sources: {
  credentials: readonly CredentialSummary[];
  unreadable: readonly UnreadableCredential[];
  pending: PendingView[];
  activity: ActivityEvent[];
  connectTargets: readonly ConnectTargetView[];
  panels: PanelView[];
  now: number;
  names?: ConsoleNames;
}): ConsoleState {
  return {
    // agentauth's own bookkeeping (client registrations) is not an account a person connected.
    accounts: accountViews(
      sources.credentials.filter((c) => !isReservedSubject(c.subject)),
      sources.now,
      sources.names,
    ),
    unreadable: sources.unreadable.map(unreadableView),
    pending: sources.pending,
    activity: sources.activity,
    connectTargets: sources.connectTargets.map((t) => ({ id: t.id, label: t.label })),
    panels: sources.panels,
    now: sources.now,
  };
}
