/**
 * `agentauth mcp login <url> --background`: the sign-in MCP proxies share (src/mcp/proxy/background.ts), run by a
 * proxy as a detached process. It prints nothing (nobody reads it); its outcome reaches the proxies through the
 * vault. A person may run it too: it then signs in like `mcp login`, opening the browser itself.
 */

import { createLogger } from "../../core/log.ts";
import { openBrowser, runBackgroundSignIn } from "../../mcp/proxy/index.ts";
import type { OAuthClient } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CliIo } from "../io.ts";

export async function backgroundSignIn(
  io: CliIo,
  serverUrl: URL,
  options: {
    subject: string;
    scope?: string;
    device: boolean;
    browser: boolean;
    clientFor?: (issuer: string) => OAuthClient | undefined;
  },
): Promise<number> {
  const store = openVault({ env: io.env });
  try {
    return await runBackgroundSignIn({
      canonicalUri: serverUrl.href,
      store,
      subject: options.subject,
      scope: options.scope,
      device: options.device,
      clientFor: options.clientFor,
      open: options.browser ? (url) => openBrowser(url, io.env) : undefined,
      log: createLogger({ fields: { component: "mcp-sign-in" } }),
    });
  } finally {
    await store.close();
  }
}
