/**
 * `agentauth demo --script`: every protocol's journey, unattended, against a fresh demo whose authorization server
 * signs in as alice by itself. ACP status → login → session → logout; AHP authenticate → expiry → renewal; RAP
 * invoke → oauth → authorize (the tool's consent page, followed by follow-link.ts) → result → disconnect →
 * invoke asks again. One transcript line per step with its duration, a summary line, ok=false when any step fails.
 * The demo is always closed. The transcript never holds a token, a code, a state or an auth URL's query: details
 * pass through `transcriptText`, which keeps only the origin and path of any URL.
 */

import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { disconnect } from "../console/index.ts";
import { peerText } from "../core/display.ts";
import { type Logger, silentLogger } from "../core/log.ts";
import type { CredentialSummary } from "../vault/index.ts";
import { followLink } from "./follow-link.ts";
import {
  type AcpJourneyContext,
  acpLogin,
  acpLogout,
  acpSession,
  acpStatus,
} from "./journeys/acp.ts";
import { type AhpJourney, connectAhpJourney } from "./journeys/ahp.ts";
import { type RunningDemo, startDemo } from "./start.ts";

/** The demo user the authorization server signs in as. */
export const SCRIPT_USER = "alice";
/** Short resource tokens, so the AHP renewal shows within seconds. */
export const SCRIPT_AHP_TOKEN_TTL_SECONDS = 6;
const STEP_TIMEOUT_MS = 60_000;

export interface DemoScriptOptions {
  /** Default: a temporary folder, removed afterwards. A given folder is emptied first (fresh) and kept. */
  dataDir?: string;
  /** Receives each transcript line, newline included. */
  write: (line: string) => void;
  logger?: Logger;
  /** Ctrl-C: the running step is abandoned, the rest are skipped, the demo is closed (and the folder removed). */
  signal?: AbortSignal;
  /** Called after each step (tests use it to break the demo mid-way). */
  afterStep?: (step: string, demo: RunningDemo) => void | Promise<void>;
}

export interface DemoScriptResult {
  ok: boolean;
  steps: { protocol: string; name: string; ok: boolean; ms: number; detail: string }[];
}

type Protocol = "DEMO" | "ACP" | "AHP" | "RAP";

/** Thrown by a step that cannot run because an earlier one of its journey failed. */
class Skipped extends Error {}
/** The caller's signal ended the script. */
class Cancelled extends Error {}

export async function runDemoScript(options: DemoScriptOptions): Promise<DemoScriptResult> {
  const logger = options.logger ?? silentLogger;
  const temporary = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "agentauth-demo-script-"));
  const steps: DemoScriptResult["steps"] = [];
  let demo: RunningDemo | undefined;
  /** The closing step runs whatever the signal says. */
  let closing = false;

  const step = async <T>(
    protocol: Protocol,
    name: string,
    run: (signal: AbortSignal) => Promise<{ value: T; detail: string }>,
    timeoutMs = STEP_TIMEOUT_MS,
  ): Promise<T | undefined> => {
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let onCancel: (() => void) | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      onCancel = () => {
        controller.abort();
        reject(new Cancelled());
      };
      if (options.signal?.aborted && !closing) onCancel();
      else if (!closing) options.signal?.addEventListener("abort", onCancel, { once: true });
    });
    let value: T | undefined;
    let ok = false;
    let detail: string;
    try {
      const done = await Promise.race([run(controller.signal), timeout]);
      value = done.value;
      detail = transcriptText(done.detail);
      ok = true;
    } catch (error) {
      detail =
        error instanceof Cancelled
          ? "cancelled"
          : error instanceof Skipped
            ? "skipped (an earlier step failed)"
            : transcriptText(error instanceof Error ? error.message : String(error));
      if (!(error instanceof Skipped))
        logger.warn("demo.script.step_failed", { protocol, name, error });
    } finally {
      clearTimeout(timer);
      if (onCancel) options.signal?.removeEventListener("abort", onCancel);
      controller.abort();
    }
    const ms = Math.round(performance.now() - started);
    steps.push({ protocol, name, ok, ms, detail });
    const line = `${ok ? "✓" : "✗"} ${protocol.padEnd(4)} ${name.padEnd(14)} (${ms} ms)  ${detail}`;
    options.write(`${line}\n`);
    if (demo && options.afterStep) {
      try {
        await options.afterStep(`${protocol} ${name}`, demo);
      } catch (error) {
        logger.warn("demo.script.after_step_failed", { error });
      }
    }
    return value;
  };

  try {
    demo = await step("DEMO", "start", async () => {
      const started = await startDemo({
        dataDir,
        fresh: true,
        autoApproveAs: SCRIPT_USER,
        ahpTokenTtlSeconds: SCRIPT_AHP_TOKEN_TTL_SECONDS,
        logger,
      });
      return { value: started, detail: `every part on loopback; IdP ${started.urls.issuer}` };
    });
    for (const journey of [acpJourney, ahpJourney, rapJourney]) {
      if (!demo || options.signal?.aborted) break;
      await journey(demo, step, logger);
    }
  } finally {
    if (demo) {
      const running = demo;
      closing = true;
      await step("DEMO", "close", async () => {
        await running.close();
        return { value: undefined, detail: "every part stopped" };
      });
    }
    if (temporary) rmSync(dataDir, { recursive: true, force: true });
  }
  const failed = steps.filter((s) => !s.ok).length;
  const ok = failed === 0 && demo !== undefined;
  const total = steps.reduce((sum, s) => sum + s.ms, 0);
  options.write(
    ok
      ? `All ${steps.length} steps passed (${total} ms).\n`
      : `${failed} of ${steps.length} steps failed (${total} ms).\n`,
  );
  return { ok, steps };
}

