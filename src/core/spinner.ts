/** A stderr spinner for waits; on a non-terminal it prints one line instead of animating. */

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  update(text: string): void;
  stop(final?: string): void;
}

export function startSpinner(
  write: (text: string) => void,
  interactive: boolean,
  text: string,
): Spinner {
  if (!interactive) {
    write(`${text}\n`);
    return { update: () => {}, stop: (final) => final && write(`${final}\n`) };
  }
  let frame = 0;
  let current = text;
  const timer = setInterval(() => {
    frame = (frame + 1) % FRAMES.length;
    write(`\r\x1b[2K${FRAMES[frame]} ${current}`);
  }, 100);
  timer.unref();
  return {
    update: (next) => {
      current = next;
    },
    stop: (final) => {
      clearInterval(timer);
      write(`\r\x1b[2K${final ? `${final}\n` : ""}`);
    },
  };
}
