/** `agentauth console`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const CONSOLE_USAGE = `agentauth console [--port N] [--json] [--connect-issuer URL --connect-client-id ID [--connect-scope S]]
  A local web page (127.0.0.1 only) over the credential vault: connected accounts, Disconnect (revoke, then
  delete), Connect, and what happened lately. Prints a one-time login link on stdout; Ctrl-C stops it.
agentauth console --link [--json]
  A fresh one-time link to the console already running over this vault (or the demo's), without restarting it.`;

const CONSOLE_FULL_HELP = `agentauth console [options]
  Serves the console on http://127.0.0.1:PORT/ over the vault in $AGENTAUTH_HOME. It prints a login link with a
  one-time token on stdout (for you, never logged): open it in your browser; the token works once and becomes a
  session cookie. Lost the tab, or the link was opened elsewhere first (a link preview, another browser)? Run
  \`agentauth console --link\` for a fresh one. Ctrl-C stops it (exit 130). Its log goes to stderr: warnings in
  words, or JSON lines with --json.

  --link                   do not start a console: print a fresh one-time link (valid 10 minutes) to the one
                           running over $AGENTAUTH_HOME (or the demo's, $AGENTAUTH_HOME/demo), and exit
  --port N                 port to listen on (default 0: a free one)
  --json                   print one JSON ready line {"event":"ready","url":…,"loginUrl":…} instead of text
                           (with --link: {"url":…,"loginUrl":…})
  --connect-issuer URL     offer "Connect" to this authorization server (authorization code + PKCE)
  --connect-client-id ID   its public client, which must allow http://127.0.0.1/connect/callback on any port
  --connect-scope S        the scope asked for (default "openid profile email offline_access")

  Examples:
    agentauth console --port 4480 --connect-issuer http://127.0.0.1:4444 --connect-client-id agentauth-console
    agentauth console --link
    AGENTAUTH_HOME=~/.local/share/agentauth/demo agentauth console --link      # the demo's console`;

export const CONSOLE_HELP: Record<string, string> = { "": CONSOLE_FULL_HELP };
