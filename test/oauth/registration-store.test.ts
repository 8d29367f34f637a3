/**
 * Dynamic registrations kept in the vault (src/oauth/registration-store.ts) against the real embedded authorization
 * server (oidc-provider, registration enabled) and real vault files: one registration per server and metadata across
 * callers and store handles, a registration the server forgot or that expired replaced once, hostile records
 * replaced rather than crashed on, and no registration secret in listings.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { Secret } from "../../src/core/secret.ts";
import {
  deleteStoredRegistration,
  discoverAuthorizationServer,
  forgetRegistration,
  isRegistrationRecord,
  REGISTRATION_SUBJECT,
  type RegistrationMetadata,
  registrationKey,
  storedRegistration,
} from "../../src/oauth/index.ts";
import {
  type CredentialStore,
  Keyring,
  MemoryCredentialStore,
  PostgresCredentialStore,
  SqliteCredentialStore,
} from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { skipWithoutPostgres, testPostgres } from "../support/postgres.ts";
import { tempDir } from "../support/tmp.ts";
import { newKey, rawDb } from "../vault/helpers.ts";

const PG = await testPostgres();
const idp = await useIdp();
const as = await discoverAuthorizationServer(idp.issuer);

const METADATA: RegistrationMetadata = {
  client_name: "registration-store test",
  application_type: "native",
  redirect_uris: ["http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

function sqliteStores(count: number): SqliteCredentialStore[] {
  const path = join(tempDir(), "vault.db");
  const keyring = new Keyring(Buffer.from(newKey(), "base64"));
  return Array.from({ length: count }, () => new SqliteCredentialStore({ path, keyring }));
}

async function closeAll(stores: CredentialStore[]): Promise<void> {
  for (const store of stores) await store.close();
}

/** Whether the authorization server still knows the client (RFC 7592 read with its registration access token). */
async function serverKnows(store: CredentialStore): Promise<number> {
  const record = await store.get(registrationKey(as.issuer, METADATA));
  const uri = record?.provider?.options?.registration_client_uri;
  assert.ok(uri && record?.tokens.accessToken);
  const response = await fetch(uri, {
    headers: { authorization: `Bearer ${record.tokens.accessToken.reveal()}` },
  });
  await response.arrayBuffer();
  return response.status;
}

test("[OAUTH-registration-store-once] twenty concurrent callers over two handles of one vault file register once; later callers reuse it", async () => {
  const stores = sqliteStores(2);
  try {
    const before = idp.memory().registrations;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        storedRegistration({ store: stores[i % 2] as CredentialStore, as, metadata: METADATA }),
      ),
    );
    assert.equal(idp.memory().registrations, before + 1, "the server saw one registration");
    const ids = new Set(results.map((r) => r.client.clientId));
    assert.equal(ids.size, 1);
    // The ten callers on one handle shared its one flight (which registered); the other handle's read it.
    const fresh = results.flatMap((r, i) => (r.reused ? [] : [i % 2]));
    assert.equal(fresh.length, 10);
    assert.equal(new Set(fresh).size, 1);
    const again = await storedRegistration({
      store: stores[1] as CredentialStore,
      as,
      metadata: METADATA,
    });
    assert.equal(again.reused, true);
    assert.equal(again.client.clientId, results[0]?.client.clientId);
    assert.equal(await serverKnows(stores[0] as CredentialStore), 200);
    assert.equal(idp.memory().registrations, before + 1);
  } finally {
    await closeAll(stores);
  }
});

test("[OAUTH-registration-store-per-metadata] another redirect URI or grant type is another registration, never a shared one", async () => {
  const store = new MemoryCredentialStore();
  const a = await storedRegistration({ store, as, metadata: METADATA });
  const b = await storedRegistration({
    store,
    as,
    metadata: {
      ...METADATA,
      redirect_uris: ["https://tool.example/oauth/callback"],
      application_type: "web",
    },
  });
  const c = await storedRegistration({
    store,
    as,
    metadata: { ...METADATA, grant_types: ["refresh_token", "authorization_code"] },
  });
  assert.notEqual(a.client.clientId, b.client.clientId);
  assert.equal(c.reused, true, "grant types compared as a set");
  assert.equal(c.client.clientId, a.client.clientId);
  const key = registrationKey(as.issuer, METADATA);
  assert.equal(key.subject, REGISTRATION_SUBJECT);
  assert.match(key.resource, /^urn:agentauth:registration:[0-9a-f]{64}$/);
});

