/** `agentauth ahp`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const AHP_HOST_USAGE = `agentauth ahp host serve --example --issuer URL [--port N]
  Runs the example AHP host on ws://127.0.0.1: two agents (alpha, beta) needing https://alpha.example.test/ and
  https://beta.example.test/ tokens from the authorization server at --issuer, the official session commands gated
  by each agent's resource, and a gated 'whoami'. Speaks official AHP (0.9.x and 1.x) and the seed's dialect.
  Prints one JSON ready line on stdout, logs on stderr, exits on SIGTERM.`;

export const AHP_CLIENT_USAGE = `agentauth ahp status [--json] [--protocol auto|official|seed] [--subject S] <ws-url>
  Connects to an AHP host and lists the resources it protects, and for each whether this machine's vault can
  authenticate it now (ready: a valid or refreshable token) or a sign-in is needed.
agentauth ahp login [--resource R]… [--stay] [--json] [--client-id ID] [--provider-client-id PRESET=ID]…
                   [--subject S] [--protocol …] <ws-url>
  Authenticates to the host for each resource (default: all it advertises): a stored credential, refreshed
  when due, else one device login per authorization server covering all its resources (URL and code on stderr). With
  --stay, keeps the connection and renews each token before it expires until Ctrl-C (one line per renewal).
  A server a provider preset serves (https://github.com/login/oauth → github) signs in with that preset's client:
  --provider-client-id github=Iv1.xxxx, or $AGENTAUTH_GITHUB_CLIENT_ID; a secret only from
  $AGENTAUTH_GITHUB_CLIENT_SECRET; GitHub Enterprise from $AGENTAUTH_GITHUB_HOST (likewise for every preset).`;

export const AHP_USAGE = `${AHP_CLIENT_USAGE}\n${AHP_HOST_USAGE}`;

/** Per-subcommand usage (the CLI help contract): `agentauth ahp <sub…> --help`. */
export const AHP_HELP: Record<string, string> = {
  "": `agentauth ahp status|login|host serve … : the Agent Host Protocol (official AHP 0.9/1.x and the seed's dialect)

  status       what a host protects and whether this machine's vault can authenticate each resource
  login        sign in (one device sign-in per authorization server) and authenticate to a host
  host serve   run the example AHP host

Run 'agentauth ahp <command> --help' for one command's flags.
Example: agentauth ahp status ws://127.0.0.1:7000`,
  status: `agentauth ahp status [--json] [--protocol auto|official|seed] [--subject S] <ws-url>

Connects to an AHP host, reads the resources its agents protect (root state, or the seed's resourceMetadata) and
says for each whether the vault can authenticate it now ("ready": a valid or refreshable token) or a sign-in is
needed. Reads only: sends no token. Host-supplied names and URLs are printed sanitised.

  --json             one JSON object: url, dialect, protocolVersion, resources[] (with ready, credential, never a token)
  --protocol P       auto (default: official first, then the seed), official, or seed ('1.x' still accepted)
  --subject S        use the vault credentials of this subject

Example: agentauth ahp status --json ws://127.0.0.1:7000`,
  login: `agentauth ahp login [--resource R]… [--stay] [--json] [--client-id ID] [--subject S] [--protocol P] <ws-url>

Authenticates to the host for each resource (default: every one it advertises): a stored credential, refreshed
when due, else a device sign-in at the resource's authorization server, one per server: its grant covers every
resource of the host on that server (RFC 8707). The verification URL and code go to stderr.

  --resource R       only this resource (repeatable); the host's RFC 9728 resource, or the seed's scheme id
  --stay             keep the connection and renew each token before it expires until Ctrl-C; says so on
                     stderr, then one line per renewal on stdout (JSON with --json)
  --json             one JSON line per authenticated resource on stdout
  --client-id ID     the OAuth client to sign in with (default agentauth-cli; secret from AGENTAUTH_CLIENT_SECRET)
  --subject S        use and store vault credentials under this subject
  --protocol P       auto (default), official, or seed

Example: agentauth ahp login --resource https://alpha.example.test/ ws://127.0.0.1:7000`,
  "host serve": `agentauth ahp host serve --example --issuer URL [--port N]

Runs the example AHP host on ws://127.0.0.1: agents alpha and beta needing https://alpha.example.test/ and
https://beta.example.test/ tokens from the authorization server at --issuer; the official session commands
(createSession, listSessions, disposeSession, reconnect) gated by each agent's resource, and a gated 'whoami'.
Accepts official AHP clients on the 1.0.0 and 0.9.0 baselines and the seed's dialect. Prints one JSON ready line
on stdout ({"event":"ready","url":…}), logs on stderr, exits on SIGTERM or Ctrl-C.

  --example          required: serve the example host
  --issuer URL       the authorization server that issues the agents' tokens
  --port N           port on 127.0.0.1 (default 0: a free one)

Example: agentauth ahp host serve --example --issuer http://127.0.0.1:4444`,
};
