/** `agentauth rap`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

import { DEFAULT_INVOCATION_SECRET_FILE } from "../../rap/invocation-auth.ts";
import { DB_FILE, KEY_FILE } from "../../rap/runtime/api.ts";

export const INSPECT_HELP = `agentauth rap inspect <tool base URL> [--json] [--tool-auth MODE] [--tool-secret-file PATH]
  Fetches {base}/.well-known/rap-toolset, validates it as the runtime does (the whole toolset or nothing) and
  lists each operation with the auth provider it requires. Creates and stores nothing.

  --json                   print the validated toolset document as JSON
  --tool-auth MODE         hmac, bearer or none. Default: hmac when $AGENTAUTH_HOME/rap-invocation.secret exists
                           (for a tool that also guards its toolset document), else none
  --tool-secret-file PATH  the shared secret file to authenticate with

  Exits 1 with one sentence when the toolset cannot be fetched or is invalid, 2 on a usage error.

  Example:
    agentauth rap inspect http://127.0.0.1:8700`;

export const RUNTIME_SERVE_HELP = `agentauth rap runtime serve --toolset URL [--toolset URL…] [options]
  A RAP runtime on 127.0.0.1: the callback receiver (signed per-call URLs) and a JSON control API to invoke tools
  as the model would (GET /tools, POST /calls, GET /threads/<group_id>; Bearer token from controlTokenFile).
  Every request to a tool is authenticated with the shared invocation secret (HMAC by default).

  --toolset URL            a tool server's base URL (serves /.well-known/rap-toolset); repeat for several.
                           Every toolset must load, or the command exits 1.
  --port N                 listen on port N (0: a free one). Default: the port kept from the last start, so
                           callback URLs already given to tools keep working; the first start picks a free one
  --public-url URL         the base URL tools reach this runtime at (behind a proxy); kept like the port
  --tool-auth MODE         how the runtime authenticates to every toolset: hmac (default), bearer or none
  --tool-secret-file PATH  the shared secret file (default $AGENTAUTH_HOME/${DEFAULT_INVOCATION_SECRET_FILE}, created
                           0600 if missing): the file 'rap tool serve' uses
  --tool-auth-origin ORIGIN  also send the credentials to invocation endpoints on ORIGIN (https://host[:port]);
                           by default they go only to each --toolset's own origin. Repeat for several
  --db PATH                the runtime's SQLite database (default $AGENTAUTH_HOME/${DB_FILE}); the kept port and
                           public URL live beside it (rap-runtime.json)
  --key-file PATH          the key that signs callback URLs (default ${KEY_FILE} beside the SQLite database, or in
                           $AGENTAUTH_HOME with PostgreSQL; created 0600 if missing)
  With AGENTAUTH_DATABASE_URL=postgres://… set, calls live in that PostgreSQL database instead of SQLite, and
  several instances (behind one --public-url) share them: each callback is applied once, in order per thread,
  whichever instance receives it. Every instance needs the same --key-file; one with another key refuses to start.
  --call-timeout SECONDS   how long a call waits for its result, OAuth detour included (default 900)

  Prints one JSON line when ready: {"event":"ready","url":…,"store":"sqlite"|"postgres","controlTokenFile":…,
  "tools":[…]}.
  Exits 1 with one sentence when it cannot start (a toolset unreachable or refusing the credentials, the port
  taken), 2 on a usage error.

  Example:
    agentauth rap runtime serve --toolset http://127.0.0.1:8700`;

export const RAP_USAGE = `agentauth rap tool serve --example --issuer URL [--port N] [--client-id ID] [--invocation-auth hmac|bearer|none] [--invocation-secret-file PATH]
  The example RAP tool (echo; whoami needs OAuth at the issuer and calls a protected API). Tokens go to the vault.
agentauth rap runtime serve --toolset URL [--toolset URL…] [--port N] [--public-url URL] [--tool-auth hmac|bearer|none] [--tool-secret-file PATH] [--db PATH] [--call-timeout S]
  A RAP runtime: callback receiver (signed per-call URLs) and a small JSON API to invoke tools as the model would.
agentauth rap inspect <tool base URL> [--json] [--tool-auth hmac|bearer|none] [--tool-secret-file PATH]
  The toolset, and which operations require which auth provider.`;

/** Full usage per subcommand (the CLI help contract). */
export const RAP_HELP: Record<string, string> = {
  "": RAP_USAGE,
  "tool serve": `agentauth rap tool serve --example --issuer URL [options]
  Serves the example RAP tool (echo; whoami needs OAuth at the issuer and calls a protected API) on loopback.
  The runtime must authenticate every POST /invoke, /close_thread and /cancel_tool_call (HMAC by default).

  --example                      serve the built-in example tool (required: the only built-in tool)
  --issuer URL                   the OAuth authorization server whoami signs in at (http only on loopback)
  --port N                       port to listen on (default: a free one)
  --client-id ID                 a registered client id (default: register one dynamically, RFC 7591)
  --invocation-auth MODE         hmac (default: signed requests, replay window 300 s), bearer (shared secret
                                 sent as a bearer token) or none (no authentication; prints a warning)
  --invocation-secret-file PATH  the shared secret file (default $AGENTAUTH_HOME/${DEFAULT_INVOCATION_SECRET_FILE};
                                 created 0600 if missing); give the runtime the same file

  Prints one JSON line when ready: {"event":"ready","url":…,"invocationAuth":…,"invocationSecretFile":…}.
  Exits 1 with one sentence when it cannot start (issuer unreachable, port taken), 2 on a usage error.

  Example:
    agentauth rap tool serve --example --issuer http://127.0.0.1:4444
    agentauth rap runtime serve --toolset http://127.0.0.1:PORT   # same AGENTAUTH_HOME: same secret file`,
  "runtime serve": RUNTIME_SERVE_HELP,
  inspect: INSPECT_HELP,
};
