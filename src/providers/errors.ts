/** Typed errors of the provider presets: a configuration that cannot work, and a provider API that failed. */

import { AgentAuthError } from "../core/errors.ts";

/** The preset was given (or the vault holds) options it cannot use; the message names the option to fix. */
export class ProviderConfigError extends AgentAuthError {}

/** A provider's own API (account, revocation) refused or answered something unusable. */
export class ProviderApiError extends AgentAuthError {
  readonly status?: number;
  constructor(code: string, message: string, options?: { cause?: unknown; status?: number }) {
    super(code, message, options);
    this.status = options?.status;
  }
}
