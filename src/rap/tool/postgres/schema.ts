/**
 * The RAP tool's tables on PostgreSQL (component "rap_tool"). Only digests, ids (message, group, call, attempt),
 * states, instances' presence keys and times are in clear: the PKCE verifier, the call's arguments and callback URL (a capability), and every message body are sealed
 * under the vault keyring (sealJson), bound to their row by the sealing purpose.
 */

import type { Migration } from "../../../db/index.ts";

export const RAP_TOOL_COMPONENT = "rap_tool";

export const RAP_TOOL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "pending authorizations by state digest; consent links; outbox of undelivered callbacks; marks on calls (cancelled, resumed elsewhere)",
    sql: `
      CREATE TABLE rap_tool_pending (
        digest     bytea       PRIMARY KEY,
        sealed     jsonb       NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX rap_tool_pending_expires ON rap_tool_pending (expires_at);
      CREATE TABLE rap_tool_consent (
        digest     bytea       PRIMARY KEY,
        sealed     jsonb       NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE TABLE rap_tool_outbox (
        seq           bigserial   PRIMARY KEY,
        id            uuid        NOT NULL UNIQUE,
        group_id      text        NOT NULL,
        call_id       text        NOT NULL,
        sealed        jsonb       NOT NULL,
        attempts      integer     NOT NULL DEFAULT 0,
        created_at    timestamptz NOT NULL DEFAULT now(),
        next_at       timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz
      );
      CREATE INDEX rap_tool_outbox_group ON rap_tool_outbox (group_id, seq);
      CREATE INDEX rap_tool_outbox_due ON rap_tool_outbox (next_at);
      -- What one instance decided about a call another may hold, remembered while a sign-in for it could still come
      -- back: 'cancelled' (the runtime cancelled the call, call_id, or closed the thread, call_id = ''): nobody
      -- resumes it or sends for it; 'resumed' (an instance took over a call waiting for its sign-in): the instance
      -- that started it does not time it out.
      CREATE TABLE rap_tool_call_marks (
        group_id   text        NOT NULL,
        call_id    text        NOT NULL,
        kind       text        NOT NULL CHECK (kind IN ('cancelled', 'resumed')),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (group_id, call_id, kind)
      );
    `,
  },
  {
    version: 2,
    description:
      "outbox: count the claims of a row this instance could not open apart from delivery attempts, to set it aside",
    // Kept apart from `attempts` so that an instance without the key never spends a message's delivery budget, and
    // a message retried for long by an instance with the key is not dropped by one without it.
    sql: "ALTER TABLE rap_tool_outbox ADD COLUMN unreadable integer NOT NULL DEFAULT 0;",
  },
  {
    version: 3,
    description:
      "replay ledger: HMAC signatures of accepted invocations, so a replay is refused at every instance and after restarts",
    sql: `
      CREATE TABLE rap_tool_replay (
        signature  bytea       PRIMARY KEY,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX rap_tool_replay_expires ON rap_tool_replay (expires_at);
    `,
  },
  {
    version: 4,
    description:
      "calls: each accepted call once, its state and the instance running it (by presence key); outbox claims name their instance",
    // One row per accepted call, kept a day after it ended: a redelivered invocation, a stale sign-in link and an
    // instance that died all meet it (issue 22 §1, §6). `target` is the SHA-256 of the callback URL, so two runtimes
    // that happen to use the same thread and call ids do not collide; the URL itself is sealed with the rest.
    sql: `
      CREATE TABLE rap_tool_calls (
        group_id   text        NOT NULL,
        call_id    text        NOT NULL,
        target     bytea       NOT NULL,
        attempt    text        NOT NULL,
        status     text        NOT NULL CHECK (status IN ('running', 'authorizing', 'done')),
        owner      bigint      NOT NULL,
        sealed     jsonb       NOT NULL,
        deadline   timestamptz,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (group_id, call_id, target)
      );
      CREATE INDEX rap_tool_calls_open ON rap_tool_calls (owner) WHERE status <> 'done';
      CREATE INDEX rap_tool_calls_expires ON rap_tool_calls (expires_at) WHERE status = 'done';
      ALTER TABLE rap_tool_outbox ADD COLUMN claimed_by bigint;
    `,
  },
  {
    version: 5,
    description:
      "instances: the configuration each live instance started with (fingerprints only), checked by every newcomer",
    // Keyed by presence key: an instance the database says is gone no longer counts (issue 22 §5).
    sql: `
      CREATE TABLE rap_tool_instances (
        owner      bigint      PRIMARY KEY,
        settings   jsonb       NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
];
