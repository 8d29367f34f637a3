/** The root of agentauth's typed errors: a stable machine-readable `code`, a message that says what to do next, never a secret. */

export class AgentAuthError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }

  /** A JSON shape safe to print or send: code and message only (causes may carry secrets). */
  toJSON(): { name: string; code: string; message: string } {
    return { name: this.name, code: this.code, message: this.message };
  }
}
