/**
 * The RAP tool's tables on PostgreSQL (component "rap_tool"). Only digests, ids (message, group, call) and times
 * are in clear: the PKCE verifier, the call's arguments and callback URL (a capability), and every message body are sealed
 * under the vault keyring (sealJson), bound to their row by the sealing purpose.
 */

import type { Migration } from "../../db/index.ts";

export const RAP_TOOL_COMPONENT = "rap_tool";

export const RAP_TOOL_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description:
      "pending authorizations by state digest; outbox of undelivered callbacks; cancelled calls and threads",
    sql: `
      CREATE TABLE rap_tool_pending (
        digest     bytea       PRIMARY KEY,
        sealed     jsonb       NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX rap_tool_pending_expires ON rap_tool_pending (expires_at);
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
      -- A cancelled call (call_id) or closed thread (call_id = ''), remembered while a sign-in for it could still
      -- come back: whichever instance receives the redirect must not resume it.
      CREATE TABLE rap_tool_cancelled (
        group_id   text        NOT NULL,
        call_id    text        NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (group_id, call_id)
      );
    `,
  },
];
