/**
 * The example host behind `agentauth ahp host serve --example`: two agents needing different resources on one
 * authorization server, the official session commands gated by each agent's resource, a gated `whoami` (any
 * resource) and one gated command per agent.
 */

import type { Logger } from "../../core/log.ts";
import type { AuthenticatedResource } from "./context.ts";
import { type AhpHost, createAhpHost } from "./host.ts";
import type { ListenOptions, RunningAhpHost } from "./server.ts";

export const EXAMPLE_ALPHA = "https://alpha.example.test/";
export const EXAMPLE_BETA = "https://beta.example.test/";

export interface ExampleHostOptions {
  issuer: string;
  logger?: Logger;
}

export function createExampleHost(options: ExampleHostOptions): AhpHost {
  return (
    createAhpHost({
      logger: options.logger,
      serverInfo: { name: "agentauth-example-host", version: "0.1.0" },
    })
      .agent({
        provider: "alpha",
        displayName: "Alpha",
        description: "Example agent reading from the Alpha API",
        resources: [
          {
            resource: EXAMPLE_ALPHA,
            resourceName: "Alpha API",
            authorizationServers: [options.issuer],
            scopesSupported: ["read", "write"],
          },
        ],
      })
      .agent({
        provider: "beta",
        displayName: "Beta",
        description: "Example agent writing to the Beta API",
        resources: [
          {
            resource: EXAMPLE_BETA,
            resourceName: "Beta API",
            authorizationServers: [options.issuer],
            scopesSupported: ["read", "write"],
          },
        ],
      })
      // The official session commands, gated by each agent's resources: where an official client meets -32007.
      .sessions()
      .command("whoami", { requires: "any" }, (_params, ctx) => ({
        resources: ctx.authenticated.map(describe),
      }))
      .command("alpha/read", { requires: [EXAMPLE_ALPHA], scopes: ["read"] }, () => ({
        agent: "alpha",
        read: true,
      }))
      .command("beta/write", { requires: [EXAMPLE_BETA], scopes: ["write"] }, () => ({
        agent: "beta",
        written: true,
      }))
  );
}

export function startExampleHost(
  options: ExampleHostOptions & ListenOptions,
): Promise<RunningAhpHost> {
  const { issuer, logger, ...listen } = options;
  return createExampleHost({ issuer, logger }).listen(listen);
}

/** What `whoami` tells: resources, subjects and scopes, the remaining lifetime; never a token. */
function describe(r: AuthenticatedResource) {
  return {
    resource: r.resource,
    schemeId: r.schemeId,
    ...(r.subject ? { subject: r.subject } : {}),
    scopes: r.scopes,
    ...(r.expiresAt !== undefined
      ? { expiresIn: Math.max(0, Math.round((r.expiresAt - Date.now()) / 1000)) }
      : {}),
  };
}
