/**
 * Test support for the AHP client's provider tests: a real AHP host whose one agent needs `OCTO`, signed in at a
 * given authorization server, verifying GitHub's opaque tokens the way a GitHub-backed host would: it asks GitHub
 * who the token belongs to (`GET /user`), through the host's custom-verifier option (no host change needed).
 */

import { after } from "node:test";
import { createAhpHost } from "../../src/ahp/host/index.ts";
import { TokenVerificationError, type VerifiedToken } from "../../src/oauth/index.ts";
import type { GitHubSimulator } from "../sims/github.ts";

export const GITHUB = "https://github.com/login/oauth";
export const OCTO = "https://octo.example.test/";

/** A host whose one agent needs `OCTO`, signed in at `server`; tokens checked with GitHub's `GET /user`. */
export async function startOctoHost(server: string, sim?: GitHubSimulator): Promise<string> {
  const verifier = async (token: { reveal(): string }): Promise<VerifiedToken> => {
    if (!sim) throw new Error("this host verifies nothing");
    // REST "Get the authenticated user" (https://docs.github.com/rest/users/users): 401 for a dead token.
    const answer = await fetch(`${sim.url}/user`, {
      headers: { authorization: `Bearer ${token.reveal()}`, accept: "application/vnd.github+json" },
    });
    if (answer.status === 401) {
      throw new TokenVerificationError(
        "invalid_token",
        "GitHub does not know this token.",
        { status: 401, header: 'Bearer error="invalid_token"' },
        "invalid_token",
      );
    }
    const user = (await answer.json()) as { id: number };
    const scopes = answer.headers.get("x-oauth-scopes")?.split(/,\s*/).filter(Boolean) ?? [];
    return { subject: String(user.id), scopes, claims: {} };
  };
  const host = await createAhpHost({ verifier })
    .agent({
      provider: "octo",
      displayName: "Octo",
      resources: [
        {
          resource: OCTO,
          resourceName: "Octo API",
          authorizationServers: [server],
          scopesSupported: ["read:user"],
        },
      ],
    })
    .sessions()
    .command("octo/whoami", { requires: [OCTO] }, (_params, ctx) => ({
      subjects: ctx.authenticated.map((r) => r.subject),
    }))
    .listen({ port: 0 });
  after(() => host.close());
  return host.url;
}
