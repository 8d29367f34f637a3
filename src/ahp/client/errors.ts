/**
 * The AHP client's typed errors: one class per kind of failure, a stable `code`, a message that says what to do
 * next. Messages may quote what the host said (its JSON-RPC error message, clipped), never its `data` or a token.
 */

import { peerText } from "../../core/display.ts";
import { AgentAuthError } from "../../core/errors.ts";

/** The WebSocket could not be opened, or it closed while a request was outstanding. */
export class AhpConnectError extends AgentAuthError {
  declare readonly code: "ahp_connect_failed";
  constructor(message: string, options?: { cause?: unknown }) {
    super("ahp_connect_failed", message, options);
  }
}

/** No dialect both sides speak: the host refused every version offered (-32005) or answered none usably. */
export class AhpVersionError extends AgentAuthError {
  declare readonly code: "ahp_version_unsupported";
  /** What the host said it supports, when it said (`data.supportedVersions`). */
  readonly supportedVersions: readonly (string | number)[];
  constructor(message: string, supportedVersions: readonly (string | number)[] = []) {
    super("ahp_version_unsupported", message);
    this.supportedVersions = supportedVersions;
  }
}

/** Still `AuthRequired` (-32007) after one authentication and one retry, or no credential could be obtained. */
export class AhpAuthRequiredError extends AgentAuthError {
  declare readonly code: "ahp_auth_required";
  /** The resources (official `resource`, seed `schemeId`) the host still wants. */
  readonly resources: readonly string[];
  constructor(message: string, resources: readonly string[], options?: { cause?: unknown }) {
    super("ahp_auth_required", message, options);
    this.resources = resources;
  }
}

/** A resource was named that the host never advertised: the client will not send a token for it. */
export class AhpUnknownResourceError extends AgentAuthError {
  declare readonly code: "ahp_unknown_resource";
  constructor(message: string) {
    super("ahp_unknown_resource", message);
  }
}

/**
 * The client cannot sign in to an authorization server a host names, as configured: a recognised provider preset
 * without a client id (`ahp_provider_client_id_missing`), a configured host that is not the advertised server
 * (`ahp_provider_host_mismatch`), a preset without a device flow (`ahp_provider_flow_unsupported`), or a server
 * that is neither a preset nor discoverable (`ahp_server_unknown`). The message names what to configure.
 */
export class AhpServerConfigError extends AgentAuthError {}

/** The host broke the protocol: malformed JSON, a shape that fails validation, a binary frame. */
export class AhpProtocolError extends AgentAuthError {
  declare readonly code: "ahp_protocol_error";
  constructor(message: string, options?: { cause?: unknown }) {
    super("ahp_protocol_error", message, options);
  }
}

/** Any other JSON-RPC error answer from the host. */
export class AhpRequestError extends AgentAuthError {
  declare readonly code: "ahp_request_failed";
  readonly rpcCode: number;
  constructor(message: string, options: { rpcCode: number; cause?: unknown }) {
    super("ahp_request_failed", message, options);
    this.rpcCode = options.rpcCode;
  }
}

/** A request got no answer within its time limit. */
export class AhpTimeoutError extends AgentAuthError {
  declare readonly code: "ahp_timeout";
  constructor(message: string) {
    super("ahp_timeout", message);
  }
}

/** The connection was closed by this side; connect again. */
export class AhpClosedError extends AgentAuthError {
  declare readonly code: "ahp_closed";
  constructor(message = "The AHP connection is closed; connect again.") {
    super("ahp_closed", message);
  }
}

/** Host-supplied text in our messages: the one sanitiser (`peerText`), one line, bounded. */
export function clip(text: unknown, max = 200): string {
  return peerText(text, { max });
}
