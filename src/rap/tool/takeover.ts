/**
 * What an instance does for the instances that died (issue 22 §6, §8): every `sweepMs` it asks the database which
 * owners are gone (src/db/presence.ts: their lock is held by nobody, past a grace after a database start) and ends
 * their running calls with an error result, their overdue sign-in waits with the timeout text, and releases the
 * outbox messages they had claimed. Any live instance may do it; each row is taken by one (compare-and-set).
 */

import type { Logger } from "../../core/log.ts";
import { DEFAULT_GRACE_MS } from "../../db/index.ts";
import { errorResult } from "./messages.ts";
import type { CallbackOutbox, CallLedger, LedgerCall } from "./state.ts";

export interface TakeoverOptions {
  /** How often to look (default 1 s). */
  sweepMs?: number;
  /**
   * How long after the database (re)started an owner whose lock is missing still counts as alive: time for live
   * instances to take their locks again (default 10 s, by the database's clock).
   */
  graceMs?: number;
}

export class Takeover {
  readonly #ledger: CallLedger;
  readonly #outbox: CallbackOutbox;
  readonly #logger: Logger;
  readonly #graceMs: number;
  readonly #sweepMs: number;
  /** Called after messages were queued or released, so the outbox pump looks at once. */
  readonly #onQueued: () => void;
  #timer: NodeJS.Timeout | undefined;
  #sweeping = false;

  constructor(o: {
    ledger: CallLedger;
    outbox: CallbackOutbox;
    logger: Logger;
    onQueued: () => void;
    options?: TakeoverOptions;
  }) {
    this.#ledger = o.ledger;
    this.#outbox = o.outbox;
    this.#logger = o.logger;
    this.#onQueued = o.onQueued;
    this.#graceMs = o.options?.graceMs ?? DEFAULT_GRACE_MS;
    this.#sweepMs = o.options?.sweepMs ?? 1_000;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.sweep(), this.#sweepMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One pass; failures are logged (the database may be down) and the next pass tries again. */
  async sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      const ended = await this.#ledger.takeOver(this.#graceMs, stoppedResult);
      const released = (await this.#outbox.releaseGone?.(this.#graceMs)) ?? 0;
      if (ended > 0) this.#logger.warn("rap.call.taken_over", { ended });
      if (released > 0) this.#logger.info("rap.outbox.released_gone", { released });
      if (ended > 0 || released > 0) this.#onQueued();
    } catch (error) {
      this.#logger.warn("rap.takeover.unavailable", { error });
    } finally {
      this.#sweeping = false;
    }
  }
}

/**
 * The result of a call whose instance died while running it (it may or may not have had its effect), or whose
 * sign-in wait ran out after its instance died (the timeout text it recorded).
 */
function stoppedResult(call: LedgerCall, timeoutText?: string) {
  return errorResult(
    { callbackUrl: call.callbackUrl, groupId: call.groupId, id: call.id, callId: call.callId },
    timeoutText ??
      `The tool instance running ${call.operation} stopped (killed, crashed or cut off from its database) before ${call.operation} finished, so whether it took effect is not known. Check before asking for it again.`,
  );
}
