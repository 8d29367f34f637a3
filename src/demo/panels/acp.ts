/**
 * The console's ACP panel: the example agent as the demo's own ACP client sees it (journeys/acp.ts). Actions
 * "refresh" (ask the agent its state), "login" (its device flow: the link and code go to the panel for the person,
 * the action answers as soon as they are there) and "logout". Every step starts the agent and ends it. The state
 * holds no token; the device code is the one the person types.
 */

import type { ActivityLog, ConsolePanel } from "../../console/index.ts";
import type { AcpPanelState } from "../../console/wire.ts";
import { type Logger, silentLogger } from "../../core/log.ts";
import type { CredentialStore } from "../../vault/index.ts";
import {
  type AcpJourneyContext,
  type AcpStatusView,
  acpLogin,
  acpLogout,
  acpStatus,
  exampleAgentCommand,
} from "../journeys/acp.ts";
import { panelSteps } from "./steps.ts";

export { DemoPanelBusyError } from "./steps.ts";

/** Where ACP agents keep their own sign-ins in the vault (src/acp/agent: `acp-agent:<agent name>`). */
const AGENT_SUBJECT_PREFIX = "acp-agent:";

export interface AcpPanelContext {
  issuer: string;
  dataDir: string;
  store?: CredentialStore;
  activity: ActivityLog;
  logger?: Logger;
  /** argv that starts the agent (RunningDemo.acpAgentCommand); default the example agent against `issuer`. */
  agentCommand?: readonly string[];
  /** What the panel suggests running in a terminal; default the agent command itself. */
  terminalCommand?: string;
  /** Script-like use: open the device link itself (the demo IdP auto-approves). Default false: a person does. */
  autoApprove?: boolean;
  /** Ask the agent its state once at start. Default true. */
  checkOnStart?: boolean;
}

export function createAcpPanel(ctx: AcpPanelContext): ConsolePanel {
  const logger = ctx.logger ?? silentLogger;
  const controller = new AbortController();
  const command = ctx.agentCommand ?? exampleAgentCommand(ctx.issuer);
  const journey: AcpJourneyContext = {
    issuer: ctx.issuer,
    dataDir: ctx.dataDir,
    agentCommand: command,
    logger,
    signal: controller.signal,
  };
  const state: AcpPanelState = {
    agentCommand: ctx.terminalCommand ?? displayCommand(command),
    signedIn: null,
    accounts: [],
    methods: [],
    prompt: null,
    busy: null,
    lastError: null,
    checkedAt: null,
  };
  const steps = panelSteps(state, {
    label: "ACP",
    component: "acp",
    activity: ctx.activity,
    logger,
  });
  const { changed, start } = steps;

  const apply = (view: AcpStatusView) => {
    state.signedIn = view.signedIn;
    state.accounts = view.accounts;
    state.methods = view.methods;
    state.checkedAt = Date.now();
  };

  const refresh = () =>
    start("status", async () => {
      apply(await acpStatus(journey));
    });

  const login = async (): Promise<AcpPanelState> => {
    let shown: () => void = () => {};
    const promptShown = new Promise<void>((resolve) => {
      shown = resolve;
    });
    const done = start("login", async () => {
      const result = await acpLogin(journey, {
        autoApprove: ctx.autoApprove === true,
        onPrompt: (prompt) => {
          state.prompt = prompt;
          ctx.activity.record({
            component: "acp",
            kind: "authorization_requested",
            summary: `The example agent asks you to sign in at ${prompt.verificationUri}`,
          });
          changed();
          shown();
        },
      });
      apply(result);
      const who = result.accounts[0]?.label;
      if (result.outcome === "signed_in") {
        ctx.activity.record({
          component: "acp",
          kind: "sign_in",
          ...(who ? { subject: who } : {}),
          summary: `The example agent signed in${who ? ` as ${who}` : ""} (ACP, ${result.method})`,
        });
      } else {
        state.lastError = `The login finished but the agent reports: ${result.state}.`;
      }
    });
    // Answer once the person has something to do (the link and code), or when the login is over.
    await Promise.race([promptShown, done]);
    return snapshot();
  };

  const logout = async (): Promise<AcpPanelState> => {
    await start("logout", async () => {
      apply(await acpLogout(journey));
      ctx.activity.record({
        component: "acp",
        kind: "logout",
        summary: "The example agent signed out (ACP logout)",
      });
    });
    return snapshot();
  };

  const snapshot = (): AcpPanelState => structuredClone(state);

  if (ctx.checkOnStart !== false) {
    refresh().catch(() => {});
  }

  // The accounts table shows the vault; the panel shows what the agent says. When the agent's credential changes in
  // the vault (an `acp login` from a terminal, a Disconnect), the agent is asked again at once, so the two never
  // disagree until someone presses a button. A change while a step runs is checked once that step ends.
  let recheck = false;
  const recheckNow = () => {
    if (state.busy) {
      recheck = true;
      return;
    }
    recheck = false;
    refresh()
      .catch(() => {})
      .finally(() => {
        if (recheck) recheckNow();
      });
  };
  const stopWatching = ctx.activity.subscribe((event) => {
    if (event.component === "vault" && event.subject?.startsWith(AGENT_SUBJECT_PREFIX))
      recheckNow();
  });
  const unsubscribeSteps = steps.onChange(() => {
    if (recheck && !state.busy) recheckNow();
  });

  return {
    id: "acp",
    title: "ACP",
    state: snapshot,
    actions: {
      refresh: async () => {
        await refresh();
        return snapshot();
      },
      login,
      logout,
    },
    onChange: steps.onChange,
    async close() {
      stopWatching();
      unsubscribeSteps();
      controller.abort();
      await steps.close();
    },
  };
}

/** The argv as a person would type it (quoted where needed), for the panel's "try it in a terminal" line. */
function displayCommand(argv: readonly string[]): string {
  return argv
    .map((word) =>
      /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`,
    )
    .join(" ");
}
