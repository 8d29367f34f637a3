/**
 * One sign-in per MCP server and subject for the whole machine (and for every machine on a PostgreSQL vault), shared
 * by every proxy: a vault lease `mcp-sign-in:<hash>` held by the process running the sign-in (the background
 * sign-in, background.ts), whose note says what the person must open (the authorization URL, or the device flow's
 * page and code) or, when it failed, why. A proxy that needs a sign-in joins the holder, or asks for one to start
 * (`startSignIn`); it waits a little for the credential (the person may be quick), and otherwise answers its client
 * with what to do. A proxy restarted by its client joins the same sign-in: one browser tab, not one per restart;
 * a refused refresh token leads to one sign-in, not a loop of authorization requests.
 */

import { createHash } from "node:crypto";
import { peerText, peerUrl } from "../../core/display.ts";
import type { Logger } from "../../core/log.ts";
import { sleep } from "../../oauth/http.ts";
import { isLeaseOwnerGone, leaseOwnerId } from "../../vault/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import { displayMcpServerUrl } from "../client/server-url.ts";
import type { SignInOutcome } from "./pump.ts";

/** What the holder publishes. Not secret: the person opens it (the URL's `state` is single-use anti-CSRF). */
export type SignInNote =
  | { kind: "browser"; url: string }
  | { kind: "device"; verificationUri: string; verificationUriComplete?: string; userCode: string }
  | { kind: "failed"; code: string; message: string };

/** JSON-RPC error codes the proxy answers with. -32042 is MCP's URLElicitationRequiredError (2025-11-25). */
export const SIGN_IN_REQUIRED = -32001;
export const URL_ELICITATION_REQUIRED = -32042;
const POLL_MS = 250;
const NOTE_WAIT_MS = 5_000;
const MAX_NOTE = 4_096;
/**
 * Proxies that meet the refusal together: the first takes this short lease and starts the background sign-in, the
 * others join; by the time it runs out, the background process holds the sign-in lease itself.
 */
const START_LEASE_MS = 10_000;

export function signInLeaseName(canonicalUri: string, subject: string): string {
  const digest = createHash("sha256").update(`${subject}\u0000${canonicalUri}`).digest("base64url");
  return `mcp-sign-in:${digest.slice(0, 22)}`;
}

export function encodeNote(note: SignInNote): string {
  return JSON.stringify(note);
}

/** The holder's note, when the lease is live (held, unexpired, its owner's process still there). */
export async function liveSignIn(
  store: CredentialStore,
  name: string,
): Promise<{ live: boolean; note?: SignInNote }> {
  const lease = await store.getLease?.(name);
  if (!lease || lease.expiresAt <= Date.now() || isLeaseOwnerGone(lease.owner))
    return { live: false };
  return { live: true, note: parseNote(lease.note) };
}

function parseNote(text: string | undefined): SignInNote | undefined {
  if (!text || text.length > MAX_NOTE) return undefined;
  try {
    const note = JSON.parse(text) as SignInNote;
    if (note.kind === "browser" && typeof note.url === "string") return note;
    if (
      note.kind === "device" &&
      typeof note.verificationUri === "string" &&
      typeof note.userCode === "string"
    )
      return note;
    if (note.kind === "failed" && typeof note.code === "string" && typeof note.message === "string")
      return note;
  } catch {}
  return undefined;
}

export interface CoordinatorOptions {
  store: CredentialStore;
  canonicalUri: string;
  subject: string;
  /** Starts a background sign-in (the CLI spawns `agentauth mcp login --background`); absent: say how to sign in. */
  startSignIn?: () => void;
  /** Whether the proxy can get a token now (the provider's `token()`). */
  ready: () => Promise<boolean>;
  /** How long to wait for the person before answering the client. Default 15 s. */
  waitMs?: number;
  /**
   * What the person runs to sign in by hand (the CLI adds its --client-id and secret flags). Default:
   * `npx agentauth mcp login <url> --subject <subject>`, the subject always named (mcp login's own default differs).
   */
  loginCommand?: string;
  /** The MCP client took part in URL elicitation (its `initialize` said `elicitation.url`). */
  urlElicitation: () => boolean;
  log: Logger;
}

/**
 * How long an `initialize` waits for the person at most: clients give a server's start about 10 s (Codex's default
 * `startup_timeout_sec`) and show their own timeout instead of our answer if we wait longer.
 */
const INITIALIZE_WAIT_MS = 7_000;

