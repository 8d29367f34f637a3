/** `agentauth vault list|revoke|delete`: what is stored (never a secret), and how to get rid of it. */

import type { AgentAuthError } from "../../core/errors.ts";
import { agentauthHome } from "../../core/home.ts";
import { peerText } from "../../core/index.ts";
import { deleteStoredRegistration, isRegistrationRecord, logout } from "../../oauth/index.ts";
import { presetNamed, resolveProvider } from "../../providers/index.ts";
import {
  openExistingVault,
  VaultCorruptError,
  VaultKeyError,
  type VaultStore,
  vaultDbPath,
} from "../../vault/index.ts";
import type { CredentialListing, CredentialRecord } from "../../vault/types.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, jsonLine, UsageError } from "../io.ts";
import { formatJson, formatTable } from "./vault-format.ts";
import { idsAsPositionals } from "./vault-ids.ts";
import { reencrypt } from "./vault-reencrypt.ts";

export async function vaultCommand(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseFlags({
    args: idsAsPositionals(rest),
    options: { json: { type: "boolean", default: false } },
    strict: true,
    allowPositionals: true,
  });
  switch (sub) {
    case "list":
      if (positionals.length > 0) throw new UsageError("vault list takes no arguments");
      return list(io, values.json);
    case "revoke":
    case "delete": {
      const id = positionals[0];
      if (!id || positionals.length > 1)
        throw new UsageError(`vault ${sub} needs exactly one <id> (see 'agentauth vault list')`);
      return sub === "delete" ? remove(io, id, values.json) : revoke(io, id, values.json);
    }
    case "reencrypt":
      if (positionals.length > 0) throw new UsageError("vault reencrypt takes no arguments");
      return reencrypt(io, values.json);
    default:
      throw new UsageError(`unknown vault command '${sub ?? ""}'`);
  }
}

/** Read-only: opens an existing vault without creating a folder, database or key; never decrypts. */
async function list(io: CliIo, json: boolean): Promise<number> {
  const store = openExistingVault({ env: io.env, readOnly: true });
  if (!store) {
    const path = vaultDbPath(agentauthHome(io.env));
    io.stdout(json ? "[]\n" : `The vault does not exist yet (${path}); it is empty.\n`);
    return EXIT.ok;
  }
  try {
    const listing = await store.listReport();
    io.stdout(json ? formatJson(listing) : formatTable(listing));
    return EXIT.ok;
  } finally {
    await store.close();
  }
}

async function withWritableVault(
  io: CliIo,
  id: string,
  json: boolean,
  run: (store: VaultStore, where: Where) => Promise<number>,
): Promise<number> {
  const store = openExistingVault({ env: io.env, readOnly: false });
  if (!store) return noSuchId(io, id, json);
  try {
    const where = locate(await store.listReport(), id);
    if (!where) return noSuchId(io, id, json);
    return await run(store, where);
  } finally {
    await store.close();
  }
}

/** Deletes by id without decrypting, so it works on any row, readable or not. */
function remove(io: CliIo, id: string, json: boolean): Promise<number> {
  return withWritableVault(io, id, json, async (store, where) => {
    await store.deleteById(id);
    if (json) io.stdout(jsonLine({ id, revoked: false, deleted: true }));
    else io.stdout(`Deleted ${id} (not revoked at ${where.issuer}).\n`);
    return EXIT.ok;
  });
}

function revoke(io: CliIo, id: string, json: boolean): Promise<number> {
  return withWritableVault(io, id, json, async (store, where) => {
    let record: Awaited<ReturnType<VaultStore["getById"]>>;
    try {
      record = where.unreadable ? undefined : await store.getById(id);
    } catch (error) {
      if (!unreadableRow(error, id)) throw error;
      if ((error as AgentAuthError).code === "vault_key_unknown") {
        // The row names a key this process does not have: a configuration problem (AGENTAUTH_VAULT_KEY unset or
        // another key file), not damage. The right key would revoke it properly, so nothing is deleted.
        return failure(
          io,
          json,
          "vault_key_unknown",
          `${id} was sealed with a vault key this environment does not have, so its tokens cannot be ` +
            "read to revoke them. Set AGENTAUTH_VAULT_KEY (or restore vault.key) to the key it was written with " +
            `and retry, or run 'agentauth vault delete ${id}' to forget it without revoking.`,
        );
      }
      // vault_decrypt_failed (the key id matches, so the row itself was altered) or vault_record_corrupt.
      where.unreadable = (error as AgentAuthError).code;
    }
    if (!record) {
      // Revoking needs the tokens; a row whose tokens cannot be read can only be forgotten. The corrupt-row error
      // tells the user to delete it, so revoke does exactly that rather than leave the row in place.
      await store.deleteById(id);
      if (json) {
        const unreadable = where.unreadable ?? "unreadable";
        io.stdout(jsonLine({ id, revoked: false, deleted: true, unreadable }));
        return EXIT.ok;
      }
      io.stdout(
        `Deleted ${id}, not revoked at ${where.issuer}: its stored tokens cannot be read ` +
          `(${where.unreadable ?? "unreadable"}), so they cannot be sent for revocation. They stay valid there ` +
          "until they expire; sign in again with 'agentauth login' if you still need access.\n",
      );
      return EXIT.ok;
    }
    return revokeReadable(io, store, record, json);
  });
}

