/** `agentauth acp <sub> --help`: one full usage per subcommand (the CLI help contract), keyed by the words after `acp`. */

export const ACP_USAGE = `agentauth acp status [--json] [--protocol 1|2] -- <agent command…>
  Starts the agent, asks for its sign-in state, lists its auth methods.
agentauth acp login [--method ID] [--force] [--yes] [--force-terminal] [--timeout S]
                    [--api-key-env VAR | --api-key-stdin] [--json] [--protocol 1|2] -- <agent command…>
  Signs in to the agent with the method given, or the best one it offers.
agentauth acp logout [--json] [--protocol 1|2] -- <agent command…>
  Signs out, when the agent supports logout.
agentauth acp example-agent [--issuer URL] [--session-policy require-auth|terminate|keep]
  The reference echo agent (ACP v1 and v2 on stdio). Run 'agentauth acp <command> --help' for details.`;

export const ACP_HELP: Record<string, string> = {
  "": `agentauth acp: sign in to any ACP agent launched over stdio

Usage:
  agentauth acp status  [options] -- <agent command…>   the agent's sign-in state and auth methods
  agentauth acp login   [options] -- <agent command…>   sign in with the agent's best (or a chosen) method
  agentauth acp logout  [options] -- <agent command…>   sign out, when the agent supports logout
  agentauth acp example-agent [options]                 the reference echo agent on stdio

Everything after -- is the agent's command line. Run 'agentauth acp <command> --help' for each command's flags.
Ctrl-C (or SIGTERM) stops the agent and everything it started, and exits 130.
`,
  status: `Usage: agentauth acp status [--json] [--protocol 1|2] -- <agent command…>

Starts the agent, asks for its sign-in state (auth/status, else getAuthState, else the state it pushes) and lists
its auth methods. An agent that advertises _meta.authStatus is given up to 2 s to push its state.

  --json          one JSON object: protocolVersion, agent, authMethods, capabilities, state, accounts, source
  --protocol 1|2  ACP v1 (default) or the v2 draft

Example:
  agentauth acp status -- npx @zed-industries/codex-acp
`,
  login: `Usage: agentauth acp login [options] -- <agent command…>

Signs in with --method, or the best method the agent offers: one whose variables are set (or that takes the key
given), else an agent method (the agent shows a URL, printed here), a terminal login (run in this terminal), or a
legacy env_var method. A key method whose variables are unset is refused before anything is sent. Reports only
what the agent confirms: "Logged in" when it says authenticated; "a session opened" when a key login was confirmed
by opening a session; "accepted … does not report its state" when it cannot say; and where the key now lives.

  --method ID         the auth method to use (see 'agentauth acp status')
  --force             sign in even when the agent is signed in already (without --method, agentauth
                      chooses the method only for an agent known to be signed out: one that reports no
                      state is asked for a session first)
  --api-key-env VAR   read the API key from environment variable VAR; it goes where the agent reads it
                      (gemini-cli: _meta["api-key"]; codex-acp: CODEX_API_KEY or OPENAI_API_KEY; qwen-code:
                      OPENAI_API_KEY; a legacy env_var method: its variable)
  --api-key-stdin     read the API key from the first line of stdin
                      (never on the command line; on a terminal it is asked for without echo)
  --force-terminal    run a terminal login although stdin is not a terminal
  --yes               run a command the agent names itself (legacy _meta["terminal-auth"]), or a terminal
                      login with environment variables the agent chose, without asking; the command line
                      (with its variables) is always printed first
  --timeout S         give up on the login after S seconds (default 600); a login that shows no link gets a
                      word on what to do instead after 15 s (or half of S)
  --json              one JSON object with outcome (signed_in, session_opened, accepted_unverified,
                      still_signed_out, already_signed_in), method, state, accounts, source, note
  --protocol 1|2      ACP v1 (default) or the v2 draft

Exit: 0 signed in (or accepted, or already signed in), 1 failed, 2 usage, 130 cancelled.

Examples:
  agentauth acp login -- npx @agentclientprotocol/claude-agent-acp
  MY_KEY=… agentauth acp login --method api-key --api-key-env MY_KEY -- agentauth acp example-agent
`,
  logout: `Usage: agentauth acp logout [--json] [--protocol 1|2] -- <agent command…>

Signs out, only when the agent advertises logout (ACP forbids calling it otherwise), then prints the state.

  --json          the state afterwards as one JSON object (as 'status --json')
  --protocol 1|2  ACP v1 (default) or the v2 draft

Example:
  agentauth acp logout -- agentauth acp example-agent
`,
  "example-agent": `Usage: agentauth acp example-agent [--issuer URL] [--session-policy require-auth|terminate|keep] [--login]

The reference echo agent: ACP v1 and v2 on stdio (stdout carries only ACP), whose sessions require sign-in at the
issuer. Its auth methods: oauth (browser or device), api-key (a key starting "echo-"), terminal-login (--login).
It signs in as its own OAuth client (agentauth-example-agent) and keeps its credentials apart from
'agentauth login' (vault subject acp-agent:agentauth-example-agent), so its logout removes only its own.

Environment:
  AGENTAUTH_EXAMPLE_API_KEY, then ACPX_AUTH_API_KEY   the api-key method's key, used by authenticate without _meta
  AGENTAUTH_EXAMPLE_TOKEN                             an access token that counts as signed in

  --issuer URL        the authorization server (default $AGENTAUTH_ISSUER or http://127.0.0.1:4444)
  --session-policy P  what a session does when the sign-in ends: require-auth (default), terminate, keep
  --login             run the terminal login instead of serving ACP

Example:
  agentauth acp status -- agentauth acp example-agent --issuer http://127.0.0.1:4444
`,
};
