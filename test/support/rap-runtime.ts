/** Test support: a RAP runtime on loopback with a recording set of hooks, closed after the test file. */

import { join } from "node:path";
import { after } from "node:test";
import {
  createRuntime,
  MemoryRuntimeStore,
  type RapRuntime,
  type RuntimeOptions,
} from "../../src/rap/runtime/index.ts";
import { tempDir } from "./tmp.ts";

export const TEST_KEY = new Uint8Array(32).fill(7);

export interface Recorded {
  results: unknown[];
  authorizations: { groupId: string; id: string; authUrl: string; provider: string | null }[];
  statuses: { groupId: string; text: string }[];
  events: unknown[];
  choices: unknown[];
  views: unknown[];
  requiresAuth: unknown[];
}

export async function testRuntime(
  options: Partial<RuntimeOptions> & { sqlite?: boolean },
): Promise<{ runtime: RapRuntime; recorded: Recorded; url: string; dbPath?: string }> {
  const recorded: Recorded = {
    results: [],
    authorizations: [],
    statuses: [],
    events: [],
    choices: [],
    views: [],
    requiresAuth: [],
  };
  const { hooks, sqlite, ...rest } = options;
  const dbPath = sqlite ? join(tempDir(), "rap-runtime.db") : undefined;
  const runtime = await createRuntime({
    ...(dbPath ? { dbPath } : { store: new MemoryRuntimeStore(), secretKey: TEST_KEY }),
    retry: { baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 2000 },
    ...rest,
    hooks: {
      onToolResult: (e) => void recorded.results.push(e),
      onAuthorizationRequired: (e) => void recorded.authorizations.push(e),
      onStatus: (e) => void recorded.statuses.push(e),
      onSubscriptionEvent: (e) => void recorded.events.push(e),
      onUserChoice: (e) => void recorded.choices.push(e),
      onViewUpdate: (e) => void recorded.views.push(e),
      onRequiresAuth: (e) => void recorded.requiresAuth.push(e),
      ...hooks,
    },
  });
  const listening = await runtime.listen();
  after(() => runtime.close());
  return { runtime, recorded, url: listening.url, ...(dbPath ? { dbPath } : {}) };
}
