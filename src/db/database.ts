/**
 * One PostgreSQL database as the stores use it: a small pool for statements, transactions, and dedicated sessions
 * for session-level advisory locks (a lock the server releases when the session's connection dies, so a process
 * killed with kill -9 never holds anything past its last packet). Migrations run on open (see migrations.ts).
 */

import pg from "pg";
import { AgentAuthError } from "../core/errors.ts";
import { DatabaseError, databaseReason, isConnectionProblem } from "./errors.ts";
import { applyMigrations, type Migration } from "./migrations.ts";
import { isPostgresUrl, redactDatabaseUrl } from "./url.ts";

export type Row = Record<string, unknown>;

/** `application_name` of every agentauth connection (pg_stat_activity shows it). */
export const APPLICATION_NAME = "agentauth";

/** Anything that runs a statement: the pool, a transaction's client, or a session. */
export interface Queryable {
  query<R extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<R[]>;
}

/** A connection of its own, held until released: for advisory locks that must outlive a statement. */
export interface Session extends Queryable {
  /** The server process serving this session (`pg_backend_pid()`), to tell holders apart. */
  readonly backendPid: number;
  /** Gives the connection back; `destroy` closes it instead (which also drops every lock it held). */
  release(destroy?: boolean): void;
}

/**
 * A connection of its own that LISTENs on one channel: notifications arrive on it in commit order, and statements
 * run on it (so a statement that succeeds proves the channel was alive when it ran).
 */
export interface Listener extends Queryable {
  /** The server process serving this connection (`pg_backend_pid()`). */
  readonly backendPid: number;
  /** Settles once the connection is gone: closed, dropped by the server, or broken. */
  readonly ended: Promise<void>;
  /** Ends the connection (the server forgets the LISTEN). */
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Which component's schema to bring up to date on open ("vault", "rap_runtime", "rap_tool"). */
  component: string;
  migrations: readonly Migration[];
  /** Connections for statements. Default 10. */
  poolSize?: number;
  /** Connections for sessions (locks). Default 16. */
  sessionPoolSize?: number;
  /** How long to wait for a connection. Default 10 s. */
  connectTimeoutMs?: number;
}

export interface Database extends Queryable {
  /** The URL without its password, for messages and logs. */
  readonly label: string;
  /** Runs fn in one transaction (BEGIN … COMMIT, ROLLBACK on throw) on one connection. */
  transaction<T>(fn: (client: Queryable) => Promise<T>): Promise<T>;
  session(): Promise<Session>;
  /**
   * Opens a connection outside the pools that LISTENs on `channel` and calls `onNotification` with each payload, in
   * the order the notifying transactions committed. Each call opens one more connection; it does not keep the process
   * alive by itself.
   */
  listen(channel: string, onNotification: (payload: string) => void): Promise<Listener>;
  close(): Promise<void>;
}

/** Opens a pool on `url` and applies `component`'s migrations; every failure is a DatabaseError with the URL redacted. */
export async function openDatabase(url: string, options: DatabaseOptions): Promise<Database> {
  if (!isPostgresUrl(url)) {
    throw new DatabaseError(
      "database_url_invalid",
      "The database URL must start with postgres:// or postgresql:// " +
        "(for example postgres://agentauth@db.example:5432/agentauth).",
    );
  }
  const label = redactDatabaseUrl(url);
  const connectionTimeoutMillis = options.connectTimeoutMs ?? 10_000;
  let config: pg.ClientConfig;
  try {
    config = {
      connectionString: url,
      connectionTimeoutMillis,
      // TCP keepalive: a lock session whose host vanished (no FIN: a crashed machine, a partition) is noticed by the
      // kernel instead of being held open for hours; the server side has its own keepalive settings.
      keepAlive: true,
      // Names our sessions in pg_stat_activity, and lets the lease takeover end only agentauth's own sessions.
      application_name: APPLICATION_NAME,
    };
    // Parse now, so a malformed URL is reported here and not as a crash inside the pool.
    new URL(url);
  } catch {
    // No cause: URL's TypeError carries the whole input (`input`), password included, into any log of the error.
    throw new DatabaseError(
      "database_url_invalid",
      `The database URL ${label} cannot be parsed; check its form (postgres://user:password@host:port/database).`,
    );
  }
  const pool = new pg.Pool({ ...config, max: options.poolSize ?? 10, idleTimeoutMillis: 10_000 });
  const sessions = new pg.Pool({
    ...config,
    max: options.sessionPoolSize ?? 16,
    idleTimeoutMillis: 10_000,
  });
  // An idle connection the server dropped (restart, admin kill) emits 'error' on the pool: not a crash.
  const ignore = () => {};
  pool.on("error", ignore);
  sessions.on("error", ignore);
  const db = new PgDatabase(label, pool, sessions, config, {
    pool: options.poolSize ?? 10,
    sessions: options.sessionPoolSize ?? 16,
  });
  try {
    await applyMigrations(db, options.component, options.migrations);
  } catch (error) {
    await db.close();
    throw db.wrap(error, "prepare its schema");
  }
  return db;
}

