/**
 * One device sign-in for a host's resource, by provider preset or by discovery. A preset (GitHub, Microsoft, ...)
 * signs in for that resource alone, with the preset's default scope plus the resource's `scopes_supported`: its
 * tokens are not audience-bound (RFC 8707 is not in the providers' docs), so there is no grant to mint sibling
 * tokens from, and each host resource gets the person's explicit approval. The host's `scopes_supported` are added
 * as advertised (review #9, decided: documented, not allow-listed): a resource names the scopes it needs (RFC 9728
 * §2), the provider's consent page shows every one of them to the person, and an operator who wants a fixed list
 * sets `providers.<preset>.scope`, which replaces the sum. A discoverable server keeps the one
 * sign-in per server (every resource named, RFC 8707 §2) with OIDC scopes. A server that is neither fails with
 * `ahp_server_unknown`, naming what to configure.
 */

import {
  DiscoveryError,
  type DiscoveryOptions,
  login,
  type OAuthClient,
} from "../../oauth/index.ts";
import { PRESETS } from "../../providers/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { DeviceLoginPolicy } from "./credentials.ts";
import { AhpServerConfigError, clip } from "./errors.ts";
import type { AhpResource } from "./resources.ts";
import { envName, type ServerChoice } from "./server-provider.ts";

/** OIDC scopes for the account and a refresh token, plus whatever the resource advertises. */
const BASE_SCOPES = ["openid", "profile", "email", "offline_access"];

export interface SignInRequest {
  resource: AhpResource;
  /** Other resources of the host on the same (discoverable) server, covered by the same grant. */
  others: readonly AhpResource[];
  choice: ServerChoice;
  policy: DeviceLoginPolicy;
  store: CredentialStore;
  subject?: string;
  discovery?: DiscoveryOptions;
}

export async function signIn(request: SignInRequest): Promise<CredentialRecord> {
  const { resource, choice, policy } = request;
  const common = {
    flow: "device" as const,
    store: request.store,
    resource: resource.resource,
    subject: request.subject,
    onPoll: policy.onPoll,
    signal: policy.signal,
    discovery: request.discovery,
  };
  if (choice.kind === "provider") {
    const { provider } = choice;
    if (!provider.flows.includes("device")) {
      throw new AhpServerConfigError(
        "ahp_provider_flow_unsupported",
        `${clip(resource.label)} signs in with ${provider.displayName}, which has no device flow, and the AHP client ` +
          "signs in only by device flow. Sign in elsewhere and give the host a token, or use a host whose resource " +
          "names a server with a device flow.",
      );
    }
    const scopes = new Set(
      [...(provider.defaultScope?.split(" ") ?? []), ...resource.scopes].filter(Boolean),
    );
    return login({
      ...common,
      provider,
      // RFC 6749 §3.2: a server ignores parameters it does not know, so naming the resource (the vault key) is safe.
      scope: choice.scope ?? ([...scopes].join(" ") || undefined),
      onDevicePrompt: (prompt) => policy.onDevicePrompt(prompt, resource, [resource]),
    });
  }
  const scopes = new Set([
    ...BASE_SCOPES,
    ...resource.scopes,
    ...request.others.flatMap((r) => r.scopes),
  ]);
  // An MCP server's pre-registered client, when the host named one (AHP `McpOAuthClient`: clients MUST use it).
  const client: OAuthClient = resource.oauthClientId
    ? { clientId: resource.oauthClientId }
    : (policy.client ?? { clientId: "agentauth-cli" });
  try {
    return await login({
      ...common,
      issuer: choice.issuer,
      client,
      scope: [...scopes].join(" "),
      alsoResources: request.others.map((r) => r.resource),
      onDevicePrompt: (prompt) =>
        policy.onDevicePrompt(prompt, resource, [resource, ...request.others]),
    });
  } catch (error) {
    if (
      error instanceof DiscoveryError &&
      (error.code === "metadata_not_found" || error.code === "metadata_invalid")
    ) {
      throw unknownServer(choice.issuer, resource, error);
    }
    throw error;
  }
}

/** Neither a preset nor discoverable: say which settings would make it one. */
function unknownServer(server: string, resource: AhpResource, cause: Error): AhpServerConfigError {
  // Presets with a `host` option (a self-hosted server); `generic` takes an issuer and endpoints instead.
  const hosted = PRESETS.filter((p) => p.selfHosted && p.name !== "generic")
    .map((p) => `${p.displayName}: ${envName(p.name, "HOST")} and ${envName(p.name, "CLIENT_ID")}`)
    .join("; ");
  const where = clip(server);
  return new AhpServerConfigError(
    "ahp_server_unknown",
    `${clip(resource.label)} signs in at ${where}, which is not a provider agentauth knows ` +
      `(${PRESETS.map((p) => p.name).join(", ")}) and publishes no OAuth metadata (RFC 8414 / OpenID discovery). ` +
      `If it is a self-hosted provider, set its host and client id (${hosted || "none supported"}). Otherwise ` +
      `describe it by hand: authorizationServers: { "${where}": generic({ issuer: "${where}", endpoints, clientId }) } ` +
      "in connectAhpHost's options.",
    { cause },
  );
}
