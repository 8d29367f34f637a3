/** `agentauth console`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const CONSOLE_USAGE = `agentauth console [--port N] [--json] [--connect-issuer URL --connect-client-id ID [--connect-scope S]]
  A local web page (127.0.0.1 only) over the credential vault: connected accounts, Disconnect (revoke, then
  delete), Connect, and what happened lately. Prints a one-time login link on stdout; Ctrl-C stops it.`;

const CONSOLE_FULL_HELP = `agentauth console [options]
  Serves the console on http://127.0.0.1:PORT/ over the vault in $AGENTAUTH_HOME. It prints a login link with a
  one-time token on stdout (for you, never logged): open it in your browser; the token works once and becomes a
  session cookie. To get a new link, stop the console and start it again. Ctrl-C stops it (exit 130).

  --port N                 port to listen on (default 0: a free one)
  --json                   print one JSON ready line {"event":"ready","url":…,"loginUrl":…} instead of text
  --connect-issuer URL     offer "Connect" to this authorization server (authorization code + PKCE)
  --connect-client-id ID   its public client, which must allow http://127.0.0.1/connect/callback on any port
  --connect-scope S        the scope asked for (default "openid profile email offline_access")

  Example:
    agentauth console --port 4480 --connect-issuer http://127.0.0.1:4444 --connect-client-id agentauth-console`;

export const CONSOLE_HELP: Record<string, string> = { "": CONSOLE_FULL_HELP };
