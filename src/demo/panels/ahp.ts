/**
 * The console's AHP panel: the demo's own AHP client connected to the example host (journeys/ahp.ts). Actions
 * "authenticate" (every resource the host protects: the vault's tokens, refreshed, or one device sign-in whose
 * link and code go to the panel; the action answers as soon as they are there) and "refresh" (reconnect when the
 * connection dropped, and read the resources again). Renewals before expiry show as activity and in the counts.
 * The state holds no token.
 */

import type { RenewalEvent } from "../../ahp/client/index.ts";
import type { ActivityLog, ConsolePanel } from "../../console/index.ts";
import type { AhpPanelState } from "../../console/wire.ts";
import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";
import { type Logger, silentLogger } from "../../core/log.ts";
import type { CredentialStore } from "../../vault/index.ts";
import { type AhpJourney, connectAhpJourney } from "../journeys/ahp.ts";
import { panelSteps } from "./steps.ts";

export interface AhpPanelContext {
  ahpUrl: string;
  store: CredentialStore;
  activity: ActivityLog;
  logger?: Logger;
  issuer?: string;
  dataDir?: string;
  /** Open the device link itself (the demo IdP auto-approves). Default false: a person does. */
  autoApprove?: boolean;
  /** Connect and read the resources at start. Default true. */
  connectOnStart?: boolean;
}

export function createAhpPanel(ctx: AhpPanelContext): ConsolePanel {
  const logger = ctx.logger ?? silentLogger;
  const controller = new AbortController();
  const state: AhpPanelState = {
    url: ctx.ahpUrl,
    connected: false,
    resources: [],
    prompt: null,
    busy: null,
    lastError: null,
  };
  let promptListener: (() => void) | undefined;
  const steps = panelSteps(state, {
    label: "AHP",
    component: "ahp",
    activity: ctx.activity,
    logger,
    onSettled: () => {
      promptListener = undefined;
    },
  });
  const { changed, start } = steps;
  let journey: AhpJourney | undefined;

  const reload = async () => {
    if (journey && state.connected) state.resources = await journey.resources();
    changed();
  };

  const onRenewal = (event: RenewalEvent) => {
    const left = event.expiresIn !== undefined ? `; the new token lasts ${event.expiresIn} s` : "";
    ctx.activity.record({
      component: "ahp",
      kind: event.trigger === "expired" ? "expiry_notice" : "renewal",
      summary: `AHP ${peerText(event.resource)} renewed (${event.trigger})${left}`,
    });
    reload().catch((error: unknown) => logger.warn("demo.ahp_panel.reload_failed", { error }));
  };

  const connect = async (): Promise<AhpJourney> => {
    if (journey && state.connected) return journey;
    await journey?.close().catch(() => {});
    const opened = await connectAhpJourney(
      { ahpUrl: ctx.ahpUrl, store: ctx.store, logger },
      {
        autoApprove: ctx.autoApprove === true,
        signal: controller.signal,
        onPrompt: (prompt) => {
          state.prompt = prompt;
          ctx.activity.record({
            component: "ahp",
            kind: "authorization_requested",
            summary: `The demo's AHP client asks you to sign in at ${prompt.verificationUri}`,
          });
          changed();
          promptListener?.();
        },
        onRenewal,
        onRenewalError: (error, resource) => {
          ctx.activity.record({
            component: "ahp",
            kind: "error",
            summary: `AHP renewal of ${peerText(resource) || "a resource"} failed: ${peerText(error.message)}`,
          });
        },
        onDisconnect: (error) => {
          if (steps.closed) return;
          state.connected = false;
          state.lastError = `The connection to the host ended: ${peerText(error.message)}`;
          changed();
        },
      },
    );
    if (steps.closed) {
      await opened.close();
      throw new AgentAuthError("demo_panel_closed", "The demo is shutting down.");
    }
    journey = opened;
    state.connected = true;
    return opened;
  };

  const refresh = () =>
    start("refresh", async () => {
      await connect();
      await reload();
    });

  const authenticate = async (): Promise<AhpPanelState> => {
    const promptShown = new Promise<void>((resolve) => {
      promptListener = resolve;
    });
    const done = start("authenticate", async () => {
      const client = await connect();
      const outcomes = await client.authenticate();
      for (const outcome of outcomes) {
        const who = peerText(outcome.account.label ?? outcome.subject, { max: 120 });
        ctx.activity.record({
          component: "ahp",
          kind: "sign_in",
          subject: who,
          summary: `AHP authenticated ${peerText(outcome.resource)} as ${who}`,
        });
      }
      await reload();
    });
    await Promise.race([promptShown, done]);
    return snapshot();
  };

  const snapshot = (): AhpPanelState => structuredClone(state);

  if (ctx.connectOnStart !== false) {
    refresh().catch(() => {});
  }

  return {
    id: "ahp",
    title: "AHP",
    state: snapshot,
    actions: {
      authenticate,
      refresh: async () => {
        await refresh();
        return snapshot();
      },
    },
    onChange: steps.onChange,
    async close() {
      controller.abort();
      const closing = steps.close();
      await journey?.close().catch(() => {});
      await closing;
    },
  };
}
