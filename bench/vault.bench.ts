/**
 * Encrypted vault vs plain node:sqlite, same run, same machine: writes and reads per second.
 *
 * Encrypted: SqliteCredentialStore (AES-256-GCM, validation, async API) on a temp file. Plain: the same schema,
 * pragmas (WAL, synchronous=FULL, busy timeout) and rows through bare prepared statements, tokens stored as clear
 * JSON. Each phase runs for a fixed time, the order alternates between rounds, and medians are reported.
 *
 * Run: node_modules/.bin/node bench/vault.bench.ts
 */

import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { secret } from "../src/core/secret.ts";
import { type CredentialInput, Keyring, SqliteCredentialStore } from "../src/vault/index.ts";
import { openVaultDatabase } from "../src/vault/sqlite-schema.ts";

const ROUNDS = 5;
const ROWS = 200;
const WRITE_MS = 1000;
const READ_MS = 500;

const makeRow = (i: number): CredentialInput => ({
  subject: `user-${i}`,
  issuer: "https://as.example.com",
  resource: "https://mcp.example.com",
  clientId: "agentauth-cli",
  // Realistic sizes: JWT access and ID tokens of about a kilobyte, an opaque refresh token.
  tokens: {
    accessToken: secret(randomBytes(600).toString("base64url")),
    refreshToken: secret(randomBytes(48).toString("base64url")),
    idToken: secret(randomBytes(700).toString("base64url")),
    tokenType: "Bearer",
  },
  expiresAt: Date.now() + 3_600_000,
  scopes: ["openid", "profile", "tools:read"],
  account: {
    label: "work",
    name: `User ${i}`,
    email: `user${i}@example.com`,
    organization: "Example",
  },
  status: "active",
});
// Two generations of tokens per row, alternated, so every write changes the stored bytes on both
// sides (as a token refresh does): rewriting identical rows would flatter the plain baseline,
// whose bytes would otherwise never change, on storage that is cheaper for unchanged pages.
const generations = [0, 1].map(() => Array.from({ length: ROWS }, (_, i) => makeRow(i)));
const rowAt = (i: number): CredentialInput => generations[Math.floor(i / ROWS) % 2]![i % ROWS]!;

