/** Login and consent pages of the embedded server; with auto-approve they sign in and consent as one demo user. */

import type { Middleware } from "koa";
import type Provider from "oidc-provider";
import type { InteractionResults, KoaContextWithOIDC } from "oidc-provider";
import type { Logger } from "../core/log.ts";
import { consentPage, errorPage, loginPage, shownClientName } from "./pages.ts";
import { findDemoUser } from "./users.ts";

const ROUTE = /^\/interaction\/([A-Za-z0-9_-]{1,64})(?:\/(login|confirm|abort))?$/;
const MAX_FORM_BYTES = 4096;

type Details = Awaited<ReturnType<Provider["interactionDetails"]>>;

export function interactionRoutes(
  provider: Provider,
  options: { autoApproveAs?: string; showDemoAccounts: boolean; logger: Logger },
): Middleware {
  return async (ctx, next) => {
    const match = ROUTE.exec(ctx.path);
    if (!match) return next();
    ctx.set("cache-control", "no-store");
    let details: Details;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch {
      ctx.status = 400;
      ctx.type = "html";
      ctx.body = errorPage(
        "This sign-in request has expired or was opened in another browser.",
        "Start the sign-in again from your application.",
      );
      return;
    }
    if (details.uid !== match[1]) {
      ctx.status = 400;
      ctx.body = errorPage("Interaction mismatch");
      return;
    }
    const client = await provider.Client.find(String(details.params.client_id));
    const clientName = shownClientName(client?.clientName, String(details.params.client_id));
    const action = match[2];
    const finish = async (result: InteractionResults) => {
      ctx.respond = false;
      await provider.interactionFinished(ctx.req, ctx.res, result, {
        mergeWithLastSubmission: false,
      });
    };

    if (ctx.method === "GET" && !action) {
      if (options.autoApproveAs) {
        options.logger.info("idp.auto_approve", {
          prompt: details.prompt.name,
          user: options.autoApproveAs,
        });
        return finish(await autoResult(provider, details, options.autoApproveAs));
      }
      ctx.type = "html";
      if (details.prompt.name === "login") {
        ctx.body = loginPage({
          uid: details.uid,
          clientName,
          showDemoAccounts: options.showDemoAccounts,
        });
      } else {
        const scopes = String(details.params.scope ?? "")
          .split(" ")
          .filter(Boolean);
        // oidc-provider drops offline_access from the request unless prompt=consent (OIDC Core §11), yet this server
        // issues refresh tokens to every client allowed the grant: tell the person what really happens.
        if (client?.grantTypeAllowed("refresh_token") && !scopes.includes("offline_access"))
          scopes.push("offline_access");
        const resource = details.params.resource;
        const resources = Array.isArray(resource)
          ? resource.map(String)
          : resource
            ? [String(resource)]
            : [];
        const user = findDemoUser(String(details.session?.accountId ?? ""));
        ctx.body = consentPage({
          uid: details.uid,
          clientName,
          user: user ? `${user.name} (${user.sub})` : undefined,
          scopes,
          resources,
        });
      }
      return;
    }
    if (ctx.method !== "POST" || !action) {
      ctx.status = 405;
      return;
    }
    if (action === "login") {
      const form = await readForm(ctx as unknown as KoaContextWithOIDC);
      const user = form && findDemoUser(form.get("login") ?? "");
      if (!user || !form || form.get("password") !== user.password) {
        ctx.type = "html";
        ctx.status = 401;
        ctx.body = loginPage({
          uid: details.uid,
          clientName,
          error: "Unknown user or wrong password.",
          showDemoAccounts: options.showDemoAccounts,
        });
        return;
      }
      return finish({ login: { accountId: user.sub } });
    }
    if (action === "confirm") {
      if (details.prompt.name !== "consent")
        return finish({ error: "access_denied", error_description: "Sign in first" });
      return finish({ consent: { grantId: await grantAll(provider, details) } });
    }
    return finish({ error: "access_denied", error_description: "The user denied access" });
  };
}

async function autoResult(
  provider: Provider,
  details: Details,
  accountId: string,
): Promise<InteractionResults> {
  if (details.prompt.name === "login") return { login: { accountId } };
  return { consent: { grantId: await grantAll(provider, details) } };
}

/** Grants exactly what the prompt says is missing (oidc-provider's documented consent recipe). */
async function grantAll(provider: Provider, details: Details): Promise<string> {
  const accountId = details.session?.accountId;
  const clientId = String(details.params.client_id);
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId });
  if (!grant) throw new Error("grant vanished during consent");
  const missing = details.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "));
  }
  return grant.save();
}

async function readForm(ctx: KoaContextWithOIDC): Promise<URLSearchParams | undefined> {
  if (!String(ctx.get("content-type")).startsWith("application/x-www-form-urlencoded"))
    return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}
