/**
 * The protected resources agents register, aggregated by the host, and their two wire faces: RFC 9728 metadata in
 * snake_case for official root state, `authSchemes[]` for the seed's `resourceMetadata`. Pure.
 */

import type { AgentInfo, AuthScheme, ProtectedResourceMetadata, RootState } from "../wire.ts";

/** One resource an agent needs, as the host author declares it. */
export interface ProtectedResourceSpec {
  /** RFC 9728 / RFC 8707 resource identifier: also the audience tokens must carry (JWT `aud`). */
  resource: string;
  /** RFC 9728 `resource_name`; the seed's `label`. */
  resourceName?: string;
  /** RFC 8414 issuer identifiers. The default JWT verifier trusts the first one. */
  authorizationServers: string[];
  scopesSupported?: string[];
  /** Scopes every accepted token must carry (`insufficient_scope` otherwise). */
  requiredScopes?: string[];
  /** AHP `required` (absent = true). */
  required?: boolean;
  /** The seed's scheme id; default the registering agent's provider (suffixed when it registers several). */
  schemeId?: string;
}

export interface AgentSpec {
  provider: string;
  displayName: string;
  description?: string;
  resources: ProtectedResourceSpec[];
}

/** A registered resource with its resolved scheme id. */
export interface RegisteredResource extends ProtectedResourceSpec {
  schemeId: string;
}

export class ResourceRegistry {
  readonly #agents: AgentSpec[] = [];
  readonly #byResource = new Map<string, RegisteredResource>();
  readonly #bySchemeId = new Map<string, RegisteredResource>();

  /** Registers an agent; a resource another agent already registered is shared (first declaration wins). */
  addAgent(agent: AgentSpec): RegisteredResource[] {
    if (this.#agents.some((a) => a.provider === agent.provider)) {
      throw new Error(`agent '${agent.provider}' is already registered`);
    }
    const added: RegisteredResource[] = [];
    agent.resources.forEach((spec, index) => {
      assertAbsoluteUri(spec.resource);
      if (this.#byResource.has(spec.resource)) return;
      const schemeId =
        spec.schemeId ??
        (agent.resources.length === 1 ? agent.provider : `${agent.provider}-${index + 1}`);
      if (this.#bySchemeId.has(schemeId))
        throw new Error(`scheme id '${schemeId}' is already in use`);
      const registered = { ...spec, schemeId };
      this.#byResource.set(spec.resource, registered);
      this.#bySchemeId.set(schemeId, registered);
      added.push(registered);
    });
    this.#agents.push(agent);
    return added;
  }

  byResource(resource: string): RegisteredResource | undefined {
    return this.#byResource.get(resource);
  }

  bySchemeId(schemeId: string): RegisteredResource | undefined {
    return this.#bySchemeId.get(schemeId);
  }

  agent(provider: string): AgentSpec | undefined {
    return this.#agents.find((a) => a.provider === provider);
  }

  providers(): string[] {
    return this.#agents.map((a) => a.provider);
  }

  /** The resources an agent needs before its sessions may be used (`required` absent or true). */
  requiredResourcesOf(provider: string): readonly string[] | undefined {
    return this.agent(provider)
      ?.resources.filter((r) => r.required !== false)
      .map((r) => r.resource);
  }

  all(): RegisteredResource[] {
    return [...this.#byResource.values()];
  }

  /** official root state: each agent with its own `protectedResources` (clients read auth requirements here). */
  rootState(): RootState {
    return {
      agents: this.#agents.map(
        (agent): AgentInfo => ({
          provider: agent.provider,
          displayName: agent.displayName,
          description: agent.description ?? agent.displayName,
          models: [],
          protectedResources: agent.resources.map((spec) =>
            toProtectedResourceMetadata(
              this.#byResource.get(spec.resource) ?? { ...spec, schemeId: "" },
            ),
          ),
        }),
      ),
    };
  }

  /** The seed's aggregated `authSchemes[]`. */
  authSchemes(): AuthScheme[] {
    return this.all().map(toAuthScheme);
  }
}

export function toProtectedResourceMetadata(r: ProtectedResourceSpec): ProtectedResourceMetadata {
  return {
    resource: r.resource,
    ...(r.resourceName ? { resource_name: r.resourceName } : {}),
    authorization_servers: [...r.authorizationServers],
    ...(r.scopesSupported ? { scopes_supported: [...r.scopesSupported] } : {}),
    required: r.required ?? true,
  };
}

export function toAuthScheme(r: RegisteredResource): AuthScheme {
  return {
    scheme: "bearer",
    id: r.schemeId,
    label: r.resourceName ?? r.resource,
    resource: r.resource,
    authorizationServers: [...r.authorizationServers],
    ...(r.scopesSupported ? { scopesSupported: [...r.scopesSupported] } : {}),
    required: r.required ?? true,
  };
}

function assertAbsoluteUri(resource: string): void {
  const url = URL.parse(resource);
  if (!url || url.hash)
    throw new Error(`resource '${resource}' must be an absolute URI without a fragment`);
}
