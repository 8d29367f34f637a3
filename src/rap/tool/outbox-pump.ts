/**
 * Delivers what the durable outbox holds: claims due messages, makes one attempt each (with the message's stable id
 * as `Idempotency-Key`), then deletes it (2xx, or a refusal for good: other 4xx) or reschedules it with backoff.
 * Runs when a message is written, and every `pollMs` so that messages written by an instance that died, or whose
 * retry time came, are picked up by whichever instance is alive. At-least-once: a claim that lapses (its instance was
 * killed mid-attempt) is delivered again, with the same key, and the runtime dedupes it. A clean stop releases the
 * claims it holds, so another instance takes them at once. A claim of an instance that died is released when the
 * database says it is gone (takeover.ts); one this instance lost track of because a statement failed under it (the
 * database crashed) is released by the next round; `claimMs` remains the backstop for an instance that hangs.
 */

import type { Logger } from "../../core/log.ts";
import { DEFAULT_DELIVERY, type DeliveryOptions, deliverCallback } from "./delivery.ts";
import type { CallbackOutbox, OutboxMessage } from "./state.ts";

export interface OutboxPumpOptions {
  outbox: CallbackOutbox;
  delivery: DeliveryOptions;
  logger: Logger;
  /** How often due messages are looked for without a nudge. Default 1 s. */
  pollMs?: number;
  /** How long a claim lasts; must be longer than one attempt's timeout (RangeError). Default: that timeout + 20 s. */
  claimMs?: number;
  /** Messages claimed per round. Default 32. */
  batch?: number;
}

export class OutboxPump {
  readonly #o: OutboxPumpOptions;
  readonly #stopped = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  /** Messages being delivered by this instance now, by id. */
  readonly #inFlight = new Set<string>();
  /**
   * Set when a statement failed (the database went away under us): a claim may have been committed without our
   * knowing, or a delivery's outcome not written. The next round first releases our claims but those in flight.
   */
  #lostTrack = false;

  constructor(options: OutboxPumpOptions) {
    const timeoutMs = options.delivery.timeoutMs ?? DEFAULT_DELIVERY.timeoutMs;
    // A claim that can lapse while its attempt is still running lets a second instance send the same message at once.
    if (options.claimMs !== undefined && !(options.claimMs > timeoutMs)) {
      throw new RangeError(
        `claimMs (${options.claimMs}) must be longer than one delivery attempt's timeout (${timeoutMs} ms): raise claimMs or lower delivery.timeoutMs.`,
      );
    }
    this.#o = options;
  }

  start(): void {
    if (this.#timer || this.#stopped.signal.aborted) return;
    this.#timer = setInterval(() => this.kick(), this.#o.pollMs ?? 1000);
    this.#timer.unref();
    this.kick();
  }

  /**
   * This instance may have lost track of claims it holds (its database session was lost and regained, say): they are
   * released at the start of the next round, those being delivered now excepted.
   */
  lostTrack(): void {
    this.#lostTrack = true;
    this.kick();
  }

  /** Looks for due messages now (coalesced with a round already under way). */
  kick(): void {
    if (this.#stopped.signal.aborted) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#rounds().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves when the round under way (if any) has ended. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#stopped.abort();
  }

  async #rounds(): Promise<void> {
    const timeoutMs = this.#o.delivery.timeoutMs ?? DEFAULT_DELIVERY.timeoutMs;
    const claimMs = this.#o.claimMs ?? timeoutMs + 20_000;
    do {
      this.#again = false;
      try {
        if (this.#lostTrack && this.#o.outbox.releaseOwn) {
          const released = await this.#o.outbox.releaseOwn([...this.#inFlight]);
          this.#lostTrack = false;
          if (released > 0) this.#o.logger.info("rap.outbox.released_own", { released });
        }
        for (;;) {
          if (this.#stopped.signal.aborted) return;
          const claimed = await this.#o.outbox.claim(this.#o.batch ?? 32, claimMs, (row) =>
            // By id only: the row's content is sealed and may hold a capability URL.
            this.#o.logger.warn("rap.outbox.unreadable", {
              message_id: row.id,
              group_id: row.groupId,
              unreadable: row.unreadable,
              dropped: row.dropped,
              error_code: row.code,
            }),
          );
          if (claimed.length === 0) break;
          await Promise.all(claimed.map((message) => this.#tracked(message)));
        }
      } catch (error) {
        this.#lostTrack = true;
        this.#o.logger.error("rap.outbox.unavailable", { error });
        return;
      }
    } while (this.#again);
  }

  async #tracked(message: OutboxMessage): Promise<void> {
    this.#inFlight.add(message.id);
    try {
      await this.#deliver(message);
    } finally {
      this.#inFlight.delete(message.id);
    }
  }

  async #deliver(message: OutboxMessage): Promise<void> {
    const { outbox, delivery, logger } = this.#o;
    const outcome = await deliverCallback(message.callbackUrl, message.body, {
      ...delivery,
      attempts: 1,
      idempotencyKey: message.id,
      reportRetryAfter: true,
      signal: this.#stopped.signal,
    });
    const fields = {
      type: (message.body as { type?: unknown })?.type,
      group_id: message.groupId,
      id: (message.body as { id?: unknown })?.id,
      message_id: message.id,
      attempts: message.attempts,
      status: outcome.status,
      callback_origin: URL.parse(message.callbackUrl)?.origin,
    };
    // Stopping mid-attempt: release the claim so that another instance tries again now, not after `claimMs`. If the
    // store cannot be reached, the claim lapses instead.
    // An attempt cut short by the stop ends as a failed POST, so the stop itself is what tells it apart.
    if (!outcome.delivered && (outcome.reason === "cancelled" || this.#stopped.signal.aborted)) {
      await outbox.retryLater(message.id, 0).catch((error: unknown) => {
        logger.warn("rap.outbox.release_failed", { message_id: message.id, error });
      });
      return;
    }
    if (outcome.delivered) {
      await outbox.remove(message.id);
      logger.info("rap.callback.delivered", fields);
      return;
    }
    if (outcome.reason === "rejected") {
      await outbox.remove(message.id);
      logger.warn("rap.callback.failed", { ...fields, reason: "rejected" });
      return;
    }
    // A Retry-After (429, 503) is honoured as in memory: never sooner than the runtime asked.
    const delay = Math.max(
      outcome.retryAfterMs ?? 0,
      backoff(
        message.attempts,
        delivery.baseDelayMs ?? DEFAULT_DELIVERY.baseDelayMs,
        delivery.maxDelayMs ?? DEFAULT_DELIVERY.maxDelayMs,
      ),
    );
    const budget = delivery.maxTotalMs ?? DEFAULT_DELIVERY.maxTotalMs;
    const attemptsLeft = (delivery.attempts ?? DEFAULT_DELIVERY.attempts) > message.attempts;
    if (!attemptsLeft || Date.now() + delay > message.createdAt + budget) {
      await outbox.remove(message.id);
      logger.warn("rap.callback.failed", { ...fields, reason: "exhausted" });
      return;
    }
    await outbox.retryLater(message.id, delay);
  }
}

/** Exponential with equal jitter, as for in-memory delivery. */
function backoff(attempt: number, base: number, max: number): number {
  const step = Math.min(max, base * 2 ** (attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}
