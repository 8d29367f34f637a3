/**
 * The RAP runtime's PostgreSQL schema (component "rap_runtime"), applied on open by src/db's migrations. The same
 * rows as the SQLite store, plus the delivery keys (`Idempotency-Key`s applied per thread) and the callback key's
 * fingerprint, which several instances sharing the database must agree on.
 */

import type { Migration } from "../../db/index.ts";

export const RUNTIME_COMPONENT = "rap_runtime";

export const RUNTIME_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "RAP runtime calls, thread entries, views, delivery keys, callback key fingerprint",
    sql: `
CREATE TABLE rap_calls (
  group_id      text   NOT NULL,
  id            text   NOT NULL,
  ord           bigserial,
  call_id       text,
  operation     text   NOT NULL,
  arguments     text   NOT NULL,
  user_id       text,
  toolset       text   NOT NULL,
  base_url      text   NOT NULL,
  requires_auth text,
  status        text   NOT NULL,
  subscription  text   NOT NULL,
  result        text,
  created_at    bigint NOT NULL,
  updated_at    bigint NOT NULL,
  deadline      bigint NOT NULL,
  PRIMARY KEY (group_id, id)
);
CREATE INDEX rap_calls_open_deadline ON rap_calls (deadline) WHERE status IN ('pending', 'authorizing');
CREATE TABLE rap_entries (
  seq      bigserial PRIMARY KEY,
  group_id text   NOT NULL,
  at       bigint NOT NULL,
  body     text   NOT NULL
);
CREATE INDEX rap_entries_by_group ON rap_entries (group_id, seq);
CREATE TABLE rap_views (
  group_id   text   NOT NULL,
  view_type  text   NOT NULL,
  content    text   NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (group_id, view_type)
);
CREATE TABLE rap_deliveries (
  group_id text   NOT NULL,
  key      text   NOT NULL,
  at       bigint NOT NULL,
  PRIMARY KEY (group_id, key)
);
CREATE TABLE rap_runtime_meta (
  name  text PRIMARY KEY,
  value text NOT NULL
);
`,
  },
  {
    version: 2,
    description:
      "calls: sent once the tool acknowledged them, and the sender's presence key, so a call stored by an instance that died before sending it is sent by another",
    // Rows from before count as sent (issue 22 §7).
    sql: `
ALTER TABLE rap_calls ADD COLUMN sent boolean NOT NULL DEFAULT true;
ALTER TABLE rap_calls ADD COLUMN sender bigint;
CREATE INDEX rap_calls_unsent ON rap_calls (ord) WHERE NOT sent;
`,
  },
];