/** Revocation through the credential's provider (rebuilt from its stored ref and client registration). */
async function revokeReadable(
  io: CliIo,
  store: VaultStore,
  record: CredentialRecord,
  json: boolean,
): Promise<number> {
  const { id } = record;
  const at = atWhom(record);
  if (isRegistrationRecord(record)) {
    // A client registration (src/oauth/registration-store.ts), not a sign-in: RFC 7592 delete, then forget it.
    const done = await deleteStoredRegistration(store, record);
    if (json) {
      io.stdout(jsonLine({ id, revoked: done.unregistered, deleted: done.deleted }));
    } else if (done.unregistered) {
      io.stdout(`Removed the client registration ${id} at ${at} and deleted it.\n`);
    } else {
      io.stdout(
        `Deleted the client registration ${id} locally; ${at} did not confirm removing the client` +
          `${done.status ? ` (HTTP ${done.status})` : ""}. The next sign-in registers a new one.\n`,
      );
    }
    return EXIT.ok;
  }
  const key = { subject: record.subject, issuer: record.issuer, resource: record.resource };
  const result = await logout({ store, key, providers: resolveProvider });
  if (result.manageUrl) {
    const url = peerText(result.manageUrl, { max: 300 });
    if (json) io.stdout(jsonLine({ id, revoked: false, deleted: result.deleted, manageUrl: url }));
    else {
      io.stdout(
        `Deleted ${id} locally. ${at} has no API to revoke access, so the app keeps it until you remove it at\n` +
          `  ${url}\n`,
      );
    }
    return EXIT.ok;
  }
  if (!result.revoked && result.deleted && !result.error) {
    // No revocation API and no page to point at (a generic server without either): deleted, said plainly.
    if (json) io.stdout(jsonLine({ id, revoked: false, deleted: true }));
    else {
      io.stdout(
        `Deleted ${id} locally. ${at} has no API to revoke access, so the app keeps it until you remove it ` +
          "in the provider's settings.\n",
      );
    }
    return EXIT.ok;
  }
  if (!result.revoked) {
    const why = peerText(result.error?.message ?? "unknown error", { multiline: true, max: 2000 });
    const code = (result.error as AgentAuthError | undefined)?.code ?? "revocation_failed";
    const message =
      `could not revoke ${id} at ${at}: ${why}\n` +
      `The credential is kept; retry later, or run 'agentauth vault delete ${id}' to forget it without revoking.`;
    return failure(io, json, code, message);
  }
  if (json) io.stdout(jsonLine({ id, revoked: true, deleted: result.deleted }));
  else io.stdout(`Revoked ${id} at ${at} and deleted it.\n`);
  return EXIT.ok;
}

/** "GitHub (https://github.com/login/oauth)" for a preset's credential, else the issuer. */
function atWhom(record: CredentialRecord): string {
  const preset = record.provider ? presetNamed(record.provider.name) : undefined;
  const issuer = peerText(record.issuer, { max: 200 });
  return preset ? `${preset.displayName} (${issuer})` : issuer;
}

interface Where {
  issuer: string;
  /** The error code when the row is known to be unreadable. */
  unreadable?: string;
}

function locate(listing: CredentialListing, id: string): Where | undefined {
  const readable = listing.credentials.find((c) => c.id === id);
  if (readable) return { issuer: peerText(readable.issuer) };
  const damaged = listing.unreadable.find((c) => c.id === id);
  if (damaged)
    return { issuer: peerText(damaged.issuer ?? "its server"), unreadable: damaged.code };
  return undefined;
}

/** Errors that mean "this row's tokens cannot be read", as opposed to the vault itself failing. */
function unreadableRow(error: unknown, id: string): boolean {
  return (
    (error instanceof VaultCorruptError || error instanceof VaultKeyError) && error.recordId === id
  );
}

function noSuchId(io: CliIo, id: string, json: boolean): number {
  return failure(
    io,
    json,
    "credential_not_found",
    `no credential with id ${peerText(id, { max: 80 })}; run 'agentauth vault list' to see the ids.`,
  );
}

/** A failure the command explains itself: `agentauth: …` on stderr, or the JSON error on stdout under --json. */
function failure(io: CliIo, json: boolean, code: string, message: string): number {
  if (json) io.stdout(jsonLine({ error: { code, message } }));
  else io.stderr(`agentauth: ${message}\n`);
  return EXIT.failure;
}