/** The pump's `signIn`: join or start the machine's sign-in, wait a little, then retry or say what to do. */
export function signInCoordinator(
  options: CoordinatorOptions,
): (message: { method?: string }, signal?: AbortSignal) => Promise<SignInOutcome> {
  const name = signInLeaseName(options.canonicalUri, options.subject);
  const startLease = `${name}:start`;
  const owner = leaseOwnerId();
  // Requests of this process waiting on the sign-in it started: the later ones join it.
  let startedHere = 0;
  return async (message, signal) => {
    // Another process may have signed in (or refreshed) since this request was refused.
    if (await options.ready()) return { retry: true };
    let state = await liveSignIn(options.store, name);
    let starter = false;
    if (!state.live) {
      if (!options.startSignIn) return { retry: false, error: howToSignIn(options, undefined) };
      if (startedHere === 0) {
        startedHere++; // before the await: a second request of this process joins this one
        starter = await options.store
          .acquireLease(startLease, owner, START_LEASE_MS)
          .catch(() => true);
        if (!starter) startedHere--;
      }
      options.log.info(starter ? "mcp.proxy.sign_in_started" : "mcp.proxy.sign_in_joined", {
        server: displayMcpServerUrl(options.canonicalUri),
      });
      if (starter) options.startSignIn();
    } else {
      options.log.info("mcp.proxy.sign_in_joined", {
        server: displayMcpServerUrl(options.canonicalUri),
      });
    }
    try {
      const waitMs =
        message.method === "initialize"
          ? Math.min(options.waitMs ?? 15_000, INITIALIZE_WAIT_MS)
          : (options.waitMs ?? 15_000);
      const deadline = Date.now() + Math.max(waitMs, Math.min(NOTE_WAIT_MS, INITIALIZE_WAIT_MS));
      const wanted = Date.now() + waitMs;
      for (;;) {
        if (signal?.aborted) break;
        if (await options.ready()) return { retry: true };
        state = await liveSignIn(options.store, name);
        if (state.note?.kind === "failed") break;
        // Wait at least until the note is published, so the answer can name the URL; then until `waitMs`.
        if (Date.now() >= deadline || (Date.now() >= wanted && state.note)) break;
        await sleep(POLL_MS);
      }
      const answer = howToSignIn(options, state.note);
      // Also on stderr (the client's MCP log), for clients that show a server's errors poorly; a device code is
      // a credential while pending (the logs never hold one), so that answer is not repeated there.
      options.log.info("mcp.proxy.sign_in_needed", {
        what:
          state.note?.kind === "device"
            ? "a device sign-in (the code is in the client's answer)"
            : answer.message,
      });
      return { retry: false, error: answer };
    } finally {
      // The background sign-in holds its own lease by now (or never started): the next refusal may start one.
      if (starter) {
        startedHere--;
        await options.store.releaseLease(startLease, owner).catch(() => {});
      }
    }
  };
}

/** The answer for the client: what happened and what to do, the URL when there is one. */
function howToSignIn(
  options: CoordinatorOptions,
  note: SignInNote | undefined,
): { code: number; message: string; data?: unknown } {
  const shown = displayMcpServerUrl(options.canonicalUri);
  const command =
    options.loginCommand ??
    `npx agentauth mcp login ${shown} --subject ${shellWord(options.subject)}`;
  if (note?.kind === "failed") {
    return {
      code: SIGN_IN_REQUIRED,
      message: `Signing in to ${shown} failed (${peerText(note.code, { max: 64 })}): ${peerText(note.message, { max: 400 })} Run '${command}' in a terminal to try again.`,
      data: { command },
    };
  }
  if (note?.kind === "device") {
    const page =
      peerUrl(note.verificationUriComplete ?? note.verificationUri) ?? "(no usable page)";
    return {
      code: SIGN_IN_REQUIRED,
      message: `Sign in to ${shown} to use it: open ${page} and enter the code ${peerText(note.userCode, { max: 64 })}, then try again.`,
      data: { url: page, userCode: note.userCode, command },
    };
  }
  if (note?.kind === "browser") {
    const url = peerUrl(note.url) ?? "(no usable URL)";
    const message = `Sign in to ${shown} to use it: open ${url} in a browser, then try again (or run '${command}').`;
    if (options.urlElicitation()) {
      return {
        code: URL_ELICITATION_REQUIRED,
        message,
        data: {
          elicitations: [
            {
              mode: "url",
              elicitationId: crypto.randomUUID(),
              url,
              message: `Sign in to ${shown}`,
            },
          ],
        },
      };
    }
    return { code: SIGN_IN_REQUIRED, message, data: { url, command } };
  }
  return {
    code: SIGN_IN_REQUIRED,
    message: `Signing in to ${shown} is needed. Run '${command}' in a terminal, then try again.`,
    data: { command },
  };
}

/** A word a shell reads back as it is: plain when it can be, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9._@:+=/-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