type Step = <T>(
  protocol: Protocol,
  name: string,
  run: (signal: AbortSignal) => Promise<{ value: T; detail: string }>,
  timeoutMs?: number,
) => Promise<T | undefined>;

async function acpJourney(demo: RunningDemo, step: Step, _logger: Logger): Promise<void> {
  const base = (signal: AbortSignal): AcpJourneyContext => ({
    issuer: demo.urls.issuer,
    dataDir: demo.dataDir,
    agentCommand: demo.acpAgentCommand,
    signal,
  });
  let healthy = true;
  const guarded = async <T>(
    name: string,
    run: (ctx: AcpJourneyContext) => Promise<{ value: T; detail: string }>,
  ) => {
    const value = await step("ACP", name, async (signal) => {
      if (!healthy) throw new Skipped();
      return run(base(signal));
    });
    if (value === undefined) healthy = false;
    return value;
  };
  await guarded("status", async (ctx) => {
    const status = await acpStatus(ctx);
    if (status.signedIn === true) throw new Error("a fresh demo's agent is already signed in");
    return {
      value: status,
      detail: `${status.agentName}: ${status.state}; methods ${status.methods.map((m) => m.id).join(", ")}`,
    };
  });
  await guarded("login", async (ctx) => {
    const login = await acpLogin(ctx, { autoApprove: true });
    if (login.outcome !== "signed_in")
      throw new Error(`the agent reports ${login.state} after the login`);
    const who = login.accounts[0]?.label;
    return {
      value: login,
      detail: `signed in${who ? ` as ${who}` : ""} (${login.method}, device flow)`,
    };
  });
  await guarded("session", async (ctx) => {
    const session = await acpSession(ctx);
    return {
      value: session,
      detail: `session/new + a prompt answered (${session.stopReason}): "${session.reply}"`,
    };
  });
  await guarded("logout", async (ctx) => {
    const after = await acpLogout(ctx);
    if (after.signedIn !== false) throw new Error(`the agent reports ${after.state} after logout`);
    return { value: after, detail: "signed out" };
  });
}

async function ahpJourney(demo: RunningDemo, step: Step, logger: Logger): Promise<void> {
  let journey: AhpJourney | undefined;
  try {
    journey = await step("AHP", "connect", async () => {
      const opened = await connectAhpJourney(
        { ahpUrl: demo.urls.ahp, store: demo.store, logger },
        { autoApprove: true },
      );
      const names = opened.client.resources().map((r) => r.resource);
      return {
        value: opened,
        detail: `${opened.client.dialect} dialect; protects ${names.join(", ")}`,
      };
    });
    const authenticated = await step("AHP", "authenticate", async () => {
      if (!journey) throw new Skipped();
      const outcomes = await journey.authenticate();
      const views = await journey.resources();
      const who = [...new Set(views.map((v) => v.subject).filter(Boolean))].join(", ");
      const left = Math.min(...views.map((v) => (v.expiresAt ?? Date.now()) - Date.now()));
      return {
        value: new Map(views.map((v) => [v.resource, v.expiresAt])),
        detail: `${outcomes.length} resources as ${who || "?"}; tokens expire in ~${Math.max(0, Math.round(left / 1000))} s`,
      };
    });
    await step(
      "AHP",
      "renewal",
      async (signal) => {
        if (!journey || !authenticated) throw new Skipped();
        const seen = journey.renewals()[0] ?? {
          ...(await journey.nextRenewal({ signal })),
          at: Date.now(),
        };
        const old = authenticated.get(seen.resource);
        const ahead =
          old != null && old > seen.at
            ? `${((old - seen.at) / 1000).toFixed(1)} s before the old token expired`
            : "after the old token expired";
        const after = (await journey.resources()).find((r) => r.resource === seen.resource);
        const left =
          after?.expiresAt != null
            ? `; the new one lasts ${Math.max(0, Math.round((after.expiresAt - Date.now()) / 1000))} s`
            : "";
        return {
          value: seen,
          detail: `${seen.resource} renewed ${ahead} (${seen.trigger})${left}`,
        };
      },
      SCRIPT_AHP_TOKEN_TTL_SECONDS * 5_000,
    );
  } finally {
    await journey?.close().catch(() => {});
  }
}