test("[OAUTH-registration-store-forgotten] a registration the server no longer knows (RFC 7592 read says 401) is replaced by one new registration", async () => {
  const store = new MemoryCredentialStore();
  const first = await storedRegistration({ store, as, metadata: METADATA });
  // The server forgets the client, as a restarted in-memory authorization server would.
  await (
    idp.provider.Client as unknown as { adapter: { destroy(id: string): Promise<void> } }
  ).adapter.destroy(first.client.clientId);
  const before = idp.memory().registrations;
  const second = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(second.reused, false);
  assert.notEqual(second.client.clientId, first.client.clientId);
  assert.equal(idp.memory().registrations, before + 1, "one new registration");
  const stored = await store.get(registrationKey(as.issuer, METADATA));
  assert.equal(stored?.clientId, second.client.clientId);
  const third = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(third.reused, true);
  assert.equal(idp.memory().registrations, before + 1);
});

test("[OAUTH-registration-store-expired] a stored registration whose client secret expired (client_secret_expires_at) is replaced", async () => {
  const store = new MemoryCredentialStore();
  const first = await storedRegistration({ store, as, metadata: METADATA });
  const key = registrationKey(as.issuer, METADATA);
  const record = await store.get(key);
  assert.ok(record);
  await store.put({ ...record, expiresAt: Date.now() - 1_000 });
  const second = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(second.reused, false);
  assert.notEqual(second.client.clientId, first.client.clientId);
});

test("[OAUTH-registration-store-forget] forgetRegistration deletes the refused client only, never a newer one another process stored", async () => {
  const store = new MemoryCredentialStore();
  const first = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(await forgetRegistration(store, as.issuer, METADATA, "some-older-client"), false);
  assert.ok(await store.get(registrationKey(as.issuer, METADATA)));
  assert.equal(await forgetRegistration(store, as.issuer, METADATA, first.client.clientId), true);
  assert.equal(await store.get(registrationKey(as.issuer, METADATA)), undefined);
});

test("[OAUTH-registration-store-hostile] stored records with garbage or mismatched fields are replaced, not used and not crashed on", async () => {
  const key = registrationKey(as.issuer, METADATA);
  const base = {
    ...key,
    clientId: "planted-client",
    provider: { name: "client-registration" },
    tokens: { tokenType: "registration" },
    scopes: [],
    account: {},
    status: "active" as const,
  };
  const hostile = [
    { ...base, clientId: "" },
    { ...base, clientId: "evil\nclient" },
    { ...base, clientId: "x".repeat(5_000) },
    { ...base, tokens: { tokenType: "Bearer" } },
    { ...base, provider: { name: "github" } },
    { ...base, provider: undefined },
    { ...base, status: "login_required" as const },
    // A public client's record with a secret: not what this module writes.
    { ...base, tokens: { tokenType: "registration", clientSecret: new Secret("planted-secret") } },
  ];
  for (const input of hostile) {
    const store = new MemoryCredentialStore();
    await store.put(input);
    const got = await storedRegistration({ store, as, metadata: METADATA });
    assert.equal(got.reused, false, JSON.stringify(input.clientId.slice(0, 20)));
    assert.notEqual(got.client.clientId, "planted-client");
    assert.equal((await store.get(key))?.clientId, got.client.clientId);
  }
});

test("[OAUTH-registration-store-corrupt-row] a damaged registration row in a vault file is deleted by id and replaced", async (t) => {
  const [store] = sqliteStores(1) as [SqliteCredentialStore];
  t.after(() => store.close());
  await storedRegistration({ store, as, metadata: METADATA });
  const db = rawDb(store.path);
  t.after(() => db.close());
  db.prepare("UPDATE credentials SET status = ? WHERE subject = ?").run(
    "not-a-status",
    REGISTRATION_SUBJECT,
  );
  const got = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(got.reused, false);
  assert.equal(
    (await store.get(registrationKey(as.issuer, METADATA)))?.clientId,
    got.client.clientId,
  );
});

