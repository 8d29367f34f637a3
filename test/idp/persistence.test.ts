/**
 * The embedded server's data folder: keys and a storage snapshot survive a restart on the same port, so refresh
 * tokens keep working and earlier access tokens still verify; unreadable files stop the start with a typed error.
 */

import assert from "node:assert/strict";
import { chmodSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { Logger } from "../../src/core/log.ts";
import { silentLogger } from "../../src/core/log.ts";
import { stateWriter } from "../../src/idp/data-dir.ts";
import {
  IdpStateError,
  KEYS_FILE,
  type RunningIdp,
  STATE_FILE,
  startIdp,
} from "../../src/idp/index.ts";
import { MemoryStorage, memoryAdapterFactory } from "../../src/idp/memory-adapter.ts";
import { authorizationUrl, authorizeAndRedeem, pkce, tokenRequest } from "../support/authorize.ts";
import { tempDir } from "../support/tmp.ts";
import { Browser } from "./browser.ts";

const RESOURCE = "https://api.example.test/";

async function start(dataDir: string, port = 0): Promise<RunningIdp> {
  return startIdp({ autoApproveAs: "alice", dataDir, port });
}

async function signIn(issuer: string) {
  const answer = await authorizeAndRedeem(
    issuer,
    { scope: "openid offline_access read", resource: RESOURCE },
    { resource: RESOURCE },
  );
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return {
    accessToken: String(answer.body.access_token),
    refreshToken: String(answer.body.refresh_token),
  };
}

function verify(issuer: string, accessToken: string) {
  return jwtVerify(accessToken, createRemoteJWKSet(new URL(`${issuer}/jwks`)), {
    issuer,
    audience: RESOURCE,
    typ: "at+jwt",
  });
}

/** A restart on the same data folder; a port taken since would fail the test loudly (EADDRINUSE), not flakily. */
test("[IDP-persistence-restart] after a restart on the same folder and port, the refresh token works and an earlier access token verifies", async () => {
  const dir = tempDir();
  const first = await start(dir);
  const { issuer, port } = first;
  const tokens = await signIn(issuer);
  await first.close();

  for (const file of [KEYS_FILE, STATE_FILE]) {
    assert.equal(statSync(join(dir, file)).mode & 0o777, 0o600, `${file} is owner-only`);
  }
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith(".tmp")),
    [],
    "no temp files left behind",
  );

  const second = await start(dir, port);
  try {
    assert.equal(second.issuer, issuer);
    const { payload } = await verify(second.issuer, tokens.accessToken);
    assert.equal(payload.sub, "alice");
    const refreshed = await tokenRequest(second.issuer, {
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
      resource: RESOURCE,
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.refresh_token, tokens.refreshToken, "still rotated");
    assert.equal(
      (await verify(second.issuer, String(refreshed.body.access_token))).payload.sub,
      "alice",
    );
  } finally {
    await second.close();
  }

  // The rotation made on the second run was saved too: the old refresh token is now a reuse.
  const third = await start(dir, port);
  try {
    const reuse = await tokenRequest(third.issuer, {
      grant_type: "refresh_token",
      refresh_token: tokens.refreshToken,
    });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.error, "invalid_grant");
  } finally {
    await third.close();
  }
});

test("[IDP-persistence-restart] without a data folder nothing survives: a new server does not know the refresh token", async () => {
  const first = await startIdp({ autoApproveAs: "alice" });
  const { port } = first;
  const { refreshToken } = await signIn(first.issuer);
  await first.close();
  const second = await startIdp({ autoApproveAs: "alice", port });
  try {
    const answer = await tokenRequest(second.issuer, {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
    });
    assert.equal(answer.body.error, "invalid_grant");
  } finally {
    await second.close();
  }
});

