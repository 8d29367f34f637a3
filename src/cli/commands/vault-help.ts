/** `agentauth vault`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const REENCRYPT_HELP = `agentauth vault reencrypt [--json]

Re-seals every stored credential that is not sealed under the current vault key, in one transaction (all or
nothing), so that older keys are no longer needed. The current key is $AGENTAUTH_VAULT_KEY (older keys, still
needed to read the rows, in $AGENTAUTH_VAULT_PREVIOUS_KEYS) or $AGENTAUTH_HOME/vault.key. Works on the SQLite vault
and on PostgreSQL ($AGENTAUTH_DATABASE_URL or --database-url). Safe while other processes use the vault: their reads
accept every key in their keyring. Key rotation with no downtime, step by step: docs/deploy.md.

  --json    the outcome as {"rewritten": N, "kid": "<current key id>"} on stdout; errors as JSON too

Example: AGENTAUTH_VAULT_KEY=<new> AGENTAUTH_VAULT_PREVIOUS_KEYS=<old> agentauth vault reencrypt
`;

export const VAULT_USAGE = `agentauth vault list [--json]      what the vault holds (ids, providers, accounts, expiry; never a token)
agentauth vault revoke <id> [--json]   revoke at the provider (RFC 7009 or its own API), then delete
agentauth vault delete <id>        forget locally without revoking
agentauth vault reencrypt [--json]  re-seal every credential under the current key (key rotation)`;

export const VAULT_HELP: Record<string, string> = {
  "": `${VAULT_USAGE}

The vault is $AGENTAUTH_HOME/vault.db (tokens sealed with AES-256-GCM), or the PostgreSQL database named by
$AGENTAUTH_DATABASE_URL or --database-url (tokens sealed the same way); its key comes from $AGENTAUTH_VAULT_KEY
or $AGENTAUTH_HOME/vault.key. Run 'agentauth vault <command> --help' for one command.
`,
  list: `agentauth vault list [--json]

Lists the stored credentials: id, account (the provider's handle, e.g. the GitHub login, else the name or
e-mail), issuer, provider preset (with its self-hosted host), resource, status, access-token expiry, whether a
refresh token is held. Never prints a token, never needs the vault key, and creates nothing (a missing vault is reported as
not existing yet). A row that cannot be read is flagged with its id and how to delete it; the others are listed.

  --json    one JSON array of credentials (with "provider": {"name", "options"} and "account": {"login",
            "name", "email", ...}); unreadable rows carry "unreadable": {"code", "message"}

Example: agentauth vault list --json
`,
  revoke: `agentauth vault revoke <id> [--json]

Revokes the credential at its provider, then deletes it: RFC 7009 (refresh token, then access token), or the
provider's own call (GitHub: DELETE /applications/{client_id}/token with the client secret stored at login). A
provider with no revocation API is deleted locally and the output names the page where you remove the app's
access. If the server cannot be reached the credential is kept (retry, or 'vault delete' it). A credential whose row
is damaged (it no longer decrypts or parses) cannot be revoked: it is deleted, and the output says it was not
revoked. One sealed with a key this environment lacks is kept: set the right key and retry, or 'vault delete' it.

  --json    the outcome as {"id", "revoked", "deleted", "manageUrl"?} on stdout; errors as JSON too

Example: agentauth vault revoke Qm9iLWlk3x
`,
  delete: `agentauth vault delete <id> [--json]

Forgets the credential locally without contacting its server (its tokens stay valid there until they expire).
Works on rows that cannot be read or decrypted.

  --json    the outcome as {"id", "revoked": false, "deleted": true} on stdout; errors as JSON too

Example: agentauth vault delete Qm9iLWlk3x
`,
  reencrypt: REENCRYPT_HELP,
};