test("[OAUTH-registration-store-no-secrets] the registration access token and a client secret never appear in listings; the record reads as a client registration", async () => {
  const store = new MemoryCredentialStore();
  const { client } = await storedRegistration({ store, as, metadata: METADATA });
  const rat = client.registrationAccessToken?.reveal();
  assert.ok(rat, "the embedded server issues a registration access token");
  const listing = JSON.stringify(await store.listReport());
  assert.ok(!listing.includes(rat));
  const [summary] = await store.list({ subject: REGISTRATION_SUBJECT });
  assert.equal(summary?.account.label, "client registration (registration-store test)");
  assert.equal(summary?.provider?.name, "client-registration");
  assert.equal(summary?.has.refreshToken, false);
  assert.ok(!JSON.stringify(client).includes(rat), "Secret stays redacted in JSON");
});

test("[OAUTH-registration-store-processes] four OS processes over one vault file, released at once, register one client (the store's lease): the server saw one registration", async (t) => {
  const path = join(tempDir(), "vault.db");
  const key = newKey();
  // Created first, so the processes do not race to create the file's schema.
  await new SqliteCredentialStore({
    path,
    keyring: new Keyring(Buffer.from(key, "base64")),
  }).close();
  const before = idp.memory().registrations;
  const worker = fileURLToPath(new URL("./fixtures/registration-worker.ts", import.meta.url));
  const workers = Array.from({ length: 4 }, () => {
    const child = spawn(process.execPath, [worker, path, idp.issuer], {
      env: { PATH: process.env.PATH, REGISTRATION_WORKER_VAULT_KEY: key },
      stdio: ["pipe", "pipe", "pipe"],
    });
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    const ready = new Promise<void>((resolve) =>
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
        if (stderr.includes("ready\n")) resolve();
      }),
    );
    const exited = new Promise<string>((resolve, reject) =>
      child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(stderr)))),
    );
    return { child, ready, exited };
  });
  // All set up, then released together: the registrations would overlap without the lease.
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.stdin.end("go\n");
  const outputs = await Promise.all(workers.map((w) => w.exited.then((stdout) => ({ stdout }))));
  const answers = outputs.map((o) => JSON.parse(o.stdout) as { clientId: string; reused: boolean });
  assert.equal(idp.memory().registrations, before + 1, "one registration at the server");
  assert.equal(new Set(answers.map((a) => a.clientId)).size, 1);
  assert.equal(answers.filter((a) => !a.reused).length, 1);
});

test("[OAUTH-registration-store-postgres] three store handles on one PostgreSQL vault, asked at once, register one client; the record reads back through another handle", async (t) => {
  if (skipWithoutPostgres(t, PG)) return;
  const url = await PG.freshDatabase();
  const keyring = new Keyring(Buffer.from(newKey(), "base64"));
  const stores = Array.from({ length: 3 }, () => new PostgresCredentialStore({ url, keyring }));
  t.after(() => closeAll(stores));
  const before = idp.memory().registrations;
  const results = await Promise.all(
    stores.map((store) => storedRegistration({ store, as, metadata: METADATA })),
  );
  assert.equal(idp.memory().registrations, before + 1);
  assert.equal(new Set(results.map((r) => r.client.clientId)).size, 1);
  const again = await storedRegistration({
    store: stores[2] as CredentialStore,
    as,
    metadata: METADATA,
  });
  assert.equal(again.reused, true);
  assert.equal(await serverKnows(stores[0] as CredentialStore), 200);
});