test("[IDP-persistence-session] a browser signed in before the restart is still signed in after it (cookie keys and session kept)", async () => {
  const dir = tempDir();
  const first = await startIdp({ dataDir: dir });
  const { issuer, port } = first;
  const browser = new Browser();
  const authorize = async () =>
    authorizationUrl(issuer, (await pkce()).challenge, { scope: "openid profile" });
  const login = await browser.visit(await authorize(), issuer);
  const loginAction = /<form method="post" action="([^"]+\/login)"/.exec(login.html)?.[1];
  assert.ok(loginAction, login.html);
  const consent = await browser.visit(new URL(loginAction, issuer), issuer, {
    login: "carol",
    password: "carol",
  });
  const allow = /<form method="post" action="([^"]+\/confirm)"/.exec(consent.html)?.[1];
  assert.ok(allow, consent.html);
  const done = await browser.visit(new URL(allow, issuer), issuer, {});
  assert.ok(done.location?.searchParams.get("code"));
  await first.close();

  const second = await startIdp({ dataDir: dir, port });
  try {
    // Native clients are asked for consent every time (oidc-provider's policy), but the sign-in is remembered.
    const again = await browser.visit(await authorize(), issuer);
    assert.equal(again.status, 200);
    assert.match(again.html, /You are signed in as <strong>Carol Danvers \(carol\)<\/strong>/);
    assert.doesNotMatch(again.html, /action="[^"]+\/login"/, "no sign-in form");
    const stranger = await new Browser().visit(await authorize(), issuer);
    assert.match(stranger.html, /action="[^"]+\/login"/, "another browser still has to sign in");
  } finally {
    await second.close();
  }
});

test("[IDP-persistence-issuer] a snapshot saved by another issuer (the port changed) is dropped: users sign in again", async () => {
  const dir = tempDir();
  const first = await start(dir);
  const { refreshToken } = await signIn(first.issuer);
  await first.close();
  // Another port: rewrite the saved issuer rather than guess which port is free.
  const file = join(dir, STATE_FILE);
  const saved = JSON.parse(readFileSync(file, "utf8")) as { issuer: string };
  writeFileSync(file, JSON.stringify({ ...saved, issuer: "http://127.0.0.1:1" }), { mode: 0o600 });
  const second = await start(dir, first.port);
  try {
    const answer = await tokenRequest(second.issuer, {
      grant_type: "refresh_token",
      refresh_token: refreshToken,
    });
    assert.equal(answer.body.error, "invalid_grant");
  } finally {
    await second.close();
  }
});

test("[IDP-persistence-files] a loosened state file is made owner-only again on start", async () => {
  const dir = tempDir();
  const first = await start(dir);
  await signIn(first.issuer);
  await first.close();
  chmodSync(join(dir, STATE_FILE), 0o644);
  chmodSync(join(dir, KEYS_FILE), 0o644);
  const second = await start(dir, first.port);
  await second.close();
  assert.equal(statSync(join(dir, STATE_FILE)).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, KEYS_FILE)).mode & 0o777, 0o600);
});

const SECRET = "s3cr3t-refresh-token-value-that-must-not-leak";

/** Files that cannot be used, each with the file it breaks. */
const CORRUPT: { name: string; file: string; text: string }[] = [
  { name: "state: not JSON", file: STATE_FILE, text: `{"entries": [${SECRET}` },
  { name: "state: empty", file: STATE_FILE, text: "" },
  { name: "state: an array", file: STATE_FILE, text: `["${SECRET}"]` },
  {
    name: "state: a newer version",
    file: STATE_FILE,
    text: JSON.stringify({ version: 99, issuer: "x", entries: [] }),
  },
  {
    name: "state: an entry of the wrong shape",
    file: STATE_FILE,
    text: JSON.stringify({ version: 1, issuer: "x", entries: [[SECRET]] }),
  },
  {
    name: "state: an entry with a string expiry",
    file: STATE_FILE,
    text: JSON.stringify({
      version: 1,
      issuer: "x",
      entries: [["RefreshToken:abc", { jti: SECRET }, "tomorrow"]],
    }),
  },
  { name: "keys: not JSON", file: KEYS_FILE, text: `${SECRET}` },
  {
    name: "keys: a public key only",
    file: KEYS_FILE,
    text: JSON.stringify({
      version: 1,
      signingKeys: [{ kty: "EC", crv: "P-256", kid: "k", x: "AAAA", y: "AAAA" }],
      cookieKeys: ["c".repeat(43)],
    }),
  },
  {
    name: "keys: a private key that is not a P-256 point",
    file: KEYS_FILE,
    text: JSON.stringify({
      version: 1,
      signingKeys: [{ kty: "EC", crv: "P-256", kid: "k", x: "AAAA", y: "AAAA", d: SECRET }],
      cookieKeys: ["c".repeat(43)],
    }),
  },
  {
    name: "keys: no cookie keys",
    file: KEYS_FILE,
    text: JSON.stringify({ version: 1, signingKeys: [], cookieKeys: [] }),
  },
];

