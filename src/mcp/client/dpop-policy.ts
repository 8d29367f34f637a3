/**
 * Whether a sign-in asks for DPoP-bound tokens (RFC 9449; MCP's DPoP extension, SEP-1932). `auto` (the default):
 * when the MCP server offers the DPoP scheme in its 401 (or the credential being replaced was bound) and its
 * authorization server takes ES256 proofs; a server that offers only Bearer keeps getting bearer tokens, which is
 * all it can check. `require`: DPoP or nothing (a server without it is refused, and bearer tokens the authorization
 * server hands out anyway are not kept). `off`: never.
 */

import { type AuthorizationServer, supportsDpop } from "../../oauth/index.ts";
import type { CredentialRecord, CredentialStore } from "../../vault/index.ts";
import type { UnauthorizedHints } from "./challenge.ts";
import { McpAuthError } from "./errors.ts";
import { displayMcpServerUrl } from "./server-url.ts";

export type DpopPolicy = "auto" | "require" | "off";

export function wantsDpop(
  policy: DpopPolicy | undefined,
  hints: UnauthorizedHints,
  as: AuthorizationServer,
  canonicalUri: string,
): boolean {
  if (policy === "off") return false;
  if (policy === "require") {
    if (supportsDpop(as)) return true;
    throw new McpAuthError(
      "dpop_unsupported",
      `The authorization server ${as.issuer} of the MCP server ${displayMcpServerUrl(canonicalUri)} does not take DPoP proofs (ES256), and this host requires DPoP-bound tokens (dpop: "require"). Allow bearer tokens (dpop: "auto"), or use a server that supports RFC 9449.`,
    );
  }
  return hints.dpop === true && supportsDpop(as);
}

/** Under `require`, tokens the server did not bind are deleted again and refused (they would travel as bearer). */
export async function assertBound(
  policy: DpopPolicy | undefined,
  record: CredentialRecord,
  store: CredentialStore,
  canonicalUri: string,
): Promise<CredentialRecord> {
  if (policy !== "require" || record.tokens.dpopKey) return record;
  await store.delete({ subject: record.subject, issuer: record.issuer, resource: record.resource });
  throw new McpAuthError(
    "dpop_not_bound",
    `The authorization server ${record.issuer} answered with bearer tokens for the MCP server ${displayMcpServerUrl(canonicalUri)} although DPoP was asked for; they were not kept, since this host requires DPoP-bound tokens. Ask the server's operator to enable DPoP for this client.`,
  );
}