class PgDatabase implements Database {
  readonly label: string;
  readonly #pool: pg.Pool;
  readonly #sessions: pg.Pool;
  readonly #config: pg.ClientConfig;
  readonly #sizes: { pool: number; sessions: number };
  readonly #listeners = new Set<Listener>();
  #closed = false;

  constructor(
    label: string,
    pool: pg.Pool,
    sessions: pg.Pool,
    config: pg.ClientConfig,
    sizes: { pool: number; sessions: number },
  ) {
    this.label = label;
    this.#sizes = sizes;
    this.#pool = pool;
    this.#sessions = sessions;
    this.#config = config;
  }

  async query<R extends Row = Row>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    this.#open();
    const waiting = this.#pool.totalCount >= this.#sizes.pool;
    try {
      return (await this.#pool.query(sql, params as unknown[])).rows as R[];
    } catch (error) {
      if (waiting) throw this.#connectFailure(error, this.#pool, this.#sizes.pool, "poolSize");
      throw this.wrap(error, "run a statement");
    }
  }

  async transaction<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    this.#open();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw this.#connectFailure(error, this.#pool, this.#sizes.pool, "poolSize");
    }
    let broken = false;
    const onError = () => {
      broken = true;
    };
    client.on("error", onError);
    const scoped: Queryable = {
      query: async <R extends Row = Row>(sql: string, params: readonly unknown[] = []) => {
        try {
          return (await client.query(sql, params as unknown[])).rows as R[];
        } catch (error) {
          if (isConnectionProblem(error)) broken = true;
          throw error;
        }
      },
    };
    try {
      await client.query("BEGIN");
      const result = await fn(scoped);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw this.wrap(error, "run a transaction");
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }

  async session(): Promise<Session> {
    this.#open();
    let client: pg.PoolClient;
    let backendPid: number;
    try {
      client = await this.#sessions.connect();
    } catch (error) {
      throw this.#connectFailure(error, this.#sessions, this.#sizes.sessions, "sessionPoolSize");
    }
    let released = false;
    // A checked-out client whose connection dies (server restart, pg_terminate_backend) emits 'error' on itself,
    // not on the pool: without a listener that is an uncaught exception, also while the first statement below
    // runs (pg emits it beside failing the query). The next query fails instead.
    let broken = false;
    const onError = () => {
      broken = true;
    };
    client.on("error", onError);
    try {
      const rows = (await client.query("SELECT pg_backend_pid() AS pid")).rows;
      backendPid = Number(rows[0]?.pid);
    } catch (error) {
      // Not given back to the pool as usable: it failed its first statement.
      client.removeListener("error", onError);
      client.release(true);
      throw this.wrap(error, "open a session");
    }
    return {
      backendPid,
      query: async <R extends Row = Row>(sql: string, params: readonly unknown[] = []) => {
        try {
          return (await client.query(sql, params as unknown[])).rows as R[];
        } catch (error) {
          throw this.wrap(error, "run a statement");
        }
      },
      release: (destroy = false) => {
        if (released) return;
        released = true;
        client.removeListener("error", onError);
        client.release(destroy || broken);
      },
    };
  }

  async listen(channel: string, onNotification: (payload: string) => void): Promise<Listener> {
    this.#open();
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new RangeError(`not a channel name: ${channel}`);
    const client = new pg.Client(this.#config);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    // A dropped connection emits 'error' (then 'end'): never an uncaught exception; the owner learns it by `ended`.
    client.on("error", () => end());
    client.on("end", () => end());
    client.on("notification", (message) => {
      if (message.channel === channel) onNotification(message.payload ?? "");
    });
    let backendPid: number;
    try {
      await client.connect();
      // Listening must not keep the process alive by itself (the pools' idle connections time out; this one never
      // idles): a program that ends without closing its store still exits.
      (
        client as unknown as { connection?: { stream?: { unref?: () => void } } }
      ).connection?.stream?.unref?.();
      backendPid = Number((await client.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      end();
      await client.end().catch(() => {});
      throw this.wrap(error, "listen for changes");
    }
    const listener: Listener = {
      backendPid,
      ended,
      query: async <R extends Row = Row>(sql: string, params: readonly unknown[] = []) => {
        try {
          return (await client.query(sql, params as unknown[])).rows as R[];
        } catch (error) {
          throw this.wrap(error, "run a statement");
        }
      },
      close: async () => {
        this.#listeners.delete(listener);
        end();
        await client.end().catch(() => {});
      },
    };
    this.#listeners.add(listener);
    void ended.then(() => this.#listeners.delete(listener));
    return listener;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([
      this.#pool.end(),
      this.#sessions.end(),
      ...[...this.#listeners].map((l) => l.close()),
    ]);
  }

  /**
   * Our typed errors and the caller's own (thrown inside a transaction) pass through; what pg throws becomes a
   * DatabaseError naming the redacted URL: `database_unavailable` for the connection, `database_failed` otherwise.
   */
  wrap(error: unknown, doing: string): Error {
    if (error instanceof AgentAuthError) return error;
    const sqlState =
      error instanceof pg.DatabaseError && typeof error.code === "string" ? error.code : undefined;
    if (isConnectionProblem(error) || isPoolConnectionError(error)) {
      return new DatabaseError(
        "database_unavailable",
        `Cannot ${doing} on the PostgreSQL database at ${this.label}: ${databaseReason(error)}. Check that the ` +
          "server is running and reachable, and the user, password and database in the URL.",
        { cause: error, sqlState },
      );
    }
    if (error instanceof pg.DatabaseError) {
      return new DatabaseError(
        "database_failed",
        `The PostgreSQL database at ${this.label} failed to ${doing}: ${databaseReason(error)}. Retry; if it ` +
          "persists, check the server's log.",
        { cause: error, sqlState },
      );
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  /**
   * A connection that could not be had: when every connection of the pool was busy the whole wait, the server is
   * fine and the pool is too small for the load, which "check that the server is running" would misstate.
   */
  #connectFailure(error: unknown, pool: pg.Pool, size: number, option: string): Error {
    const exhausted =
      /timeout exceeded when trying to connect/i.test(String((error as Error)?.message)) &&
      pool.totalCount >= size;
    if (!exhausted) return this.wrap(error, "connect");
    return new DatabaseError(
      "database_pool_exhausted",
      `All ${size} connections this process keeps to the PostgreSQL database at ${this.label} stayed busy until ` +
        `the wait ran out. Retry; if it recurs, raise ${option} (and the server's max_connections to match) or ` +
        "lower the concurrency.",
      { cause: error },
    );
  }

  #open(): void {
    if (this.#closed) {
      throw new DatabaseError(
        "database_failed",
        `The connection to the PostgreSQL database at ${this.label} was closed; open the store again.`,
      );
    }
  }
}

/** pg's own connection failures carry no SQLSTATE: a dropped socket, a connect timeout, a closed client. */
function isPoolConnectionError(error: unknown): boolean {
  const message = (error as { message?: unknown })?.message;
  return (
    typeof message === "string" &&
    /Connection terminated|timeout exceeded when trying to connect|connection error|Client was closed|not queryable/i.test(
      message,
    )
  );
}
