/**
 * The vault's PostgreSQL schema, as migrations of the component "vault" (applied on first use, under the shared
 * migration lock, so several instances starting at once apply each step once; see src/db/migrations.ts).
 *
 * The tables are prefixed (`vault_`) because one database may also hold the RAP runtime's and tool's tables.
 * Content columns are nullable on purpose, as in SQLite: the row reader validates every column and reports a bad
 * one as vault_record_corrupt, naming the record so it can be deleted; a constraint would only move the failure.
 */

import type { Migration } from "../../db/index.ts";

export const VAULT_COMPONENT = "vault";

/**
 * The NOTIFY channel of credential changes: `c:<record id>` for a row inserted, updated or deleted (sent by a trigger
 * in the writing transaction, so it is delivered if and only if the change commits), `*` for a TRUNCATE, and
 * `b:<n>` for a writer's barrier (cache-barrier.ts).
 */
export const CACHE_CHANNEL = "agentauth_vault";

export const VAULT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "credentials (tokens sealed by agentauth) and leases (advisory-lock holders and their notes)",
    sql: `
CREATE TABLE vault_credentials (
  subject     text             NOT NULL,
  issuer      text             NOT NULL,
  resource    text             NOT NULL,
  id          text             NOT NULL UNIQUE,
  client_id   text,
  status      text,
  expires_at  double precision,
  scopes      text,
  account     text,
  provider    text,
  has_access  smallint,
  has_refresh smallint,
  has_id      smallint,
  kid         text,
  nonce       text,
  ciphertext  text,
  version     bigint           NOT NULL,
  created_at  bigint           NOT NULL,
  updated_at  bigint           NOT NULL,
  PRIMARY KEY (subject, issuer, resource)
);
CREATE INDEX vault_credentials_kid ON vault_credentials (kid);
CREATE TABLE vault_leases (
  name       text    PRIMARY KEY,
  owner      text    NOT NULL,
  expires_at bigint  NOT NULL,
  note       text,
  holder_pid integer
);`,
  },
  {
    version: 2,
    description:
      "key ids the vault is sealed with, so an instance with a key of its own refuses to write (vault_key_mismatch)",
    sql: `
CREATE TABLE vault_keys (
  kid           text   PRIMARY KEY,
  first_used_at bigint NOT NULL
);
INSERT INTO vault_keys (kid, first_used_at)
  SELECT DISTINCT kid, 0 FROM vault_credentials WHERE kid IS NOT NULL AND kid <> ''
  ON CONFLICT DO NOTHING;`,
  },
  {
    version: 3,
    description:
      "record caches: every change to a credential row notifies its id (a trigger, whoever writes), instances that " +
      "cache register with the barrier they have acknowledged (see cache-listener.ts)",
    sql: `
CREATE SEQUENCE vault_cache_barrier;
CREATE TABLE vault_cache_instances (
  id          text    PRIMARY KEY,
  backend_pid integer NOT NULL,
  acked       bigint  NOT NULL,
  expires_at  bigint  NOT NULL,
  started_at  bigint  NOT NULL
);
CREATE FUNCTION vault_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('${CACHE_CHANNEL}', '*');
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('${CACHE_CHANNEL}', 'c:' || OLD.id); END IF;
  IF TG_OP <> 'DELETE' THEN PERFORM pg_notify('${CACHE_CHANNEL}', 'c:' || NEW.id); END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER vault_credentials_changed AFTER INSERT OR UPDATE OR DELETE ON vault_credentials
  FOR EACH ROW EXECUTE FUNCTION vault_credentials_changed();
CREATE TRIGGER vault_credentials_truncated AFTER TRUNCATE ON vault_credentials
  FOR EACH STATEMENT EXECUTE FUNCTION vault_credentials_changed();`,
  },
];
