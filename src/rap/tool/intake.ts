/**
 * What happens to an acknowledged invocation (after the 200): the full judgement, registration as an active call
 * (duplicates and the active-call limit), and a place in the work queue. Errors go to the call's callback target.
 */

import type { Logger } from "../../core/log.ts";
import type { CallRegistry } from "./calls.ts";
import { judgeCall } from "./invocation.ts";
import type { CallTarget } from "./messages.ts";
import type { CallRunner } from "./runner.ts";
import type { OperationTable } from "./toolset.ts";
import type { WorkQueue } from "./work-queue.ts";

export function createIntake(o: {
  operations: OperationTable;
  calls: CallRegistry;
  runner: CallRunner;
  work: WorkQueue;
  logger: Logger;
}): (body: unknown, target: CallTarget) => void {
  const { calls, runner, logger } = o;
  return (body, target) => {
    const verdict = judgeCall(body as Record<string, unknown>, target, o.operations);
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
    o.work.enqueue(() =>
      runner.run(call).catch((error) => {
        logger.error("rap.call.crashed", { error });
        runner.fail(call, `${invocation.operation} failed unexpectedly. Try again later.`);
      }),
    );
  };
}
