/**
 * OAuth providers as data: one preset per provider (endpoints, flows, scopes, account, revocation, refresh
 * behaviour, wire quirks, each citing the provider's documentation), and the catalog that lists them, rebuilds a
 * stored credential's provider (`resolveProvider`, the engine's `ProviderResolver`) and recognises
 * authorization-server identifiers (`presetForIssuer`).
 */

import type { OAuthClient, Provider, ProviderRef } from "../oauth/index.ts";
import { atlassianPreset } from "./atlassian.ts";
import type { PresetEntry } from "./catalog.ts";
import { ProviderConfigError } from "./errors.ts";
import { genericPreset } from "./generic.ts";
import { githubPreset } from "./github.ts";
import { gitlabPreset } from "./gitlab.ts";
import { googlePreset } from "./google.ts";
import { linearPreset } from "./linear.ts";
import { microsoftPreset } from "./microsoft.ts";
import { notionPreset } from "./notion.ts";
import { slackPreset } from "./slack.ts";

export { apiRequest } from "./api.ts";
export { type AtlassianOptions, atlassian } from "./atlassian.ts";
export type { PresetEntry } from "./catalog.ts";
export { type PresetOptions, presetClient, type StaticServerSpec, staticServer } from "./define.ts";
export { ProviderApiError, ProviderConfigError } from "./errors.ts";
export { type GenericEndpoints, type GenericOptions, generic } from "./generic.ts";
export { type GitHubOptions, github } from "./github.ts";
export { type GitLabOptions, gitlab } from "./gitlab.ts";
export { type GoogleOptions, google } from "./google.ts";
export { type LinearOptions, linear } from "./linear.ts";
export { type MicrosoftOptions, microsoft } from "./microsoft.ts";
export { type NotionOptions, notion } from "./notion.ts";
export { type OriginMap, rebase } from "./origins.ts";
export { type SlackOptions, slack } from "./slack.ts";

/** Every preset, in the order `agentauth providers` lists them. */
export const PRESETS: readonly PresetEntry[] = [
  githubPreset,
  slackPreset,
  googlePreset,
  microsoftPreset,
  gitlabPreset,
  atlassianPreset,
  linearPreset,
  notionPreset,
  genericPreset,
];

/** Each preset's name → its display name ("github" → "GitHub"), for pages that show providers by name. */
export function presetNames(): Record<string, string> {
  return Object.fromEntries(PRESETS.map((preset) => [preset.name, preset.displayName]));
}

export function presetNamed(name: string): PresetEntry | undefined {
  return PRESETS.find((preset) => preset.name === name);
}

/** The engine's `ProviderResolver`: rebuilds the provider a credential names, with its client registration. */
export function resolveProvider(ref: ProviderRef, client: OAuthClient): Provider {
  const preset = presetNamed(ref.name);
  if (!preset) {
    throw new ProviderConfigError(
      "provider_unknown",
      `The provider ${JSON.stringify(ref.name)} is not one this agentauth knows (${PRESETS.map((p) => p.name).join(", ")}). Upgrade agentauth, or sign in again.`,
    );
  }
  return preset.fromRef(ref, client);
}

/**
 * The preset an authorization-server identifier belongs to (`https://github.com/login/oauth` → github;
 * `https://login.microsoftonline.com/{tenant}/v2.0` → microsoft with that tenant), or undefined.
 */
export function presetForIssuer(
  issuer: string,
): { preset: PresetEntry; options: Record<string, string> } | undefined {
  const url = URL.parse(issuer);
  if (!url) return undefined;
  for (const preset of PRESETS) {
    const options = preset.matchIssuer?.(url);
    if (options) return { preset, options };
  }
  return undefined;
}
