/**
 * The background sign-in proxies share (sign-in.ts): `agentauth mcp login <url> --background` runs this in a process
 * of its own, detached from the proxy that started it, so the sign-in survives an MCP client restarting the proxy.
 * It takes the server's sign-in lease (another process holding it means a sign-in is already running: it ends at
 * once), reads the server's challenge, ends at once if the vault can give a token now (another sign-in finished
 * just before), signs in (browser through a loopback redirect, or the device flow), publishes
 * what the person must open in the lease's note, opens the browser unless told not to, stores the credential, and
 * ends: at the latest when the sign-in times out. A failure is published as the note for a while (so waiting proxies
 * can say why instead of starting another), then the lease is released.
 */

import type { Logger } from "../../core/log.ts";
import { sleep } from "../../oauth/http.ts";
import { type OAuthClient, TokenRefresher } from "../../oauth/index.ts";
import { leaseOwnerId } from "../../vault/index.ts";
import type { CredentialStore } from "../../vault/types.ts";
import { readUnauthorized } from "../client/challenge.ts";
import { discoverMcpAuthorization } from "../client/discovery.ts";
import type { DpopPolicy } from "../client/dpop-policy.ts";
import { probeMcpServer } from "../client/probe.ts";
import { signInToMcpServer } from "../client/sign-in.ts";
import { encodeNote, signInLeaseName } from "./sign-in.ts";

const DEFAULT_TIMEOUT_MS = 300_000;
/** How long a failure stays readable by waiting proxies before the lease is let go. */
const FAILURE_HOLD_MS = 30_000;

export interface BackgroundSignInOptions {
  /** The canonical server URL (as the proxy keys it). */
  canonicalUri: string;
  store: CredentialStore;
  subject: string;
  device?: boolean;
  scope?: string;
  clientFor?: (issuer: string) => OAuthClient | undefined;
  dpop?: DpopPolicy;
  /** Opens the authorization URL for the person (open-browser.ts), or undefined to only publish it. */
  open?: (url: string) => Promise<unknown>;
  timeoutMs?: number;
  /** Only for tests: how long a failure stays published. */
  failureHoldMs?: number;
  log: Logger;
}

/** Resolves to the process's exit code: 0 signed in (or another process is signing in), 1 failed. */
export async function runBackgroundSignIn(options: BackgroundSignInOptions): Promise<number> {
  const { store, log } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const name = signInLeaseName(options.canonicalUri, options.subject);
  const owner = leaseOwnerId();
  if (!(await store.acquireLease(name, owner, timeoutMs + 60_000))) {
    log.info("mcp.sign_in.already_running", {});
    return 0;
  }
  const publish = async (note: Parameters<typeof encodeNote>[0]): Promise<void> => {
    await store.setLeaseNote?.(name, owner, encodeNote(note));
  };
  try {
    const challenge = await probeMcpServer(new URL(options.canonicalUri));
    const hints = readUnauthorized(
      challenge.headers.get("www-authenticate"),
      new URL(options.canonicalUri),
    );
    // A proxy that saw the refusal late starts this after another sign-in stored a credential and let the lease go:
    // a credential the vault can give a token from now (refreshing it if due) means nobody is asked again.
    if (await usableCredential(options, hints)) {
      log.info("mcp.sign_in.not_needed", {});
      return 0;
    }
    const record = await signInToMcpServer({
      canonicalUri: options.canonicalUri,
      subject: options.subject,
      store,
      hints: options.scope ? { ...hints, scope: options.scope.split(/\s+/) } : hints,
      signInMethod: options.device ? "device" : "browser",
      onAuthorizationUrl: async (url) => {
        await publish({ kind: "browser", url: url.href });
        const opened = await options.open?.(url.href);
        log.info("mcp.sign_in.waiting", { browser: opened ?? "not opened" });
      },
      onDeviceCode: async (prompt) => {
        await publish({
          kind: "device",
          verificationUri: prompt.verificationUri,
          verificationUriComplete: prompt.verificationUriComplete,
          userCode: prompt.userCode,
        });
      },
      clientFor: options.clientFor,
      registrations: new Map(),
      clientName: "agentauth MCP proxy",
      dpop: options.dpop,
      timeoutMs,
    });
    log.info("mcp.sign_in.done", { subject: record.subject, issuer: record.issuer });
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    log.warn("mcp.sign_in.failed", { error });
    await publish({
      kind: "failed",
      code: typeof code === "string" ? code : "sign_in_failed",
      message: error instanceof Error ? error.message : "the sign-in failed",
    }).catch(() => {});
    await sleep(options.failureHoldMs ?? FAILURE_HOLD_MS);
    return 1;
  } finally {
    await store.releaseLease(name, owner).catch(() => {});
  }
}

/** Whether the vault holds a credential for this server that gives an access token without the person. */
async function usableCredential(
  options: BackgroundSignInOptions,
  hints: ReturnType<typeof readUnauthorized>,
): Promise<boolean> {
  if (options.scope) return false; // Asked for scopes: a new sign-in is the point.
  try {
    const target = await discoverMcpAuthorization(options.canonicalUri, hints);
    await new TokenRefresher({ store: options.store }).getCredential({
      subject: options.subject,
      issuer: target.as.issuer,
      resource: target.resource,
    });
    return true;
  } catch {
    // LoginRequiredError: the sign-in is needed. Discovery or the vault failed: the sign-in meets it and says why.
    return false;
  }
}
