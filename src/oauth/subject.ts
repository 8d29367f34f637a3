/**
 * The one rule for the subject a person or a program may file a credential under: anything but agentauth's own
 * namespace (`agentauth:…`, where client registrations live, registration-store.ts). A user credential filed there
 * could be taken for one of agentauth's records, or shadow one. The MCP client, `login()` (the CLI's `login`),
 * `storeSignIn` (every completed sign-in) and the console's Connect all refuse it the same way (issue 20 §1.6).
 */

import { AgentAuthError } from "../core/errors.ts";
import { isReservedSubject, RESERVED_SUBJECT_PREFIX } from "./registration-store.ts";

/** A subject in agentauth's reserved namespace was asked for. */
export class ReservedSubjectError extends AgentAuthError {
  constructor() {
    super(
      "invalid_subject",
      `Subjects starting with "${RESERVED_SUBJECT_PREFIX}" are agentauth's own vault records; choose another subject.`,
    );
  }
}

/** Throws `ReservedSubjectError` (code `invalid_subject`) for a reserved subject; any other, or none, passes. */
export function assertUsableSubject(subject: string | undefined): void {
  if (subject !== undefined && isReservedSubject(subject)) throw new ReservedSubjectError();
}
