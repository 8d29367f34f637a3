/** The console's typed errors: each carries the HTTP status the API answers with, and a message safe to show. */

import { AgentAuthError } from "../core/errors.ts";

export type ConsoleStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 421 | 500 | 502;

export class ConsoleError extends AgentAuthError {
  readonly status: ConsoleStatus;

  constructor(status: ConsoleStatus, code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.status = status;
  }
}