test("[OAUTH-registration-store-delete] deleteStoredRegistration asks the server to delete the client (RFC 7592) and forgets it; a configuration endpoint on another origin gets no token", async (t) => {
  const store = new MemoryCredentialStore();
  await storedRegistration({ store, as, metadata: METADATA });
  const key = registrationKey(as.issuer, METADATA);
  const record = await store.get(key);
  assert.ok(record);
  const done = await deleteStoredRegistration(store, record);
  t.diagnostic(`the embedded server answered the RFC 7592 delete with HTTP ${done.status}`);
  assert.equal(done.deleted, true);
  assert.equal(await store.get(key), undefined);

  // A planted endpoint elsewhere: nothing is sent there, the record is still deleted.
  let hits = 0;
  const { createServer } = await import("node:http");
  const elsewhere = createServer((_req, res) => {
    hits++;
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
  const port = (elsewhere.address() as { port: number }).port;
  const planted = await store.put({
    ...record,
    provider: {
      name: "client-registration",
      options: { registration_client_uri: `http://localhost:${port}/reg/x` },
    },
  });
  const second = await deleteStoredRegistration(store, planted);
  assert.equal(second.unregistered, false);
  assert.equal(second.deleted, true);
  assert.equal(hits, 0, "the registration access token went nowhere else");
});

test("[OAUTH-registration-store-reserved-subject] a user credential a tool kit stored under the reserved subject (RAP user_id 'agentauth:client-registration') is not taken for a client registration", async () => {
  const store = new MemoryCredentialStore();
  // What the RAP tool kit stores for a user whose user_id is the reserved subject: {subject: user_id, issuer,
  // resource: the provider's resource}; a sign-in's record, with a real access token for an API.
  const userCredential = await store.put({
    subject: REGISTRATION_SUBJECT,
    issuer: as.issuer,
    resource: "https://api.example.test/",
    clientId: "tool-client",
    provider: { name: "mcp", options: {} },
    tokens: { tokenType: "Bearer", accessToken: new Secret("user-access-token") },
    scopes: ["read"],
    account: { label: "someone" },
    status: "active",
  });
  assert.equal(isRegistrationRecord(userCredential), false, "a sign-in is not a registration");
  await storedRegistration({ store, as, metadata: METADATA });
  const registration = await store.get(registrationKey(as.issuer, METADATA));
  assert.ok(registration);
  assert.equal(isRegistrationRecord(registration), true);
});

test("[OAUTH-registration-store-per-issuer] two authorization servers asked at once with the same metadata over one store each register their own client (the in-process single flight is per issuer too)", async () => {
  const other = await useIdp();
  const otherAs = await discoverAuthorizationServer(other.issuer);
  const store = new MemoryCredentialStore();
  const before = other.memory().registrations;
  const [first, second] = await Promise.all([
    storedRegistration({ store, as, metadata: METADATA }),
    storedRegistration({ store, as: otherAs, metadata: METADATA }),
  ]);
  assert.equal(other.memory().registrations, before + 1, "the second server saw its registration");
  assert.notEqual(first.client.clientId, second.client.clientId, "no client crosses servers");
  const stored = await store.get(registrationKey(otherAs.issuer, METADATA));
  assert.equal(stored?.clientId, second.client.clientId, "kept under the second server");
});

test("[OAUTH-registration-store-no-token-elsewhere] a stored record whose client configuration endpoint is on another origin never gets the registration access token (the RFC 7592 read is skipped)", async (t) => {
  let hits = 0;
  const { createServer } = await import("node:http");
  const elsewhere = createServer((_req, res) => {
    hits++;
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
  const port = (elsewhere.address() as { port: number }).port;
  const store = new MemoryCredentialStore();
  await storedRegistration({ store, as, metadata: METADATA });
  const key = registrationKey(as.issuer, METADATA);
  const record = await store.get(key);
  assert.ok(record?.tokens.accessToken);
  await store.put({
    ...record,
    provider: {
      name: "client-registration",
      options: { auth_method: "none", registration_client_uri: `http://127.0.0.1:${port}/reg/x` },
    },
  });
  const again = await storedRegistration({ store, as, metadata: METADATA });
  assert.equal(hits, 0, "nothing was sent to the other origin");
  assert.equal(again.reused, true, "an unverifiable record is kept, not replaced on a planted 404");
  assert.equal(again.client.clientId, record.clientId);
});

test("[OAUTH-registration-store-rotated-token] a server that issues a new registration access token in its RFC 7592 read answer (§2.1: the client MUST discard the old one) keeps one registration over many uses", async (t) => {
  // A real oidc-provider made to rotate on read, as RFC 7592 §2.1 allows (Jans' rotateClientRegistrationAccessTokenOnUsage):
  // the presented token is destroyed, the answer carries a new one.
  const { default: Provider } = await import("oidc-provider");
  const { createServer } = await import("node:http");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const provider = new Provider(issuer, {
    features: { registration: { enabled: true }, devInteractions: { enabled: false } },
  });
  let registrations = 0;
  let rotations = 0;
  provider.on("registration_create.success", () => registrations++);
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.method !== "GET" || !ctx.path.startsWith("/reg/") || ctx.status !== 200) return;
    const presented = String(ctx.get("authorization")).replace(/^Bearer /i, "");
    const old = await provider.RegistrationAccessToken.find(presented);
    if (!old) return;
    const client = await provider.Client.find(String(old.clientId));
    await old.destroy();
    // oidc-provider's typings omit the constructor's {client} argument (its own registration code passes it).
    const Token = provider.RegistrationAccessToken as unknown as new (init: {
      client: unknown;
    }) => { save(): Promise<string> };
    (ctx.body as Record<string, unknown>).registration_access_token = await new Token({
      client,
    }).save();
    rotations++;
  });
  server.on("request", provider.callback());
  const rotatingAs = await discoverAuthorizationServer(issuer);
  const store = new MemoryCredentialStore();
  const ids = new Set<string>();
  for (let i = 0; i < 4; i++) {
    const { client } = await storedRegistration({ store, as: rotatingAs, metadata: METADATA });
    ids.add(client.clientId);
  }
  assert.ok(rotations >= 1, "the server rotated the token on a read");
  assert.equal(registrations, 1, "the server saw one registration");
  assert.equal(ids.size, 1, "every use got the same client");

  // Two handles of one vault file reading at once: the first read rotates the token the second presents (401). That
  // is a rotation race, not a forgotten client: no new registration.
  const handles = sqliteStores(2);
  t.after(() => closeAll(handles));
  await storedRegistration({
    store: handles[0] as CredentialStore,
    as: rotatingAs,
    metadata: METADATA,
  });
  for (let round = 0; round < 3; round++) {
    await Promise.all(
      handles.map((h) => storedRegistration({ store: h, as: rotatingAs, metadata: METADATA })),
    );
  }
  assert.equal(registrations, 2, "one registration for the vault file, none from the race");
});

test("[OAUTH-registration-store-read-capped] an RFC 7592 read answer that never ends is cut at the size cap, not read until the timeout (a hostile or broken server cannot make the vault buffer without bound)", {
  timeout: 60_000,
}, async (t) => {
  const { createServer } = await import("node:http");
  let readClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    readClosed = resolve;
  });
  let sent = 0;
  const server = createServer((req, res) => {
    const origin = `http://${req.headers.host}`;
    if (req.method === "POST") {
      res.writeHead(201, { "content-type": "application/json" }).end(
        JSON.stringify({
          client_id: "endless-client",
          registration_access_token: "rat-endless",
          registration_client_uri: `${origin}/reg/endless-client`,
          redirect_uris: METADATA.redirect_uris,
          grant_types: METADATA.grant_types,
          token_endpoint_auth_method: "none",
        }),
      );
      return;
    }
    // The read: a JSON string that never ends, 16 KiB every few milliseconds, no content-length.
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"client_id":"endless-client","client_name":"');
    const chunk = "x".repeat(16 * 1024);
    const timer = setInterval(() => {
      sent += chunk.length;
      res.write(chunk);
    }, 5);
    res.on("close", () => {
      clearInterval(timer);
      readClosed();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const endless = { ...as, issuer: origin, registration_endpoint: `${origin}/reg` };
  const store = new MemoryCredentialStore();
  // A timeout far beyond the test's own: only the cap can end the read in time.
  const options = { store, as: endless, metadata: METADATA, timeoutMs: 600_000 };
  const first = await storedRegistration(options);
  assert.equal(first.reused, false);
  const again = await storedRegistration(options);
  await closed;
  assert.equal(
    again.reused,
    true,
    "an unreadable answer keeps the registration (not a 401/403/404)",
  );
  assert.equal(again.client.clientId, "endless-client");
  t.diagnostic(`bytes the server wrote before the client hung up: ${sent}`);
});
