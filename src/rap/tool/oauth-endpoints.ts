/**
 * The tool's two browser-facing OAuth endpoints: the consent page `auth_url` points at (GET shows it, POST
 * Continue redirects to the provider and binds the sign-in to that browser, POST Cancel ends the call), and the
 * redirect endpoint that checks the browser and exchanges the code.
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../core/log.ts";
import { isTemporarilyUnavailable } from "../../db/index.ts";
import { AuthorizationResponseError } from "../../oauth/index.ts";
import {
  type BindingCookieOptions,
  bindingCookie,
  bindingCookieName,
  clearBindingCookie,
  sameBrowser,
} from "./browser-binding.ts";
import type { ActiveCall, CallRegistry, CallSpec } from "./calls.ts";
import { ConsentLinks, consentCookieName, readCookie } from "./consent.ts";
import { durably } from "./durably.ts";
import { readBody } from "./http-body.ts";
import { page } from "./http-reply.ts";
import type { ProviderAuth } from "./oauth-flow.ts";
import {
  cancelledPage,
  consentPage,
  deniedPage,
  failedPage,
  forbiddenPage,
  invalidStatePage,
  otherBrowserPage,
  signedInPage,
  unavailablePage,
} from "./pages.ts";
import type { PendingAuthorizations } from "./pending-calls.ts";
import { type CallRunner, DURABLE_BUDGET_MS, ledgerCall } from "./runner.ts";
import type { CallLedger, ConsentStore } from "./state.ts";

export const OAUTH_START_PATH = "/oauth/start";
/** The tool's OAuth redirect endpoint: register `${publicBaseUrl}/oauth/callback` with each provider. */
export const OAUTH_CALLBACK_PATH = "/oauth/callback";
const MAX_FORM_BYTES = 4096;

export interface OAuthEndpointsOptions {
  auth: ProviderAuth;
  calls: CallRegistry;
  pending: PendingAuthorizations;
  runner: () => CallRunner;
  consents: ConsentStore;
  /** With shared state: was the call (or its thread) cancelled at any instance? */
  cancelled?: (groupId: string, id: string) => Promise<boolean>;
  /**
   * With shared state: the ledger of accepted calls. A sign-in resumes its call only if the ledger still has it
   * waiting for that very attempt (a compare-and-set): a link whose call was resumed by another sign-in, ended or
   * timed out is refused, at whichever instance it lands, and the call never runs twice (issue 22 §1).
   */
  ledger?: CallLedger;
  /** The tool's base URL (origin + path prefix), known once listening. */
  base: () => { href: string; path: string };
  logger: Logger;
}

