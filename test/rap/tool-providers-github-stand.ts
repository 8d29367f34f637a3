/**
 * The GitHub side of the RAP tool provider tests: the GitHub simulator (test/sims/github.ts) registered with the
 * tool's loopback callback URL, the github.com preset remapped to it, and operations calling its REST API.
 */

import assert from "node:assert/strict";
import { after } from "node:test";
import type { Provider } from "../../src/oauth/index.ts";
import { github } from "../../src/providers/index.ts";
import {
  type OperationDefinition,
  TokenRejectedError,
  type ToolServer,
} from "../../src/rap/tool/index.ts";
import { type GitHubSimulator, startGitHubSimulator } from "../sims/github.ts";
import { rewrite, type Stand, signIn, startStand } from "./tool-providers-fixture.ts";

/** The github.com preset's issuer: the vault key's issuer even when its origins are remapped to the simulator. */
export const ISSUER = "https://github.com/login/oauth";

export interface GitHubStand {
  sim: GitHubSimulator;
  stand: Stand;
}

/** `wrap` turns the preset into another (a tool author's own `Provider`). */
export async function githubStand(
  app: "oauth_app" | "github_app" = "oauth_app",
  wrap: (preset: Provider) => Provider = (preset) => preset,
): Promise<GitHubStand> {
  const sim = await startGitHubSimulator({
    appKind: app,
    publicHost: "https://github.com",
    // The app's registered callback URL: the tool's redirect endpoint on loopback (any port, docs §"Loopback").
    callbackUrl: "http://127.0.0.1/oauth/callback",
  });
  after(() => sim.close());
  const holder: { tool?: ToolServer } = {};
  const stand = await startStand({
    providers: {
      github: wrap(
        github({
          clientId: sim.clientId,
          clientSecret: sim.clientSecret,
          app,
          origins: { "https://github.com": sim.url, "https://api.github.com": sim.url },
        }),
      ),
    },
    operations: operations(sim, holder),
  });
  holder.tool = stand.tool;
  return { sim, stand };
}

function operations(sim: GitHubSimulator, holder: { tool?: ToolServer }): OperationDefinition[] {
  return [
    {
      name: "whoami",
      description: "Who the user is on GitHub (REST GET /user).",
      inputSchema: { type: "object" },
      requiresAuth: "github",
      handler: async ({ accessToken, signal }) => {
        const response = await fetch(`${sim.url}/user`, {
          headers: { authorization: `Bearer ${accessToken?.reveal()}`, accept: "application/json" },
          signal,
        });
        const user = (await response.json()) as { login?: string; id?: number };
        if (response.status === 401) throw new TokenRejectedError();
        return `GitHub user ${user.login} (${user.id})`;
      },
    },
    {
      name: "disconnect",
      description: "Removes the user's GitHub connection.",
      inputSchema: { type: "object" },
      handler: async ({ userId }) => {
        const outcome = await (holder.tool as ToolServer).disconnect(userId ?? "", "github");
        return `found ${outcome.found}, revoked ${outcome.revoked}, deleted ${outcome.deleted}`;
      },
    },
  ];
}

/** One user, signed in: the first call's oauth message completed, its result delivered. */
export async function signedIn(stand: Stand, userId: string): Promise<void> {
  const call = await stand.invoke(userId);
  await signIn(await stand.authUrl(call.id));
  assert.match(await stand.result(call), /^GitHub user alice/);
}

/** The user's stored credential, its access token marked as past expiry (as 8 hours later). */
export const expire = (stand: Stand, userId: string) =>
  rewrite(stand.store, { subject: userId, issuer: ISSUER, resource: "" });
