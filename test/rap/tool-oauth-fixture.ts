/** Shared setup for the RAP tool OAuth tests: the embedded authorization server, a client for the tool, operations. */

import { createLogger, type Secret } from "../../src/core/index.ts";
import type { RunningIdp } from "../../src/idp/index.ts";
import {
  type OperationDefinition,
  TokenRejectedError,
  type ToolServerOptions,
} from "../../src/rap/tool/index.ts";
import { CookieBrowser } from "../support/cookie-browser.ts";

/**
 * The person's browser, shared by a test file's sign-ins: Continue binds a sign-in to the browser that pressed it
 * (a cookie the redirect must bring back), so the consent page, the provider and the redirect go through one jar.
 */
export const person = new CookieBrowser();

/** The tool's OAuth client: public, PKCE, native so any loopback port matches (RFC 8252 §7.3). */
export const RAP_TOOL_CLIENT = {
  client_id: "rap-tool",
  application_type: "native",
  token_endpoint_auth_method: "none",
  redirect_uris: ["http://127.0.0.1/oauth/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
} as const;

export const SCOPE = "openid profile offline_access";

/** A real API call with the token: the authorization server's userinfo endpoint. */
export async function whoami(idp: RunningIdp, token: Secret | undefined): Promise<string> {
  const response = await fetch(`${idp.issuer}/me`, {
    headers: { authorization: `Bearer ${token?.reveal()}` },
  });
  if (response.status === 401) {
    await response.arrayBuffer();
    throw new TokenRejectedError();
  }
  const claims = (await response.json()) as { sub: string; name?: string };
  return `signed in as ${claims.sub} (${claims.name})`;
}

export function oauthOperations(idp: RunningIdp): OperationDefinition[] {
  return [
    {
      name: "whoami",
      description: "Says who the user is at the provider.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async ({ accessToken }) => whoami(idp, accessToken),
    },
    {
      name: "always_rejected",
      description: "An API that refuses every token.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async () => {
        throw new TokenRejectedError();
      },
    },
    {
      name: "leaky",
      description: "A buggy handler that returns its token.",
      inputSchema: { type: "object" },
      requiresAuth: "demo",
      handler: async ({ accessToken }) => `token is ${accessToken?.reveal()}`,
    },
    {
      name: "public_echo",
      description: "Needs no authorization.",
      inputSchema: { type: "object" },
      handler: async () => "public",
    },
  ];
}

export function providers(idp: RunningIdp): ToolServerOptions["providers"] {
  return {
    demo: {
      issuer: idp.issuer,
      client: { clientId: RAP_TOOL_CLIENT.client_id },
      scope: SCOPE,
      displayName: "Demo ID",
    },
  };
}

/**
 * Opens an auth_url that leads to the tool's consent page (issue 8 §1.2) and presses a button as the person's browser
 * would (the page's cookie and hidden fields); returns the POST's response.
 */
export async function consent(
  authUrl: string,
  action: "continue" | "cancel",
  browser: CookieBrowser = person,
): Promise<Response> {
  const shown = await browser.fetch(authUrl);
  const html = await shown.text();
  if (shown.status !== 200)
    throw new Error(`the consent page answered HTTP ${shown.status}: ${html}`);
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? "";
  const actionPath = /<form method="post" action="([^"]*)"/.exec(html)?.[1] ?? "";
  return browser.fetch(new URL(actionPath, authUrl), {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      origin: new URL(authUrl).origin,
    },
    body: new URLSearchParams({
      consent: field("consent"),
      csrf: field("csrf"),
      action,
    }).toString(),
  });
}

/**
 * The provider's authorization URL behind an auth_url: the person pressed Continue on the consent page (in `browser`,
 * which then holds the cookie the redirect must bring back).
 */
export async function providerUrl(authUrl: string, browser: CookieBrowser = person): Promise<URL> {
  const response = await consent(authUrl, "continue", browser);
  await response.arrayBuffer();
  const location = response.headers.get("location");
  if (response.status !== 303 || !location)
    throw new Error(`Continue answered HTTP ${response.status}`);
  return new URL(location);
}

/**
 * Follows an auth_url as the person's browser would: the consent page (Continue), then the auto-approving server
 * redirects to the tool. A provider URL (from `providerUrl`, in the same browser) skips the consent step.
 */
export async function authorize(
  authUrl: string,
  browser: CookieBrowser = person,
): Promise<{
  redirect: URL;
  status: number;
  page: string;
}> {
  let start = new URL(authUrl);
  if (start.pathname.endsWith("/oauth/start")) {
    // A link with nothing left to do shows its error page right there.
    const shown = await browser.fetch(authUrl);
    if (shown.status !== 200)
      return { redirect: start, status: shown.status, page: await shown.text() };
    await shown.arrayBuffer();
    start = await providerUrl(authUrl, browser);
  }
  const first = await browser.fetch(start, { redirect: "manual" });
  await first.arrayBuffer();
  const location = first.headers.get("location");
  if (!location)
    throw new Error(`the authorization server did not redirect (HTTP ${first.status})`);
  const redirect = new URL(location, start);
  const landed = await browser.fetch(redirect);
  return { redirect, status: landed.status, page: await landed.text() };
}

export function captureLogs(): { logs: string[]; logger: ReturnType<typeof createLogger> } {
  const logs: string[] = [];
  return { logs, logger: createLogger({ write: (line) => logs.push(line), level: "debug" }) };
}
