/**
 * How commands end: long-running ones on SIGTERM or SIGINT, after closing what they opened; and Ctrl-C ends every
 * command with exit code 130 (128 + SIGINT, what shells expect), whether or not it listens for SIGINT itself.
 */

/** Resolves with the first SIGTERM or SIGINT: a `serve` command awaits this, then closes its servers. */
export function untilTerminated(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", done);
      process.off("SIGINT", done);
      resolve(signal);
    };
    process.on("SIGTERM", done);
    process.on("SIGINT", done);
  });
}

export interface InterruptWatch {
  /** True once SIGINT arrived: the command's exit code becomes 130. */
  readonly interrupted: boolean;
  dispose(): void;
}

export interface InterruptOptions {
  /** Where the one-line notices go. */
  stderr: (text: string) => void;
  /** How long a command may take to close after Ctrl-C before the process exits anyway. Default 10 s. */
  graceMs?: number;
  exit?: (code: number) => void;
}

/**
 * Installed around a whole CLI run. On Ctrl-C: a command that listens for SIGINT (a server awaiting
 * `untilTerminated`, a login aborting its flow, an ACP client ending its agent's process group) gets to close
 * cleanly, within `graceMs`; a command that does not listen is ended at once. A second Ctrl-C ends it at once.
 */
export function watchInterrupt(options: InterruptOptions): InterruptWatch {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let interrupted = false;
  let timer: NodeJS.Timeout | undefined;
  // Listeners already there (a test runner's) are not the command's.
  const before = process.listenerCount("SIGINT");
  const onSigint = () => {
    if (interrupted) {
      options.stderr("agentauth: interrupted again; exiting now.\n");
      exit(130);
      return;
    }
    interrupted = true;
    // Any listener added since belongs to the running command, which will close and return.
    if (process.listenerCount("SIGINT") <= before + 1) {
      options.stderr("agentauth: interrupted.\n");
      exit(130);
      return;
    }
    timer = setTimeout(() => {
      options.stderr("agentauth: interrupted; closing took too long, exiting now.\n");
      exit(130);
    }, options.graceMs ?? 10_000);
    // Unref'd: when the command closes everything in time, the timer must not keep the process alive.
    timer.unref();
  };
  process.on("SIGINT", onSigint);
  return {
    get interrupted() {
      return interrupted;
    },
    dispose() {
      process.off("SIGINT", onSigint);
      if (timer) clearTimeout(timer);
    },
  };
}
