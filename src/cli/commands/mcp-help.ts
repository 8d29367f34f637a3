/** The usage and `--help` texts of `agentauth mcp`: what each command does, its flags, an example. */

export const MCP_USAGE = `agentauth mcp login <server-url> [--subject S] [--scope S] [--client-id ID [--client-secret-env VAR | --client-secret-file PATH]] [--device] [--json]
agentauth mcp status <server-url> [--subject S] [--json]
agentauth mcp logout <server-url> [--subject S] [--json]
agentauth mcp proxy <server-url> [--subject S] [--header 'Name: value']... [--client-id ID] [--transport MODE] [--device]
agentauth mcp example-server --issuer URL [--port N] [--scope S] [--step-up-scope S] [--issuer-wait S] [--json]
  Signs in to an OAuth-protected MCP server and keeps its tokens in the vault, shows and revokes them, lets any MCP
  client reach it through a local stdio proxy, and runs an example protected MCP server.`;

export const URL_RULE =
  "<server-url> is the MCP server's Streamable HTTP endpoint (https://, or http:// on loopback), e.g. https://mcp.example.com/mcp.";

export const MCP_HELP: Record<string, string> = {
  "": `${MCP_USAGE}

${URL_RULE} Run 'agentauth mcp <command> --help' for one command.
`,
  login: `agentauth mcp login <server-url> [options]

Signs in to an MCP server the way the MCP authorization spec says: an unauthenticated request gets the server's
401, whose WWW-Authenticate names its protected resource metadata (RFC 9728), which names the authorization server;
then a browser sign-in with PKCE S256 and the server's URL as the RFC 8707 resource, and the tokens are stored
encrypted in the vault (the one 'agentauth login' uses; PostgreSQL with --database-url). The authorization URL is
printed on stderr, nothing is opened for you: open it in a browser on this machine, since the sign-in comes back
to a port on 127.0.0.1 here. Over SSH, or with no browser, use --device. Without --client-id the client registers
itself with the authorization server (RFC 7591) once, and the registration is kept in the vault for the next
sign-in ('agentauth mcp logout' keeps it; 'agentauth vault delete <id>' forgets it). Finally the new token is shown
to the server once, to check that it is accepted, and the output names the subject a program passes to
agentAuthProvider to use it. Ctrl-C cancels (exit 130).

  --subject S     the vault subject to store the credential under (default, as 'agentauth login': the account's
                  id from the ID token when the server sends one, else "default")
  --scope S       the scopes to ask for (default: those the server's 401 or metadata names, plus offline_access
                  when the authorization server lists it)
  --client-id ID  a client registered beforehand at the authorization server
  --client-secret-env VAR, --client-secret-file PATH
                  its secret (a confidential client), from this environment variable or file: never on the
                  command line
  --device        the device flow (RFC 8628) instead of a browser: a URL and a code to enter on any device, for
                  machines without a browser (the authorization server must offer it)
  --json          the stored credential (never a token) as one JSON object on stdout; errors as JSON too
  --background    the sign-in 'mcp proxy' starts: prints nothing, publishes the URL (or code) to waiting proxies
                  through the vault, opens the browser itself ($BROWSER, else the system's) unless --no-browser,
                  and ends when the sign-in is done or times out (5 minutes); one at a time per server and subject

${URL_RULE}

  Example:
    agentauth mcp login http://127.0.0.1:8931/mcp`,
  status: `agentauth mcp status <server-url> [--subject S] [--json]

What the vault holds for the MCP server: signed in or not, issuer, subject, scopes, access-token expiry, whether a
refresh token is held (never a token). It reads the vault only: it contacts neither the MCP server nor the
authorization server, and needs no vault key, so an access token the server has revoked still shows as held.

  --subject S   only this vault subject's credential
  --json        {"server","signedIn","credentials":[{id,subject,issuer,clientId,scopes,expiresAt,expired,
                refreshToken,status,usable}]}; usable: a token can be had without a new sign-in

Exit status: 0 signed in, 3 not signed in (run 'agentauth mcp login <server-url>'), 1 failure, 2 usage error.

  Example:
    agentauth mcp status http://127.0.0.1:8931/mcp --json`,
  logout: `agentauth mcp logout <server-url> [--subject S] [--json]

Revokes the server's tokens at its authorization server (RFC 7009: the refresh token, then the access token) and
deletes them from the vault. Idempotent: signing out when not signed in does nothing and exits 0. An authorization
server without a revocation endpoint cannot be told: the tokens are only forgotten here, and the output says so.
When the authorization server cannot be reached the credential is kept: retry, or forget it with
'agentauth vault delete <id>'.

  --subject S   only this vault subject's credential
  --json        {"server","credentials":[{id,subject,issuer,revoked,deleted,note?}]}

  Example:
    agentauth mcp logout http://127.0.0.1:8931/mcp`,
  proxy: `agentauth mcp proxy <server-url> [options]

A local MCP server over stdio that any MCP client can start as a command: it forwards every message, both ways, to
the remote MCP server over Streamable HTTP (or the older HTTP+SSE transport) and signs in with agentauth. The sign-in
lives in the vault, keyed by the server's URL and the subject, shared by every proxy process, 'agentauth mcp login',
and programs: ten terminals and three editors on one server share one token and make one refresh at expiry. A
refused refresh token leads to one sign-in, run in the background (it outlives a client restarting the proxy);
meanwhile the client's request gets an error naming the URL to open (or run 'agentauth mcp login <server-url>').
Tokens never cross stdio. stdout is the MCP channel; logs go to stderr as JSON lines.

  --subject S                 whose sign-in (default "default", as 'agentauth mcp login')
  --header 'Name: value'      an extra header on every request, repeatable; \${VAR} in the value is read from the
                              environment (keep keys out of the client's configuration); an Authorization header
                              means the server takes your own credential, and no OAuth is done
  --client-id ID              a client registered beforehand at the authorization server
  --client-secret-env VAR     its secret, from this environment variable (never on the command line)
  --client-secret-file PATH   its secret, from this file
  --scope S                   the scopes to ask for at sign-in (default: what the server names)
  --device                    sign in with the device flow (RFC 8628), for machines without a browser
  --no-browser                do not open a browser: the URL is given to the client (its error) and logged on stderr
  --transport MODE            http-first (default), sse-first, http-only or sse-only
  --allow-http                accepted for mcp-remote users; plain http is allowed on loopback only, with or without it
  --sign-in-wait S            how long a request waits for a sign-in before the client is told what to do (default 15)

  Example (a client's configuration runs the command; --database-url or AGENTAUTH_DATABASE_URL for a shared vault):
    npx agentauth mcp proxy https://mcp.example.com/mcp --header 'X-Team: \${TEAM_ID}'`,
  "example-server": `agentauth mcp example-server --issuer URL [options]

An example MCP server (the official @modelcontextprotocol/server SDK over Streamable HTTP) protected by agentauth:
it serves its RFC 9728 metadata, answers 401 with a Bearer challenge, and accepts only tokens the --issuer issued
for its URL. Tools: whoami (the verified subject and scopes) and publish (needs --step-up-scope too: a client with
only the base scope gets 403 insufficient_scope and can step up). Prints one JSON line when ready,
{"event":"ready","url":"http://127.0.0.1:PORT/mcp","issuer":…,"scopes":[…],"stepUpScope":…}, and exits on SIGTERM
(0) or Ctrl-C (130). Needs the optional dependency: npm install @modelcontextprotocol/server. It says ready only
once the --issuer serves authorization server metadata (RFC 8414) with its keys: an issuer that does not answer,
or is not an authorization server, ends it with exit 1 (issuer_unreachable, issuer_not_authorization_server).

  --issuer URL          the authorization server (https, or http on loopback), e.g. 'agentauth idp serve'
  --port N              port on 127.0.0.1 (default 0: a free one)
  --scope S             scopes every call needs (default "read")
  --step-up-scope S     the extra scope the publish tool needs (default "write")
  --issuer-wait S       how long to wait for an issuer that refuses connections, e.g. one starting alongside
                        (default 30 seconds; 0 checks once)
  --json                errors as JSON on stdout too

  Example:
    agentauth idp serve --port 4444 &
    agentauth mcp example-server --issuer http://127.0.0.1:4444 --port 8931
    agentauth mcp login http://127.0.0.1:8931/mcp`,
};
