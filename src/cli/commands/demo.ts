/**
 * `agentauth demo` (what `npm start` runs): the whole system on loopback behind the console (startDemo), or with
 * --script every protocol's journey unattended (runDemoScript). Thin: flags → the library; progress on stderr, the
 * summary (or with --json one ready line) on stdout; Ctrl-C or SIGTERM closes everything.
 */

import { resolve } from "node:path";
import { createLogger, type Logger } from "../../core/log.ts";
import { defaultDemoDir } from "../../demo/data-folder.ts";
import { progressText, readyLine, summaryText } from "../../demo/progress.ts";
import { startDemo } from "../../demo/start.ts";
import { parseFlags, parseInteger } from "../flags.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export async function demoCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags({
    args: argv,
    options: {
      "data-dir": { type: "string" },
      fresh: { type: "boolean", default: false },
      port: { type: "string" },
      json: { type: "boolean", default: false },
      script: { type: "boolean", default: false },
      "auto-approve": { type: "boolean", default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0) {
    throw new UsageError(`agentauth demo takes no arguments (got "${positionals[0]}")`);
  }
  const logger = createLogger({ level: "warn", fields: { component: "demo" } });
  if (values.script || values["auto-approve"]) {
    if (values.fresh || values.port !== undefined || values["data-dir"] !== undefined) {
      throw new UsageError(
        "--script runs in a temporary folder of its own; --data-dir, --fresh and --port do not apply",
      );
    }
    return runScript(io, logger);
  }
  if (values["data-dir"] === "") throw new UsageError("--data-dir needs a folder");
  const dataDir = resolve(values["data-dir"] ?? defaultDemoDir(io.env));
  const consolePort =
    values.port === undefined ? undefined : parseInteger(values.port, "--port", 0, 65535);

  // Listen for the end before starting: a Ctrl-C during the start closes what started, then ends.
  const termination = terminationSignal();
  try {
    const demo = await startDemo({
      dataDir,
      fresh: values.fresh,
      consolePort,
      logger,
      onProgress: (event) => io.stderr(progressText(event)),
    });
    try {
      if (!termination.received) {
        const summary = {
          dataDir: demo.dataDir,
          urls: demo.urls,
          commands: demo.commands,
          moved: demo.moved,
        };
        io.stdout(values.json ? readyLine(summary) : summaryText(summary));
        await termination.promise;
      }
      io.stderr("Stopping the demo…\n");
    } finally {
      await demo.close();
    }
    return EXIT.interrupted;
  } finally {
    termination.dispose();
  }
}

/** `--script`: runDemoScript (src/demo/script.ts), loaded only when asked for. */
async function runScript(io: CliIo, logger: Logger): Promise<number> {
  const { runDemoScript } = await import("../../demo/script.ts");
  // Ctrl-C or SIGTERM: the script abandons the running step, skips the rest and closes the demo (no agent left).
  const termination = terminationSignal();
  const controller = new AbortController();
  void termination.promise.then(() => controller.abort());
  try {
    const outcome = await runDemoScript({ write: io.stdout, logger, signal: controller.signal });
    if (termination.received) return EXIT.interrupted;
    return outcome.ok ? EXIT.ok : EXIT.failure;
  } finally {
    termination.dispose();
  }
}

interface Termination {
  promise: Promise<NodeJS.Signals>;
  readonly received: NodeJS.Signals | undefined;
  dispose(): void;
}

/** The first SIGINT or SIGTERM, with a way to stop listening (so a failed start leaves no handler behind). */
function terminationSignal(): Termination {
  let received: NodeJS.Signals | undefined;
  let done: (signal: NodeJS.Signals) => void = () => {};
  const promise = new Promise<NodeJS.Signals>((resolve) => {
    done = (signal) => {
      received ??= signal;
      resolve(signal);
    };
  });
  process.on("SIGINT", done);
  process.on("SIGTERM", done);
  return {
    promise,
    get received() {
      return received;
    },
    dispose() {
      process.off("SIGINT", done);
      process.off("SIGTERM", done);
    },
  };
}
