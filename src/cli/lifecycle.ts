/** Long-running commands end cleanly on SIGTERM or SIGINT. */

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
