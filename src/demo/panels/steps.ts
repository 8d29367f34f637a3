/**
 * What the ACP and AHP panels share: one step at a time in the background (`busy` names it), its failure shown in
 * `lastError` and recorded as activity, listeners told of every change, and close() waiting for what still runs.
 */

import type { ActivityLog } from "../../console/index.ts";
import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";

/** An action asked for while another runs. */
export class DemoPanelBusyError extends AgentAuthError {
  constructor(panel: string, busy: string) {
    super(
      "demo_panel_busy",
      `The ${panel} panel is busy (${busy}); try again when it has finished.`,
    );
  }
}

/** The part of a panel's state the steps own. */
export interface StepState {
  busy: string | null;
  lastError: string | null;
  prompt: unknown;
}

export interface PanelStepsOptions {
  /** "ACP" or "AHP": in messages. */
  label: string;
  component: "acp" | "ahp";
  activity: ActivityLog;
  logger: Logger;
  /** Called when a step ends, before listeners are told (e.g. forget a pending prompt listener). */
  onSettled?: () => void;
}

export interface PanelSteps {
  /** Tells every listener the state changed (a failing listener is logged, not thrown). */
  changed(): void;
  onChange(listener: () => void): () => void;
  /** Runs `step` in the background; throws at once when closed or when another step runs. */
  start(name: string, step: () => Promise<void>): Promise<void>;
  readonly closed: boolean;
  /** Stops accepting steps, forgets listeners, waits for running steps. */
  close(): Promise<void>;
}

export function panelSteps(state: StepState, options: PanelStepsOptions): PanelSteps {
  const listeners = new Set<() => void>();
  const running = new Set<Promise<unknown>>();
  let closed = false;
  const changed = () => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        options.logger.warn(`demo.${options.component}_panel.listener_failed`, { error });
      }
    }
  };
  const start = (name: string, step: () => Promise<void>): Promise<void> => {
    if (closed) throw new AgentAuthError("demo_panel_closed", "The demo is shutting down.");
    if (state.busy) throw new DemoPanelBusyError(options.label, state.busy);
    state.busy = name;
    state.lastError = null;
    changed();
    const done = step()
      .catch((error: unknown) => {
        if (closed) return;
        state.lastError = errorText(error);
        options.activity.record({
          component: options.component,
          kind: "error",
          summary: `${options.label} ${name} failed: ${state.lastError}`,
        });
        options.logger.warn(`demo.${options.component}_panel.failed`, { step: name, error });
      })
      .finally(() => {
        state.busy = null;
        state.prompt = null;
        options.onSettled?.();
        running.delete(done);
        if (!closed) changed();
      });
    running.add(done);
    return done;
  };
  return {
    changed,
    onChange(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    start,
    get closed() {
      return closed;
    },
    async close() {
      closed = true;
      listeners.clear();
      await Promise.allSettled([...running]);
    },
  };
}

/** An error as the panel shows it: the message, sanitised and bounded. */
export function errorText(error: unknown): string {
  return peerText(error instanceof Error ? error.message : "unexpected failure", { max: 300 });
}
