/** `agentauth vault list` output: the JSON array and the human table (never a token; peer text sanitised). */

import { peerText } from "../../core/display.ts";
import { isRegistrationRecord } from "../../oauth/index.ts";
import type { CredentialListing, CredentialSummary } from "../../vault/types.ts";
import { jsonLine } from "../io.ts";

/** The summaries, then each unreadable row with an `unreadable` marker (same array, so existing readers still work). */
export function formatJson(listing: CredentialListing): string {
  const damaged = listing.unreadable.map(({ code, message, ...rest }) => ({
    ...rest,
    unreadable: { code, message },
  }));
  return jsonLine([...listing.credentials, ...damaged]);
}

export function formatTable(listing: CredentialListing): string {
  const { unreadable } = listing;
  if (listing.credentials.length === 0 && unreadable.length === 0) return "The vault is empty.\n";
  // Client registrations (the MCP client's, under a reserved subject) are agentauth's own bookkeeping, not a
  // person's sign-in: one short line each after the table.
  const registrations = listing.credentials.filter(isRegistrationRecord);
  const rows = listing.credentials.filter((r) => !isRegistrationRecord(r));
  // Issuers, subjects and account labels came from authorization servers: sanitised before they reach a terminal.
  const lines = rows.map((r) => [
    r.id,
    peerText(r.subject, { max: 40 }),
    peerText(r.account.login ?? r.account.label ?? r.account.email ?? "-", { max: 40 }),
    peerText(r.issuer, { max: 80 }),
    providerOf(r),
    peerText(r.resource, { max: 80 }) || "-",
    r.status,
    r.expiresAt ? new Date(r.expiresAt).toISOString() : "-",
    r.has.refreshToken ? "yes" : "no",
  ]);
  for (const u of unreadable) {
    lines.push([
      peerText(u.id, { max: 40 }),
      peerText(u.subject ?? "?", { max: 40 }),
      "?",
      peerText(u.issuer ?? "?", { max: 80 }),
      "?",
      peerText(u.resource ?? "", { max: 80 }) || "-",
      "UNREADABLE",
      "-",
      "-",
    ]);
  }
  const header = [
    "ID",
    "SUBJECT",
    "ACCOUNT",
    "ISSUER",
    "PROVIDER",
    "RESOURCE",
    "STATUS",
    "EXPIRES",
    "REFRESH",
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cells: string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}\n`;
  const notes = unreadable.map(
    (u) =>
      `\n${peerText(u.id, { max: 40 })} cannot be read (${u.code}): ${peerText(u.message, { max: 300 })}\n` +
      `  Remove it with 'agentauth vault delete ${peerText(u.id, { max: 40 })}', then sign in again.\n`,
  );
  const kept = registrations.map((r) => {
    // The registration store labels its rows "client registration (<client name>)".
    const name = peerText(r.account.label ?? "client registration", { max: 80 });
    return `  ${r.id}  ${name} at ${peerText(r.issuer, { max: 80 })}\n`;
  });
  const bookkeeping =
    kept.length > 0
      ? `\nClient registrations agentauth keeps for MCP servers (not sign-ins; 'vault revoke <id>' removes one at its server):\n${kept.join("")}`
      : "";
  const table =
    lines.length > 0 ? fmt(header) + lines.map(fmt).join("") : "No sign-ins are stored.\n";
  return table + notes.join("") + bookkeeping;
}

/**
 * The preset that issued a credential ("github"), with its self-hosted server's host when it has one
 * ("github@github.example.com") and, when its origins are remapped (a proxy, a simulator), where its requests
 * really go ("github (via 127.0.0.1:8080)"): the refresh token is sent there, so it must not be hidden.
 * "-" for a plain discoverable server, whose issuer column says it all.
 */
function providerOf(row: CredentialSummary): string {
  const ref = row.provider;
  if (!ref) return "-";
  const host = URL.parse(ref.options?.host ?? "")?.host;
  const via = remappedHosts(ref.options?.origins);
  const name = host ? `${ref.name}@${host}` : ref.name;
  return peerText(via ? `${name} (via ${via})` : name, { max: 120 });
}

/** The distinct hosts a stored `origins` option (JSON: real origin → replacement) sends requests to. */
function remappedHosts(origins: string | undefined): string | undefined {
  if (!origins) return undefined;
  let map: unknown;
  try {
    map = JSON.parse(origins);
  } catch {
    return "unreadable origins";
  }
  if (typeof map !== "object" || map === null) return "unreadable origins";
  const hosts = new Set(Object.values(map).map((to) => URL.parse(String(to))?.host ?? String(to)));
  return hosts.size > 0 ? [...hosts].join(", ") : undefined;
}
