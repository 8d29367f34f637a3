/**
 * Group commit for one synchronous SQLite connection (node:sqlite). Every write queued during one turn of the event
 * loop runs at the next check phase (setImmediate), in queue order, inside one `BEGIN IMMEDIATE … COMMIT`; each
 * writer's promise settles only after that COMMIT returned. One fsync then covers every callback that arrived
 * together (16 in flight cost one commit, not 16), and nothing is acknowledged before it is on disk.
 *
 * - Each write runs in its own SAVEPOINT: a write that throws is rolled back alone and rejected with its own error,
 *   as it would have been alone; the others still commit.
 * - Later writes of a batch see the earlier ones (same connection, same transaction): a compare-and-set or an
 *   `ON CONFLICT DO NOTHING` dedup behaves exactly as if the writes had committed one after another.
 * - A failed BEGIN or COMMIT (disk error, another process holding the file past the busy timeout) rolls back and
 *   rejects every write of the batch with that error: each gets the answer it would have got alone.
 * - Writes only: reads run at once, outside the batch, and see committed state only (a write is visible to readers
 *   from the moment its promise resolves, never before).
 */

/** What the batcher needs of a connection (node:sqlite's DatabaseSync has it). */
export interface TransactionalDatabase {
  exec(sql: string): void;
  readonly isTransaction: boolean;
}

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class GroupCommit {
  readonly #db: TransactionalDatabase;
  #queue: Pending[] = [];
  #scheduled = false;

  constructor(db: TransactionalDatabase) {
    this.#db = db;
  }

  /** Queues `run` (synchronous statements) for the next batch; settles with its outcome once the batch committed. */
  write<T>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits what is queued now (synchronously; the promises settle right after). Called before closing too. */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = this.#commit(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i] as Outcome;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  #commit(batch: Pending[]): Outcome[] {
    const db = this.#db;
    db.exec("BEGIN IMMEDIATE");
    try {
      const outcomes = batch.map((item): Outcome => {
        db.exec("SAVEPOINT group_commit_write");
        try {
          const value = item.run();
          db.exec("RELEASE group_commit_write");
          return { ok: true, value };
        } catch (error) {
          // Some errors (SQLITE_FULL, SQLITE_IOERR…) roll the whole transaction back: the earlier writes are gone
          // too, so the batch fails as a whole (the catch below).
          if (!db.isTransaction) throw error;
          db.exec("ROLLBACK TO group_commit_write");
          db.exec("RELEASE group_commit_write");
          return { ok: false, error };
        }
      });
      db.exec("COMMIT");
      return outcomes;
    } catch (error) {
      try {
        if (db.isTransaction) db.exec("ROLLBACK");
      } catch {
        // The first error is the one to report; SQLite ends the transaction when the connection does.
      }
      throw error;
    }
  }
}
