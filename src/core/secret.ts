/** A wrapper for tokens, codes, verifiers and keys: prints as `[redacted]` everywhere except through `reveal()`. */

const inspectCustom = Symbol.for("nodejs.util.inspect.custom");
const REDACTED = "[redacted]";

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The only way to read the value: grep for `reveal()` to audit every use. */
  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspectCustom](): string {
    return `Secret(${REDACTED})`;
  }
}

export function secret(value: string): Secret;
export function secret(value: string | undefined): Secret | undefined;
export function secret(value: string | undefined): Secret | undefined {
  return value === undefined ? undefined : new Secret(value);
}

export { REDACTED };
