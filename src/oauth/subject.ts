/**
 * The one rule for the subject a person or a program may file a credential under: anything but agentauth's own
 * namespace (`agentauth:…`, where client registrations live, registration-store.ts). A user credential filed there
 * could be taken for one of agentauth's records, or shadow one. It holds for a subject asked for (the MCP client,
 * `login()` and the CLI's `login`, the console's Connect, all before anything is sent) and for the subject a completed
 * sign-in is actually filed under, which without one asked for is the one the provider named (`storeSignIn`); the RAP
 * tool refuses such a `user_id` when an invocation arrives (issue 20 §1.6 and its review).
 */

import { AgentAuthError } from "../core/errors.ts";
import { isReservedSubject, RESERVED_SUBJECT_PREFIX } from "./registration-store.ts";

/** A subject in agentauth's reserved namespace was asked for, or named by the provider. */
export class ReservedSubjectError extends AgentAuthError {
  constructor(
    message = `Subjects starting with "${RESERVED_SUBJECT_PREFIX}" are agentauth's own vault records; choose another subject.`,
  ) {
    super("invalid_subject", message);
  }
}

/** Throws `ReservedSubjectError` (code `invalid_subject`) for a reserved subject; any other, or none, passes. */
export function assertUsableSubject(subject: string | undefined): void {
  if (subject !== undefined && isReservedSubject(subject)) throw new ReservedSubjectError();
}

/**
 * The same rule for a subject the provider named (its account API, the ID token's `sub`), which the person did not
 * choose and can only replace by naming one: the error says so.
 */
export function assertUsableProviderSubject(subject: string, provider: string): void {
  if (!isReservedSubject(subject)) return;
  throw new ReservedSubjectError(
    `${provider} named the account with a subject starting with "${RESERVED_SUBJECT_PREFIX}", which is agentauth's own ` +
      "vault records, so nothing was stored. Sign in again and name the subject to keep it under (login's --subject, Connect's subject).",
  );
}