test("[IDP-persistence-corrupt] an unreadable state or keys file stops the start with idp_state_unreadable naming the file and what to do", async () => {
  for (const corrupt of CORRUPT) {
    const dir = tempDir();
    // A good folder first, so the other file is valid and only the broken one is to blame.
    const good = await start(dir);
    await signIn(good.issuer);
    await good.close();
    const path = join(dir, corrupt.file);
    writeFileSync(path, corrupt.text, { mode: 0o600 });
    await assert.rejects(start(dir, good.port), (error: unknown) => {
      assert.ok(error instanceof IdpStateError, `${corrupt.name}: ${String(error)}`);
      assert.equal(error.code, "idp_state_unreadable");
      assert.equal(error.file, path);
      assert.ok(error.message.includes(path), `${corrupt.name}: names the file`);
      assert.match(error.message, /Delete that file .* or start over with --fresh/);
      assert.ok(!error.message.includes(SECRET), `${corrupt.name}: never echoes the contents`);
      assert.ok(!JSON.stringify(error).includes(SECRET));
      return true;
    });
    // The failed start left nothing listening: the same port starts again once the file is gone.
    rmSync(path);
    const again = await start(dir, good.port);
    await again.close();
  }
});

test("[IDP-persistence-corrupt] a data folder path that is a file is refused with a typed error", async () => {
  const dir = tempDir();
  const file = join(dir, "not-a-folder");
  writeFileSync(file, "x");
  await assert.rejects(start(file), (error: unknown) => {
    assert.ok(error instanceof IdpStateError);
    assert.equal(error.code, "idp_state_unreadable");
    assert.equal(error.file, file);
    assert.match(error.message, /cannot use the data folder .*Choose another folder/);
    return true;
  });
});

// --- The pieces: the debounced writer and the storage restore ---

test("[IDP-persistence-writer] many changes, one snapshot: flush writes the latest state once; a failed write is logged, not thrown", async () => {
  const dir = tempDir();
  let snapshots = 0;
  const logs: { event: string; fields: unknown }[] = [];
  const logger = {
    ...silentLogger,
    error: (event: string, fields?: unknown) => void logs.push({ event, fields }),
  } as Logger;
  let counter = 0;
  // A delay no test waits for: only flush() writes here.
  const writer = stateWriter({
    dir,
    logger,
    delayMs: 3_600_000,
    snapshot: () => {
      snapshots++;
      return {
        issuer: "http://127.0.0.1:1",
        entries: [{ key: "Grant:g", payload: { counter }, expiresAt: Number.POSITIVE_INFINITY }],
      };
    },
  });
  for (counter = 1; counter <= 50; counter++) writer.schedule();
  await writer.flush();
  assert.equal(snapshots, 1);
  const saved = JSON.parse(readFileSync(join(dir, STATE_FILE), "utf8"));
  assert.deepEqual(
    saved.entries,
    [["Grant:g", { counter: 51 }, null]],
    "Infinity is saved as null",
  );
  await writer.flush();
  assert.equal(snapshots, 1, "nothing new, nothing written");

  rmSync(dir, { recursive: true });
  writer.schedule();
  await writer.flush();
  assert.equal(logs.length, 1);
  assert.equal(logs[0]?.event, "idp.state_write_failed");
  assert.deepEqual(Object.keys(logs[0]?.fields as object).sort(), ["code", "file"]);
});

test("[IDP-persistence-restore] a restored storage drops expired entries, rebuilds its indexes and keeps the registration cap", async () => {
  const now = Date.now();
  const storage = new MemoryStorage({ maxRegistrations: 1 });
  storage.restore([
    { key: "DeviceCode:d1", payload: { userCode: "ABCD", grantId: "g1" }, expiresAt: now + 60_000 },
    { key: "RefreshToken:r1", payload: { grantId: "g1" }, expiresAt: now + 60_000 },
    { key: "RefreshToken:old", payload: { grantId: "g2" }, expiresAt: now - 1 },
    { key: "Client:c1", payload: { client_id: "c1" }, expiresAt: now + 60_000 },
    { key: "Client:c2", payload: { client_id: "c2" }, expiresAt: now + 60_000 },
  ]);
  assert.deepEqual(
    storage.live().map((e) => e.key),
    ["DeviceCode:d1", "RefreshToken:r1", "Client:c2"],
    "expired and over-cap entries are gone",
  );
  const Adapter = memoryAdapterFactory(storage);
  assert.deepEqual(await new Adapter("DeviceCode").findByUserCode("ABCD"), {
    userCode: "ABCD",
    grantId: "g1",
  });
  await new Adapter("RefreshToken").revokeByGrantId("g1");
  assert.deepEqual(
    storage.live().map((e) => e.key),
    ["Client:c2"],
    "the grant index was rebuilt",
  );
});