async function rapJourney(demo: RunningDemo, step: Step, _logger: Logger): Promise<void> {
  const groupId = `script-${randomUUID()}`;
  const invokeWaiting = async (signal: AbortSignal) => {
    const outcome = await demo.runtime.invoke({
      groupId,
      operation: "whoami",
      arguments: {},
      userId: SCRIPT_USER,
    });
    if (!outcome.accepted) throw new Error("the tool refused the invocation");
    const link = await authLink(demo, groupId, outcome.id, signal);
    return { id: outcome.id, link };
  };
  let healthy = true;
  const guarded = async <T>(
    name: string,
    run: (signal: AbortSignal) => Promise<{ value: T; detail: string }>,
  ) => {
    const value = await step("RAP", name, async (signal) => {
      if (!healthy) throw new Skipped();
      return run(signal);
    });
    if (value === undefined) healthy = false;
    return value;
  };
  const first = await guarded("invoke", async (signal) => {
    const call = await invokeWaiting(signal);
    return {
      value: call,
      detail: `whoami as ${SCRIPT_USER}: oauth, link on the board (${origin(call.link)})`,
    };
  });
  await guarded("authorize", async (signal) => {
    if (!first) throw new Skipped();
    const page = await followLink(first.link, { signal });
    // The journey ends on the tool's own page (its callback); anywhere else (an IdP sign-in form) it stopped.
    const back = page.where.startsWith(new URL(demo.urls.tool).origin);
    if (page.status !== 200 || page.consentsGiven !== 1 || !back) {
      throw new Error(
        `the sign-in ended at ${page.where} (HTTP ${page.status}): ${clip(page.text, 120)}`,
      );
    }
    return { value: page, detail: `consent → IdP → callback: "${clip(page.text, 90)}"` };
  });
  await guarded("result", async (signal) => {
    if (!first) throw new Skipped();
    const settled = await demo.runtime.waitForResult(groupId, first.id, { signal });
    if (settled.result.isError) throw new Error(`whoami failed: ${settled.result.text}`);
    return { value: settled, detail: `whoami answered: ${settled.result.text}` };
  });
  await guarded("disconnect", async () => {
    const mine = await rapCredentials(demo);
    if (mine.length === 0) throw new Error("no RAP credential for alice in the vault");
    const said: string[] = [];
    for (const credential of mine) said.push((await disconnect(demo.store, credential.id)).message);
    return { value: said, detail: said.join("; ") };
  });
  await guarded("invoke again", async (signal) => {
    const again = await invokeWaiting(signal);
    // The new link is not followed: the call is cancelled so nothing waits when the demo closes.
    await demo.runtime.cancelCall(groupId, again.id);
    return { value: again, detail: `asks again: a new oauth link (${origin(again.link)})` };
  });
}

/** The call's auth URL from the console's board (fed by the runtime's authorization hook). */
async function authLink(
  demo: RunningDemo,
  groupId: string,
  id: string,
  signal: AbortSignal,
): Promise<string> {
  const now = demo.board.authUrlOf(groupId, id);
  if (now) return now;
  return new Promise<string>((resolve, reject) => {
    const stop = demo.board.onChange(() => {
      const link = demo.board.authUrlOf(groupId, id);
      if (!link) return;
      stop();
      resolve(link);
    });
    signal.addEventListener(
      "abort",
      () => {
        stop();
        reject(new Error("no authorization link reached the board"));
      },
      { once: true },
    );
  });
}

/** The example tool's credentials for the script user (stored by the tool in the demo vault). */
async function rapCredentials(demo: RunningDemo): Promise<CredentialSummary[]> {
  const all = await demo.store.list({ subject: SCRIPT_USER });
  return all.filter((c) => c.resource === demo.apiResource);
}

/** The first words of `text`, cut at a word boundary. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), max / 2))}…`;
}

function origin(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? `${parsed.origin}${parsed.pathname}` : "an unusable link";
}

/** A detail for the transcript: one line, no URL query or fragment (codes, states, consent ids live there). */
export function transcriptText(text: string): string {
  return peerText(text, { max: 240 }).replace(/\b(https?|wss?):\/\/[^\s"'<>)]+/gi, (url) => {
    const parsed = URL.parse(url);
    return parsed ? `${parsed.origin}${parsed.pathname}` : "[link]";
  });
}
