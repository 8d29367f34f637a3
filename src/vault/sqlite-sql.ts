/** The SQL the SQLite credential store runs, in one place: every statement is prepared once per store. */

const WRITE_COLUMNS = `client_id = $client_id, status = $status, expires_at = $expires_at, scopes = $scopes,
  account = $account, provider = $provider, has_access = $has_access, has_refresh = $has_refresh, has_id = $has_id, kid = $kid,
  nonce = $nonce, ciphertext = $ciphertext`;
const SUMMARY_COLUMNS = `subject, issuer, resource, id, client_id, status, expires_at, scopes, account, provider,
  has_access, has_refresh, has_id, version, created_at, updated_at`;
const BY_KEY = "subject = $subject AND issuer = $issuer AND resource = $resource";

export const SQL = {
  // Positional: the hottest statement (every token lookup), and binding by position skips a name lookup per value.
  get: "SELECT * FROM credentials WHERE subject = ? AND issuer = ? AND resource = ?",
  getById: "SELECT * FROM credentials WHERE id = $id",
  list: `SELECT ${SUMMARY_COLUMNS} FROM credentials
    WHERE ($subject IS NULL OR subject = $subject) AND ($issuer IS NULL OR issuer = $issuer)
      AND ($resource IS NULL OR resource = $resource)
    ORDER BY subject, issuer, resource`,
  // One statement, so atomic without an explicit transaction: insert at version 1 or bump the existing row.
  put: `INSERT INTO credentials (subject, issuer, resource, id, client_id, status, expires_at, scopes, account,
      provider, has_access, has_refresh, has_id, kid, nonce, ciphertext, version, created_at, updated_at)
    VALUES ($subject, $issuer, $resource, $id, $client_id, $status, $expires_at, $scopes, $account, $provider,
      $has_access, $has_refresh, $has_id, $kid, $nonce, $ciphertext, 1, $now, $now)
    ON CONFLICT (subject, issuer, resource) DO UPDATE SET ${WRITE_COLUMNS},
      version = credentials.version + 1, updated_at = $now
    RETURNING version, created_at, updated_at`,
  // The version test and the write are one statement: no other process can slip in between.
  compareAndSwap: `UPDATE credentials SET ${WRITE_COLUMNS}, version = version + 1, updated_at = $now
    WHERE ${BY_KEY} AND version = $expected
    RETURNING version, created_at, updated_at`,
  delete: `DELETE FROM credentials WHERE ${BY_KEY}`,
  deleteById: "DELETE FROM credentials WHERE id = $id",
  // Take the lease if it is free, expired, or already ours (which extends it); otherwise change nothing.
  acquireLease: `INSERT INTO leases (name, owner, expires_at) VALUES ($name, $owner, $expires_at)
    ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
    WHERE leases.owner = excluded.owner OR leases.expires_at <= $now`,
  releaseLease: "DELETE FROM leases WHERE name = $name AND owner = $owner",
  getLease: "SELECT owner, expires_at, note FROM leases WHERE name = $name",
  // Compare-and-swap on the dead holder's id: of several contenders that saw the same dead owner, one wins.
  takeLease: `UPDATE leases SET owner = $owner, expires_at = $expires_at
    WHERE name = $name AND owner = $dead`,
  setLeaseNote: "UPDATE leases SET note = $note WHERE name = $name AND owner = $owner",
  staleRows: "SELECT * FROM credentials WHERE kid IS NOT $kid",
  reseal: `UPDATE credentials SET kid = $kid, nonce = $nonce, ciphertext = $ciphertext WHERE ${BY_KEY}`,
} as const;
