/** `agentauth token`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const TOKEN_USAGE = `agentauth token <vault-id> [--json]      print a fresh access token on stdout (refreshed if due), for scripts`;

export const TOKEN_HELP: Record<string, string> = {
  "": `agentauth token <vault-id> [--json]

Prints the credential's access token on stdout, followed by a newline, and nothing else there. When the token
is expired or about to expire it is refreshed first (one refresh even when many processes ask at once; the rotated
refresh token is stored before the token is printed). The provider and the client registration (including a
confidential client's secret) come from the vault, so no other flag is needed. Messages go to stderr.

  --json    errors as {"error":{"code","message"}} on stderr (stdout stays empty, so a script that captures
            stdout can never mistake an error for a token)

Exit status:
  0  the token is on stdout
  1  failure: no such credential, or a vault or configuration problem (the message says which)
  2  usage error
  3  login required: the credential can no longer be refreshed; sign in again with 'agentauth login'
  4  temporary failure: the provider is unreachable, rate limiting or failing; try again later

Example: curl -H "Authorization: Bearer $(agentauth token Qm9iLWlk3x)" https://api.github.com/user
`,
};