export function createOAuthEndpoints(o: OAuthEndpointsOptions) {
  const startPath = () => `${o.base().path}${OAUTH_START_PATH}`;
  const bindingOptions = (): BindingCookieOptions => ({
    path: `${o.base().path}${OAUTH_CALLBACK_PATH}`,
    secure: o.base().href.startsWith("https:"),
  });

  /** GET: the consent page, and the cookie that must come back with its form. */
  async function show(url: URL, res: ServerResponse): Promise<void> {
    const id = url.searchParams.get("consent");
    const entry = await o.consents.peek(id);
    if (!entry || !(await stillWaiting(entry))) {
      page(res, invalidStatePage());
      return;
    }
    const cookie = `${consentCookieName(id as string)}=${entry.csrf}; Path=${startPath()}; HttpOnly; SameSite=Strict; Max-Age=${Math.max(1, Math.floor((entry.expiresAt - Date.now()) / 1000))}${o.base().href.startsWith("https:") ? "; Secure" : ""}`;
    page(
      res,
      consentPage({ ...entry, action: startPath(), consent: id as string, csrf: entry.csrf }),
      {
        "set-cookie": cookie,
        // Continue redirects to the provider: form-action must allow its origin too (browsers check redirects).
        "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'self' ${entry.authorizationUrl.origin}`,
        // With no-referrer, Chromium sends `Origin: null` on the form's POST (Fetch: a request's origin is serialized
        // as null under that policy), which the origin check below refuses. same-origin still sends nothing to other
        // origins; the 303 to the provider carries no-referrer itself.
        "referrer-policy": "same-origin",
      },
    );
  }

  /** POST: Continue (303 to the provider) or Cancel (the call ends with an error). Refused without the CSRF pair. */
  async function decide(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const type = req.headers["content-type"] ?? "";
    const raw = await readBody(req, MAX_FORM_BYTES);
    if (!raw.ok || !/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
      return page(res, forbiddenPage(), { connection: "close" });
    }
    const form = new URLSearchParams(raw.bytes.toString("utf8"));
    const id = form.get("consent");
    const origin = req.headers.origin;
    // A browser names the page's origin on a form POST; another origin is a cross-site forgery (RFC 6454 §7.3).
    if (origin !== undefined && origin !== new URL(o.base().href).origin) {
      o.logger.warn("rap.oauth.consent_refused", { reason: "cross-origin" });
      return page(res, forbiddenPage());
    }
    const cookie = id ? readCookie(req.headers.cookie, consentCookieName(id)) : undefined;
    const entry = await o.consents.take(id, form.get("csrf"), cookie);
    if (!entry) {
      o.logger.warn("rap.oauth.consent_refused", { reason: "unknown link or CSRF token" });
      return page(res, forbiddenPage());
    }
    if (!(await stillWaiting(entry))) return page(res, invalidStatePage());
    // Held here, or (shared state) by another instance, or by none any more (it was restarted).
    const local = o.calls.awaiting(entry.groupId, entry.id, entry.attempt);
    const clear = `${consentCookieName(id as string)}=; Path=${startPath()}; HttpOnly; SameSite=Strict; Max-Age=0`;
    if (form.get("action") === "continue") {
      o.logger.info("rap.oauth.consent_given", { provider: entry.provider, user_id: entry.userId });
      // This browser, and only this one, may come back from the provider with this state (browser-binding.ts).
      const bound = entry.browserBinding
        ? [
            bindingCookie(
              entry.state,
              entry.browserBinding,
              (entry.expiresAt - Date.now()) / 1000,
              bindingOptions(),
            ),
          ]
        : [];
      res.writeHead(303, {
        location: entry.authorizationUrl.href,
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
        "set-cookie": [clear, ...bound],
        "content-length": "0",
      });
      res.end();
      return;
    }
    // Cancel: burn the state too, so the provider link cannot be completed later.
    const taken = await o.pending.take(entry.state).catch(() => undefined);
    const spec = taken?.call ?? (local ? { ...local.spec, attempt: local.attempt } : undefined);
    const call = spec ? await claim(spec) : undefined;
    if (!call) return page(res, invalidStatePage());
    o.calls.resume(call);
    o.logger.info("rap.oauth.consent_cancelled", {
      provider: entry.provider,
      user_id: entry.userId,
    });
    page(res, cancelledPage(entry.providerName), { "set-cookie": clear });
    o.runner().fail(
      call,
      `The person cancelled signing in to ${entry.providerName}, so ${entry.operation} did not run. Ask again if you still need it.`,
    );
  }

  /**
   * Is the link's call still waiting for the person? With the shared ledger: it says so, for that very attempt (and
   * the call was not cancelled). Without: here it must be that very attempt, waiting; with a shared pending store, a
   * call this instance does not hold may be waiting at another (or at none, restarted): it counts unless cancelled.
   */
  async function stillWaiting(entry: {
    groupId: string;
    id: string;
    attempt: string;
  }): Promise<boolean> {
    if (o.ledger) {
      return (
        (await o.ledger.isAwaiting(entry.groupId, entry.id, entry.attempt)) &&
        !(await isCancelled(entry.groupId, entry.id))
      );
    }
    if (o.calls.awaiting(entry.groupId, entry.id, entry.attempt)) return true;
    if (!o.pending.shared || o.calls.holds(entry.groupId, entry.id)) return false;
    return !(await isCancelled(entry.groupId, entry.id));
  }

  /**
   * The call a sign-in (or a Cancel) for `spec.attempt` continues, here, or undefined when it must not: with the
   * ledger, only if it still waits for that attempt, which this instance then holds (taken over from another instance
   * if it started there); without, the call waiting here, or one another instance started (shared pending store).
   */
  async function claim(spec: CallSpec & { attempt: string }): Promise<ActiveCall | undefined> {
    const local = o.calls.awaiting(spec.groupId, spec.id, spec.attempt);
    const ledger = o.ledger;
    if (!ledger) return local ?? (o.pending.shared ? o.calls.adopt(spec, spec.attempt) : undefined);
    const outcome = await durably(
      () => ledger.resume(ledgerCall({ spec, attempt: spec.attempt })),
      {
        budgetMs: DURABLE_BUDGET_MS,
      },
    );
    if (outcome === "stale") {
      // Resumed elsewhere, ended or timed out: whatever this instance still holds of it is obsolete.
      if (local) o.calls.finish(local);
      return undefined;
    }
    const call = local ?? o.calls.adopt(spec, spec.attempt, true);
    if (call) call.ledgered = true;
    else o.logger.warn("rap.oauth.takeover_unheld", { group_id: spec.groupId, id: spec.id });
    return call;
  }

  /** Unknown counts as cancelled: resuming a call that may have been cancelled would run it against the runtime's word. */
  async function isCancelled(groupId: string, id: string): Promise<boolean> {
    if (!o.cancelled) return false;
    try {
      return await o.cancelled(groupId, id);
    } catch (error) {
      o.logger.error("rap.oauth.state_unavailable", { error });
      return true;
    }
  }

  async function redirect(req: IncomingMessage, url: URL, res: ServerResponse): Promise<void> {
    const params = url.searchParams;
    const state = params.get("state");
    let entry: Awaited<ReturnType<PendingAuthorizations["take"]>>;
    try {
      entry = await o.pending.take(state);
    } catch (error) {
      if (!(error instanceof AuthorizationResponseError)) {
        // The shared store failed (unreachable, or a vault key this instance lacks): not the person's fault.
        o.logger.error("rap.oauth.state_unavailable", { error });
        // Nothing was taken: once the database is back, reloading the page finishes the sign-in.
        return page(
          res,
          unavailablePage(),
          isTemporarilyUnavailable(error) ? { "retry-after": "1" } : {},
        );
      }
      o.logger.warn("rap.oauth.state_refused", { reason: "unknown, used or expired" });
      return page(res, invalidStatePage());
    }
    const { call: spec } = entry;
    // With a shared store, the instance that started the sign-in may be gone (restarted, killed, another machine):
    // the call is resumed here from what the store kept. A call this instance holds must be that very attempt.
    // With shared state the runtime may have cancelled the call at another instance: then it is not resumed, here
    // (where it may still be waiting) or by adoption.
    if (o.pending.shared && (await isCancelled(spec.groupId, spec.id))) {
      o.calls.cancel(spec.groupId, spec.id);
      o.logger.warn("rap.oauth.state_refused", { reason: "call cancelled" });
      return page(res, invalidStatePage());
    }
    const call = await claim(spec);
    if (!call || state === null) {
      o.logger.warn("rap.oauth.state_refused", { reason: "call no longer pending" });
      return page(res, invalidStatePage());
    }
    o.calls.resume(call);
    const name = o.auth.displayName(spec.provider);
    const runner = o.runner();
    // The state is spent either way; the cookie, if any, goes with it.
    const cleared = { "set-cookie": clearBindingCookie(state, bindingOptions()) };
    // Login CSRF / consent bypass: a provider URL carried from the browser that pressed Continue to another one is
    // refused before the code is exchanged, so nobody's sign-in is filed under a user_id they never consented for.
    const sent = readCookie(req.headers.cookie, bindingCookieName(state, bindingOptions()));
    if (!sameBrowser(sent, entry.browser)) {
      o.logger.warn("rap.oauth.browser_mismatch", {
        provider: spec.provider,
        user_id: spec.userId,
        group_id: spec.groupId,
        id: spec.id,
      });
      page(res, otherBrowserPage(name), cleared);
      return runner.fail(
        call,
        `The sign-in to ${name} was finished in another browser than the one that pressed Continue on the consent page, so it was refused and nothing was connected; ${spec.operation} did not run. Ask again, then open the new link and finish signing in in the same browser.`,
      );
    }
    const outcome = await o.auth.exchange(state, entry, params);
    if (outcome.kind === "denied") {
      page(res, deniedPage(name), cleared);
      return runner.fail(
        call,
        `${name} authorization was denied by the user. To use ${spec.operation}, ask again and grant the requested permissions.`,
      );
    }
    if (outcome.kind === "failed") {
      page(res, failedPage(name), cleared);
      return runner.fail(call, outcome.message);
    }
    page(res, signedInPage(name, outcome.account, spec.userId), cleared);
    // One authorization serves every call of this user waiting here on this provider; with the ledger, each only if
    // it still waits (its own link may have been finished at another instance meanwhile), and then never again.
    const waiting = [call, ...o.calls.awaitingUser(spec.userId, spec.provider)];
    for (const next of waiting) {
      if (
        next !== call &&
        !(await claim({ ...next.spec, attempt: next.attempt }).catch(() => undefined))
      ) {
        continue;
      }
      o.calls.resume(next);
      runner.run(next, true).catch((error) => {
        o.logger.error("rap.call.crashed", { error });
        runner.fail(next, `${next.spec.operation} failed unexpectedly. Try again later.`);
      });
    }
  }

  return { show, decide, redirect };
}

export { ConsentLinks };
