/** `agentauth idp serve`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const IDP_USAGE = `agentauth idp serve [--port N] [--auto-approve-as USER] [--access-token-ttl SECONDS] [--device-interval SECONDS] [--client-metadata-documents] [--client-metadata-loopback]
  Runs the embedded OAuth/OIDC authorization server on 127.0.0.1. Prints one JSON ready line on stdout,
  logs on stderr, exits on SIGTERM. --auto-approve-as signs in and consents as a demo user (alice, bob,
  carol) on every authorization or device page: for tests and unattended demos only.`;

const SERVE_HELP = `agentauth idp serve [options]
  Runs the embedded OAuth 2.0 / OpenID Connect authorization server (oidc-provider) on 127.0.0.1, with demo users
  alice, bob and carol (password = name; its login page lists them: a demo server). Prints one JSON ready line on stdout,
  {"event":"ready","issuer":"http://127.0.0.1:PORT"}, logs JSON lines on stderr, and exits on SIGTERM (0) or
  Ctrl-C (130).

  --port N                     port to listen on (default 0: a free one)
  --auto-approve-as USER       sign in and consent as USER (alice, bob, carol) on every page: tests and demos only
  --access-token-ttl SECONDS   access token lifetime, 1 to 86400 (default the server's)
  --device-interval SECONDS    the device flow's polling interval, 1 to 60 (default the server's)
  --client-metadata-documents  accept client_id URLs (Client ID Metadata Documents, as MCP clients use them) and
                               advertise client_id_metadata_document_supported; https documents on public hosts only
  --client-metadata-loopback   with --client-metadata-documents, also http://127.0.0.1 documents: tests and demos only

  Clients: the public client agentauth-cli (PKCE, redirects to http://127.0.0.1/callback on any port, device flow),
  and RFC 7591 dynamic registration at /reg. An authorization request without a scope gets "read" when it names a
  resource (RFC 8707), else "openid" (RFC 6749 §3.3).

  Example:
    agentauth idp serve --port 4444 --auto-approve-as alice`;

export const IDP_HELP: Record<string, string> = { "": IDP_USAGE, serve: SERVE_HELP };
