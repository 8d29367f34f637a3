/** `agentauth vault list|revoke|delete`: what is stored (never a secret), and how to get rid of it. */

import { parseArgs } from "node:util";
import { logout } from "../../oauth/index.ts";
import { openVault } from "../../vault/index.ts";
import type { CredentialSummary } from "../../vault/types.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";

export const VAULT_USAGE = `agentauth vault list [--json]      what the vault holds (ids, accounts, expiry; never a token)
agentauth vault revoke <id>        revoke at the authorization server (RFC 7009), then delete
agentauth vault delete <id>        forget locally without revoking`;

export async function vaultCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: idsAsPositionals(rest),
    options: { json: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: true,
  });
  const store = openVault({ env: io.env });
  try {
    switch (sub) {
      case "list": {
        if (positionals.length > 0) throw new UsageError("vault list takes no arguments");
        const rows = await store.list();
        io.stdout(values.json ? `${JSON.stringify(rows)}\n` : formatTable(rows));
        return EXIT.ok;
      }
      case "revoke":
      case "delete": {
        const id = positionals[0];
        if (!id || positionals.length > 1)
          throw new UsageError(`vault ${sub} needs exactly one <id> (see 'agentauth vault list')`);
        const record = await store.getById(id);
        if (!record) {
          io.stderr(`agentauth: no credential with id ${id}\n`);
          return EXIT.failure;
        }
        const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
        if (sub === "delete") {
          await store.delete(key);
          io.stdout(`Deleted ${id} (not revoked at ${record.issuer}).\n`);
          return EXIT.ok;
        }
        const result = await logout({ store, key });
        if (!result.revoked) {
          io.stderr(
            `agentauth: could not revoke ${id} at ${record.issuer}: ${result.error?.message ?? "unknown error"}\n` +
              `The credential is kept; run 'agentauth vault delete ${id}' to forget it without revoking.\n`,
          );
          return EXIT.failure;
        }
        io.stdout(`Revoked ${id} at ${record.issuer} and deleted it.\n`);
        return EXIT.ok;
      }
      default:
        throw new UsageError(`unknown vault command '${sub ?? ""}'`);
    }
  } finally {
    await store.close();
  }
}

/** Vault ids are base64url, so one may begin with "-": move such ids behind "--" so parseArgs does not read them as flags. */
const DASH_ID = /^-[A-Za-z0-9_][A-Za-z0-9_-]{10}$/;

function idsAsPositionals(args: string[]): string[] {
  const end = args.includes("--") ? args.indexOf("--") : args.length;
  const head = args.slice(0, end);
  const ids = head.filter((arg) => DASH_ID.test(arg));
  if (ids.length === 0) return args;
  return [...head.filter((arg) => !DASH_ID.test(arg)), "--", ...ids, ...args.slice(end + 1)];
}

function formatTable(rows: CredentialSummary[]): string {
  if (rows.length === 0) return "The vault is empty.\n";
  const lines = rows.map((r) => [
    r.id,
    r.account.label ?? r.subject,
    r.issuer,
    r.resource || "-",
    r.status,
    r.expiresAt ? new Date(r.expiresAt).toISOString() : "-",
    r.has.refreshToken ? "yes" : "no",
  ]);
  const header = ["ID", "ACCOUNT", "ISSUER", "RESOURCE", "STATUS", "EXPIRES", "REFRESH"];
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const fmt = (cells: string[]) =>
    `${cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}\n`;
  return fmt(header) + lines.map(fmt).join("");
}
