/**
 * What happens to an acknowledged invocation (after the 200): the full judgement, registration as an active call
 * (duplicates and the active-call limit), and a place in the work queue. Errors go to the call's callback target.
 */

import type { Logger } from "../../core/log.ts";
import type { ActiveCall, CallRegistry } from "./calls.ts";
import { durably } from "./durably.ts";
import { type CallVerdict, judgeCall } from "./invocation.ts";
import type { CallTarget } from "./messages.ts";
import { type CallRunner, DURABLE_BUDGET_MS, ledgerCall } from "./runner.ts";
import type { CallLedger } from "./state.ts";
import type { OperationTable } from "./toolset.ts";
import type { WorkQueue } from "./work-queue.ts";

export function createIntake(o: {
  operations: OperationTable;
  calls: CallRegistry;
  runner: CallRunner;
  work: WorkQueue;
  /** With shared state: every accepted call is recorded before it runs, and a redelivered one does not run again. */
  ledger?: CallLedger;
  logger: Logger;
}): (body: unknown, target: CallTarget) => void {
  const { calls, runner, logger } = o;
  return (body, target) => {
    // This runs on its own turn (setImmediate), outside the request's error handling: an exception here would
    // be uncaught and end the process with every call in flight, so each call ends in a tool_result instead.
    let verdict: CallVerdict;
    try {
      verdict = judgeCall(body as Record<string, unknown>, target, o.operations);
    } catch (error) {
      logger.error("rap.invoke.judge_failed", { group_id: target.groupId, id: target.id, error });
      return runner.reject(target, judgeFailure(body, o.operations));
    }
    try {
      admit(verdict);
    } catch (error) {
      logger.error("rap.invoke.intake_failed", { group_id: target.groupId, id: target.id, error });
      runner.reject(target, "The tool failed to start this call. Try again later.");
    }
  };

  function admit(verdict: CallVerdict) {
    const { target } = verdict;
    if (verdict.kind === "error") {
      logger.info("rap.invoke.rejected", { group_id: target.groupId, id: target.id });
      return runner.reject(target, verdict.message);
    }
    const { invocation } = verdict;
    const call = calls.open({
      operation: invocation.operation,
      arguments: invocation.arguments,
      callbackUrl: target.callbackUrl,
      groupId: target.groupId,
      id: target.id,
      callId: target.callId,
      threadAncestors: invocation.thread_ancestors ?? [],
      userId: invocation.user_id ?? null,
    });
    if (call === "duplicate") {
      // A redelivered invocation: the first one will answer; answering twice would confuse the runtime.
      logger.info("rap.invoke.duplicate", { group_id: target.groupId, id: target.id });
      return;
    }
    if (call === "full") {
      return runner.reject(
        target,
        "The tool is busy with too many calls right now. Try again in a minute.",
      );
    }
    logger.info("rap.invoke.accepted", {
      group_id: target.groupId,
      id: target.id,
      operation: invocation.operation,
    });
    // Recorded now, not when a slot of the work queue frees: an instance killed while the call waits in its queue
    // must leave a row for another to end (issue 22 §6), or the runtime, which saw the 200, waits for its timeout.
    const ledgered = o.ledger ? begin(o.ledger, call) : undefined;
    ledgered?.catch(() => {}); // awaited (and its failure handled) in the task below
    o.work.enqueue(async () => {
      try {
        if (ledgered && !(await ledgered)) return;
        await runner.run(call);
      } catch (error) {
        logger.error("rap.call.crashed", { error });
        runner.fail(call, `${invocation.operation} failed unexpectedly. Try again later.`);
      }
    });
  }

  /**
   * Records the call in the shared ledger before it runs (issue 22 §1). False, and the call is dropped here, when the
   * ledger already had it: an invocation delivered again (a runtime that lost the 200, at any instance) must not run
   * a second time; the first delivery answers. When the store stays unreachable the call ends with an error.
   */
  async function begin(ledger: CallLedger, call: ActiveCall): Promise<boolean> {
    let fresh: boolean;
    try {
      fresh = await durably(() => ledger.begin(ledgerCall(call)), {
        budgetMs: DURABLE_BUDGET_MS,
        signal: call.controller.signal,
      });
    } catch (error) {
      logger.error("rap.invoke.ledger_unavailable", {
        group_id: call.spec.groupId,
        id: call.spec.id,
        error,
      });
      runner.fail(
        call,
        `The tool's storage did not answer, so ${call.spec.operation} did not run. Try again in a minute.`,
      );
      return false;
    }
    if (!fresh) {
      calls.finish(call);
      logger.info("rap.invoke.duplicate", { group_id: call.spec.groupId, id: call.spec.id });
      return false;
    }
    call.ledgered = true;
    return true;
  }
}

/** The message for an invocation whose judging threw (a pathological inputSchema): names only a known operation. */
function judgeFailure(body: unknown, operations: OperationTable): string {
  const name = (body as Record<string, unknown>).operation;
  const what =
    typeof name === "string" && operations.has(name)
      ? `the arguments for ${name}`
      : "this invocation";
  return `The tool could not check ${what}: judging them failed inside the tool. Simplify the arguments and call again; if it keeps failing, tell the tool's operator.`;
}
