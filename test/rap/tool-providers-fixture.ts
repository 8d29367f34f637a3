/**
 * Shared setup for the RAP tool tests with provider presets (GitHub, Slack): the tool with a preset pointed at its
 * simulator, a real SQLite vault in a temp home, captured logs, a real RAP runtime (createRuntime) invoking it, and a
 * "browser" that walks an `auth_url` through the tool's consent page to the simulator and back to the tool.
 */

import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ToolServer, ToolServerOptions } from "../../src/rap/tool/index.ts";
import {
  type CredentialInput,
  type CredentialKey,
  type CredentialRecord,
  openVault,
  type VaultStore,
} from "../../src/vault/index.ts";
import { testRuntime } from "../support/rap-runtime.ts";
import { tempDir } from "../support/tmp.ts";
import { startTool } from "./tool-fixture.ts";
import { consent, person } from "./tool-oauth-fixture.ts";

export interface Stand {
  tool: ToolServer;
  /** The tool's base URL. */
  url: string;
  /** Every log line the tool wrote. */
  logs: string[];
  store: VaultStore;
  /** The agentauth home holding the vault's SQLite files. */
  home: string;
  /** Invokes through the runtime; returns the call's ids. */
  invoke(
    userId: string,
    operation?: string,
    args?: Record<string, unknown>,
  ): Promise<{ groupId: string; id: string }>;
  /** The `auth_url` the runtime's hook received for this call (waits for it). */
  authUrl(id: string): Promise<string>;
  /** How many `oauth` messages the runtime has handed to its hook so far. */
  authorizations(): number;
  /** The call's terminal result text (the tool's, or a synthetic error). */
  result(call: { groupId: string; id: string }): Promise<string>;
  /** Every result event the runtime's hook received, as JSON. */
  results(): string[];
  /** The auth_urls the runtime received. */
  authUrls(): string[];
  /** The bytes of every SQLite file of the vault (to look for secrets at rest). */
  vaultBytes(): Buffer;
}

export async function startStand(
  options: Pick<ToolServerOptions, "providers" | "operations"> &
    Partial<Omit<ToolServerOptions, "toolset">>,
): Promise<Stand> {
  const home = tempDir();
  const store = openVault({ env: { AGENTAUTH_HOME: home } });
  const { tool, url, logs } = await startTool({ store, ...options });
  const { runtime, recorded } = await testRuntime({ toolsetUrls: [url] });
  return {
    tool,
    url,
    logs,
    store,
    home,
    async invoke(userId, operation = "whoami", args = {}) {
      const groupId = `thread_${randomUUID()}`;
      const id = `call_${randomUUID()}`;
      const outcome = await runtime.invoke({ groupId, id, userId, operation, arguments: args });
      if (!outcome.accepted) throw new Error(`the tool did not accept ${operation}`);
      return { groupId, id };
    },
    authUrl: (id) =>
      waitUntil(
        () => recorded.authorizations.find((a) => a.id === id)?.authUrl,
        `an oauth message for ${id}`,
      ),
    authorizations: () => recorded.authorizations.length,
    async result(call) {
      const settled = await runtime.waitForResult(call.groupId, call.id);
      return settled.result.text;
    },
    results: () => recorded.results.map((r) => JSON.stringify(r)),
    authUrls: () => recorded.authorizations.map((a) => a.authUrl),
    vaultBytes: () =>
      Buffer.concat(
        readdirSync(home)
          .filter((f) => f.startsWith("vault.db"))
          .map((f) => readFileSync(join(home, f))),
      ),
  };
}

/** What the person's browser went through for one sign-in. */
export interface SignIn {
  /** The tool's consent page (HTML). */
  consentPage: string;
  /** Where Continue sent the browser: the provider's authorization URL. */
  providerUrl: URL;
  /** Where the provider sent the browser back: the tool's redirect endpoint with code/state or error. */
  callback: URL;
  /** The tool's answer there. */
  status: number;
  page: string;
}

/** Opens auth_url, presses Continue, lets the simulator approve (or deny), and lands on the tool's callback. */
export async function signIn(authUrl: string): Promise<SignIn> {
  const shown = await person.fetch(authUrl);
  const consentPage = await shown.text();
  if (shown.status !== 200) throw new Error(`the consent page answered HTTP ${shown.status}`);
  const decided = await consent(authUrl, "continue");
  await decided.arrayBuffer();
  const location = decided.headers.get("location");
  if (decided.status !== 303 || !location) throw new Error(`Continue answered ${decided.status}`);
  const providerUrl = new URL(location);
  const approved = await person.fetch(providerUrl, { redirect: "manual" });
  await approved.arrayBuffer();
  const back = approved.headers.get("location");
  if (!back) throw new Error(`the provider did not redirect (HTTP ${approved.status})`);
  const callback = new URL(back, providerUrl);
  const landed = await person.fetch(callback);
  return { consentPage, providerUrl, callback, status: landed.status, page: await landed.text() };
}

/** Rewrites a stored credential (as its provider would see it hours later: `expiresAt` past, or other changes). */
export async function rewrite(
  store: VaultStore,
  key: CredentialKey,
  change: (input: CredentialInput) => CredentialInput = (input) => ({
    ...input,
    expiresAt: Date.now() - 1000,
  }),
): Promise<CredentialRecord> {
  const record = await store.get(key);
  if (!record) throw new Error(`no credential for ${key.subject}`);
  const { id: _id, version: _v, createdAt: _c, updatedAt: _u, ...input } = record;
  return store.put(change(input));
}

/** Polls until `read` gives a value; throws (naming `what`) after a generous bound. Not a timed assertion. */
export async function waitUntil<T>(read: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
