/**
 * Turn-taking per key among owners: one owner at a time holds a key, any number of its own calls together; another
 * owner waits until they are all done. The bridge uses it per MCP server with one owner per session's provider, so
 * a second session does not start a second sign-in while the first one is asking the person, while one provider's
 * concurrent 401s still reach its own single flight together.
 */

interface Turn {
  owner: object;
  running: number;
  idle: Promise<void>;
  release: () => void;
}

export class Turns {
  readonly #turns = new Map<string, Turn>();

  /** Resolves when `owner` holds `key` (at once when it already does, or nobody does). */
  async enter(key: string, owner: object): Promise<void> {
    for (;;) {
      const turn = this.#turns.get(key);
      if (!turn) {
        let release = () => {};
        const idle = new Promise<void>((resolve) => {
          release = resolve;
        });
        this.#turns.set(key, { owner, running: 1, idle, release });
        return;
      }
      if (turn.owner === owner) {
        turn.running++;
        return;
      }
      await turn.idle;
    }
  }

  /** Ends one of `owner`'s calls; the last one hands the key on. */
  leave(key: string, owner: object): void {
    const turn = this.#turns.get(key);
    if (!turn || turn.owner !== owner || --turn.running > 0) return;
    this.#turns.delete(key);
    turn.release();
  }
}