const dir = mkdtempSync(join(tmpdir(), "agentauth-vault-bench-"));
try {
  const encrypted = new SqliteCredentialStore({
    path: join(dir, "encrypted.db"),
    keyring: new Keyring(randomBytes(32)),
  });
  const plain = plainStore(join(dir, "plain.db"));

  const encryptedOps = {
    write: async (i: number) => void (await encrypted.put(rowAt(i))),
    read: async (i: number) => {
      const record = await encrypted.get(rowAt(i));
      if (!record?.tokens.accessToken) throw new Error("encrypted read missed a row");
    },
  };
  const plainOps = {
    write: async (i: number) => plain.write(rowAt(i)),
    read: async (i: number) => plain.read(rowAt(i)),
  };

  // Every row exists before the first read phase, however few writes a loaded machine manages in WRITE_MS.
  for (let i = 0; i < ROWS; i++) {
    await encryptedOps.write(i);
    await plainOps.write(i);
  }

  const results = {
    encrypted: { write: [] as number[], read: [] as number[] },
    plain: { write: [] as number[], read: [] as number[] },
  };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first so warm-up, page cache and checkpoints do not favour one side.
    const order =
      round % 2 === 0 ? (["encrypted", "plain"] as const) : (["plain", "encrypted"] as const);
    for (const phase of ["write", "read"] as const) {
      for (const name of order) {
        const ops = name === "encrypted" ? encryptedOps : plainOps;
        results[name][phase].push(
          await opsPerSecond(ops[phase], phase === "write" ? WRITE_MS : READ_MS),
        );
      }
    }
  }
  await encrypted.close();
  plain.close();

  const summary = {
    writeEncrypted: median(results.encrypted.write),
    writePlain: median(results.plain.write),
    readEncrypted: median(results.encrypted.read),
    readPlain: median(results.plain.read),
  };
  const writeRatio = summary.writeEncrypted / summary.writePlain;
  const readRatio = summary.readEncrypted / summary.readPlain;
  // Each round's two sides ran back to back under the same load: the median of their ratios is the steadier figure
  // on a shared machine.
  const perRound = (phase: "write" | "read") =>
    median(results.encrypted[phase].map((enc, i) => enc / results.plain[phase][i]!));
  console.log(
    `vault bench: ${ROUNDS} rounds, ${ROWS} rows, ${WRITE_MS} ms writes / ${READ_MS} ms reads per round`,
  );
  console.log(
    `${"op".padEnd(6)}${"encrypted ops/s".padStart(17)}${"plain ops/s".padStart(14)}${"enc/plain".padStart(11)}${"per-round".padStart(11)}`,
  );
  for (const [op, enc, pl, ratio] of [
    ["write", summary.writeEncrypted, summary.writePlain, writeRatio],
    ["read", summary.readEncrypted, summary.readPlain, readRatio],
  ] as const) {
    console.log(
      `${op.padEnd(6)}${fmt(enc).padStart(17)}${fmt(pl).padStart(14)}${ratio.toFixed(2).padStart(11)}${perRound(op).toFixed(2).padStart(11)}`,
    );
  }
  console.log(
    JSON.stringify({
      bench: "vault",
      rounds: ROUNDS,
      rows: ROWS,
      unit: "ops/s",
      ...summary,
      writeRatio: Number(writeRatio.toFixed(3)),
      readRatio: Number(readRatio.toFixed(3)),
      writeRatioPerRound: Number(perRound("write").toFixed(3)),
      readRatioPerRound: Number(perRound("read").toFixed(3)),
      rawRounds: results,
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** Runs `op` back to back for `ms` and returns operations per second. */
async function opsPerSecond(op: (i: number) => Promise<void>, ms: number): Promise<number> {
  const start = performance.now();
  let count = 0;
  while (performance.now() - start < ms) await op(count++);
  return Math.round((count / (performance.now() - start)) * 1000);
}

/** The baseline: identical file setup and schema, bare statements, tokens as clear JSON in the same column. */
function plainStore(path: string) {
  const db = openVaultDatabase(path);
  const upsert =
    db.prepare(`INSERT INTO credentials (subject, issuer, resource, id, client_id, status, expires_at,
      scopes, account, has_access, has_refresh, has_id, kid, nonce, ciphertext, version, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, 1, 'plain', '', ?, 1, ?, ?)
    ON CONFLICT (subject, issuer, resource) DO UPDATE SET client_id = excluded.client_id, status = excluded.status,
      expires_at = excluded.expires_at, scopes = excluded.scopes, account = excluded.account,
      ciphertext = excluded.ciphertext, version = credentials.version + 1, updated_at = excluded.updated_at
    RETURNING version`);
  const select = db.prepare(
    "SELECT * FROM credentials WHERE subject = ? AND issuer = ? AND resource = ?",
  );
  return {
    write(row: CredentialInput) {
      const tokens = JSON.stringify({
        accessToken: row.tokens.accessToken?.reveal(),
        refreshToken: row.tokens.refreshToken?.reveal(),
        idToken: row.tokens.idToken?.reveal(),
        tokenType: row.tokens.tokenType,
      });
      const now = Date.now();
      upsert.get(
        row.subject,
        row.issuer,
        row.resource,
        row.subject,
        row.clientId,
        row.status,
        row.expiresAt ?? null,
        JSON.stringify(row.scopes),
        JSON.stringify(row.account),
        tokens,
        now,
        now,
      );
    },
    read(row: CredentialInput) {
      const found = select.get(row.subject, row.issuer, row.resource);
      if (!found) throw new Error("plain read missed a row");
      // Decode the same JSON columns the store decodes, so the difference is encryption and validation.
      JSON.parse(String(found.scopes));
      JSON.parse(String(found.account));
      JSON.parse(String(found.ciphertext));
    },
    close: () => db.close(),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
