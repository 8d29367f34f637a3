/** `agentauth providers`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const PROVIDERS_USAGE = `agentauth providers [--json]            the provider presets: flows, what to register, refresh, revocation`;

export const PROVIDERS_HELP: Record<string, string> = {
  "": `agentauth providers [--json]

Lists the provider presets 'agentauth login --provider NAME' accepts: the flows each runs, what to register at the
provider (and the redirect URI for the browser flow), whether a self-hosted server works (--provider-host), how
refresh and revocation behave, and the provider's documentation.

  --json    one JSON array of {name, displayName, summary, flows, register, redirectUri, selfHosted, refresh,
            revocation, docs}

Example: agentauth providers --json
`,
};
