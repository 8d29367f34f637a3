/**
 * RFC 7591 dynamic registrations kept in the vault, so every process and every restart over one vault signs in as
 * the same client: no client spam at the authorization server, and consent given to the client is not asked again
 * for a new one.
 *
 * No schema of its own: a registration is a vault record under the reserved subject `agentauth:client-registration`,
 * issuer = the authorization server, resource = `urn:agentauth:registration:<sha-256 of the metadata that matters>`
 * (redirect URIs, grant types, token endpoint auth method, client name, application type), so a CLI loopback client
 * and a RAP tool's https callback client never share one. The client id is the record's client id, the client secret
 * its sealed `clientSecret`, the RFC 7592 registration access token its sealed access token (never logged).
 *
 * Single flight: one promise per registration in a process, and the store's lease across processes (the holder
 * registers and stores; the others wait for the lease, then read what it stored).
 *
 * A stored registration the server no longer knows is replaced: one whose secret expired (`client_secret_expires_at`),
 * one the RFC 7592 read endpoint says is gone (401/403/404, checked before each use when the server gave a
 * registration access token), and one a caller reports with `forgetRegistration` (an `invalid_client` at the token
 * endpoint). A record that does not read as a registration (garbage, mismatched fields) is deleted and replaced.
 */

import { createHash } from "node:crypto";
import { Secret } from "../core/secret.ts";
import { leaseOwnerId } from "../vault/lease-owner.ts";
import { credentialId } from "../vault/record.ts";
import type {
  CredentialInput,
  CredentialKey,
  CredentialRecord,
  CredentialStore,
} from "../vault/types.ts";
import { readCappedText } from "./body.ts";
import type { AuthorizationServer } from "./discovery.ts";
import { assertSecureUrl, type RequestPolicy, sleep } from "./http.ts";
import { type RegisteredClient, registerClient } from "./registration.ts";

/** Subjects starting with this are agentauth's own records, never a person's: refuse them as user subjects. */
export const RESERVED_SUBJECT_PREFIX = "agentauth:";
export const REGISTRATION_SUBJECT = `${RESERVED_SUBJECT_PREFIX}client-registration`;
const URN_PREFIX = "urn:agentauth:registration:";
/** Marks the record's access token as an RFC 7592 registration access token, not a bearer token for an API. */
const TOKEN_TYPE = "registration";
const PROVIDER_NAME = "client-registration";
const LEASE_TTL_MS = 30_000;
const LEASE_POLL_MS = 50;
const MAX_CLIENT_ID = 1_000;
/** An RFC 7592 read answer is a page of client metadata; anything larger is not read. */
const MAX_READ_ANSWER = 64_000;

export function isReservedSubject(subject: string): boolean {
  return typeof subject === "string" && subject.startsWith(RESERVED_SUBJECT_PREFIX);
}

/** The RFC 7591 metadata agentauth registers with; the listed fields name the registration. */
// A type alias, not an interface: it must fit oauth4webapi's index-signed client metadata.
export type RegistrationMetadata = {
  client_name: string;
  application_type?: "native" | "web";
  redirect_uris: string[];
  grant_types: string[];
  response_types?: string[];
  token_endpoint_auth_method: "none" | "client_secret_basic" | "client_secret_post";
};

export interface StoredRegistrationOptions extends RequestPolicy {
  store: CredentialStore;
  as: AuthorizationServer;
  metadata: RegistrationMetadata;
}

export interface StoredRegistration {
  client: RegisteredClient;
  /** True when the client came from the vault, false when it was registered now. */
  reused: boolean;
}

/** The vault key of a registration: what it is for, hashed over canonical JSON (fixed key order, sorted lists). */
export function registrationKey(issuer: string, metadata: RegistrationMetadata): CredentialKey {
  const canonical = JSON.stringify([
    metadata.application_type ?? null,
    metadata.client_name,
    [...metadata.grant_types].sort(),
    [...metadata.redirect_uris].sort(),
    metadata.token_endpoint_auth_method,
  ]);
  const digest = createHash("sha256").update(canonical).digest("hex");
  return { subject: REGISTRATION_SUBJECT, issuer, resource: `${URN_PREFIX}${digest}` };
}

// One registration in flight per store and key in this process.
const inFlight = new WeakMap<CredentialStore, Map<string, Promise<StoredRegistration>>>();

/** The stored client for this server and metadata, registering (and storing) one when there is none usable. */
export function storedRegistration(
  options: StoredRegistrationOptions,
): Promise<StoredRegistration> {
  const key = registrationKey(options.as.issuer, options.metadata);
  let flights = inFlight.get(options.store);
  if (!flights) {
    flights = new Map();
    inFlight.set(options.store, flights);
  }
  // The URN hashes the metadata only: the issuer must be in the flight's id too, or a concurrent sign-in at
  // another authorization server would be handed this server's client.
  const id = `${key.issuer} ${key.resource}`;
  let flight = flights.get(id);
  if (!flight) {
    flight = obtain(options, key).finally(() => flights.delete(id));
    flights.set(id, flight);
  }
  return flight;
}

/**
 * Deletes the stored registration for `clientId` after the server refused it (`invalid_client`), so the next
 * sign-in registers again. A registration another process stored since (another client id) is kept.
 */
export async function forgetRegistration(
  store: CredentialStore,
  issuer: string,
  metadata: RegistrationMetadata,
  clientId: string,
): Promise<boolean> {
  const key = registrationKey(issuer, metadata);
  const record = await readRecord(store, key);
  if (record && record.clientId !== clientId) return false;
  return store.delete(key);
}

async function obtain(
  options: StoredRegistrationOptions,
  key: CredentialKey,
): Promise<StoredRegistration> {
  const { store } = options;
  const stored = await usable(options, key);
  // Nothing to check with the server: used as stored, without the lease.
  if (stored && !checkable(stored, options)) return { client: stored, reused: true };
  const lease = `client-registration:${createHash("sha256").update(JSON.stringify(key)).digest("base64url").slice(0, 22)}`;
  const owner = leaseOwnerId();
  // The RFC 7592 read and any registration happen under the lease: a server may rotate the registration access
  // token on each read, so two processes reading at once would see the loser's token refused (401) and take that for
  // a forgotten client. The holder checks (storing a rotated token) or registers and stores; the others wait for it
  // (bounded by the lease TTL: a dead holder's lease lapses), then check what it stored.
  const deadline = Date.now() + LEASE_TTL_MS + 15_000;
  let held = await store.acquireLease(lease, owner, LEASE_TTL_MS);
  while (!held && Date.now() < deadline) {
    await sleep(LEASE_POLL_MS, options.signal);
    held = await store.acquireLease(lease, owner, LEASE_TTL_MS);
  }
  try {
    const current = await usable(options, key);
    if (current) {
      const known = await stillKnown(current, options, key);
      if (known) return { client: known, reused: true };
      await forgetRegistration(store, key.issuer, options.metadata, current.clientId);
    }
    const client = await registerClient({
      as: options.as,
      metadata: options.metadata,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    await store.put(recordFor(key, options.metadata, client));
    return { client, reused: false };
  } finally {
    if (held) await store.releaseLease(lease, owner);
  }
}

/** Whether the server can be asked about the client: a registration access token for an endpoint on its origin. */
function checkable(client: RegisteredClient, options: StoredRegistrationOptions): URL | undefined {
  const uri = URL.parse(client.registrationClientUri ?? "");
  const endpoint = URL.parse(options.as.registration_endpoint ?? "");
  if (!client.registrationAccessToken || !uri || !endpoint || uri.origin !== endpoint.origin)
    return;
  return uri;
}

/** The stored registration when it reads as one and has not expired; anything else is deleted. */
async function usable(
  options: StoredRegistrationOptions,
  key: CredentialKey,
): Promise<RegisteredClient | undefined> {
  const record = await readRecord(options.store, key);
  if (!record) return undefined;
  const client = clientOf(record, options.metadata);
  if (client) return client;
  await options.store.delete(key);
  return undefined;
}

/** A row that cannot be read (damaged, sealed under another key) is deleted by id: it is only a registration. */
async function readRecord(
  store: CredentialStore,
  key: CredentialKey,
): Promise<CredentialRecord | undefined> {
  try {
    return await store.get(key);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "vault_record_corrupt") throw error;
    await store.deleteById(credentialId(key));
    return undefined;
  }
}

/** The client a record holds, or undefined when any field is not what this module writes. */
function clientOf(
  record: CredentialRecord,
  metadata: RegistrationMetadata,
): RegisteredClient | undefined {
  const { clientId, tokens } = record;
  if (typeof clientId !== "string" || clientId === "" || clientId.length > MAX_CLIENT_ID) return;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (/[\u0000-\u001f\u007f]/.test(clientId)) return;
  if (record.status !== "active" || tokens.tokenType !== TOKEN_TYPE) return;
  if (record.provider?.name !== PROVIDER_NAME) return;
  // The method the server registered (RFC 7591 §3.2.1: its answer wins over what was asked), stored beside it.
  const method = record.provider.options?.auth_method ?? metadata.token_endpoint_auth_method;
  if (method !== "none" && method !== "client_secret_basic" && method !== "client_secret_post")
    return;
  if ((method !== "none") !== (tokens.clientSecret !== undefined)) return;
  if (record.expiresAt !== undefined && record.expiresAt <= Date.now()) return;
  const uri = record.provider.options?.registration_client_uri;
  return {
    clientId,
    clientSecret: tokens.clientSecret,
    authMethod: method,
    registrationAccessToken: tokens.accessToken,
    registrationClientUri: typeof uri === "string" ? uri : undefined,
    clientSecretExpiresAt: record.expiresAt,
  };
}

/**
 * RFC 7592 §2.1: read the registration with its access token. 401, 403 or 404 mean the server no longer knows the
 * client (undefined); anything else (including an unreachable endpoint) keeps it, so a flaky server does not cause
 * registrations. A new registration access token or client secret in the answer replaces the stored one (§2.1: the
 * client MUST discard the old ones; a server that rotates on read would otherwise refuse the next read).
 * The endpoint must be on the registration endpoint's origin: the access token is sent nowhere else.
 */
async function stillKnown(
  client: RegisteredClient,
  options: StoredRegistrationOptions,
  key: CredentialKey,
): Promise<RegisteredClient | undefined> {
  const token = client.registrationAccessToken;
  const uri = checkable(client, options);
  if (!token || !uri) return client;
  let body: unknown;
  try {
    assertSecureUrl(uri, "client configuration endpoint");
    const response = await fetch(uri, {
      headers: { authorization: `Bearer ${token.reveal()}`, accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      return [401, 403, 404].includes(response.status) ? undefined : client;
    }
    // Capped while the bytes arrive: an answer that never ends is cut at the cap, not buffered until the timeout.
    const text = await readCappedText(response, MAX_READ_ANSWER);
    body = text === undefined ? undefined : JSON.parse(text);
  } catch {
    return client;
  }
  if (typeof body !== "object" || body === null) return client;
  const answer = body as Record<string, unknown>;
  if (answer.client_id !== undefined && answer.client_id !== client.clientId) return client;
  const rat = answer.registration_access_token;
  const secret = answer.client_secret;
  const newToken = typeof rat === "string" && rat !== "" && rat !== token.reveal();
  const newSecret =
    client.clientSecret !== undefined &&
    typeof secret === "string" &&
    secret !== "" &&
    secret !== client.clientSecret.reveal();
  if (!newToken && !newSecret) return client;
  const updated: RegisteredClient = {
    ...client,
    ...(newToken ? { registrationAccessToken: new Secret(rat) } : {}),
    ...(newSecret ? { clientSecret: new Secret(secret) } : {}),
  };
  await options.store.put(recordFor(key, options.metadata, updated));
  return updated;
}

function recordFor(
  key: CredentialKey,
  metadata: RegistrationMetadata,
  client: RegisteredClient,
): CredentialInput {
  const method = client.authMethod ?? metadata.token_endpoint_auth_method;
  const options: Record<string, string> = { auth_method: method };
  if (client.registrationClientUri) options.registration_client_uri = client.registrationClientUri;
  return {
    ...key,
    clientId: client.clientId,
    provider: { name: PROVIDER_NAME, options },
    tokens: {
      tokenType: TOKEN_TYPE,
      // A public client keeps no secret even if the server sent one: the record must read back as it was written.
      ...(client.clientSecret && method !== "none" ? { clientSecret: client.clientSecret } : {}),
      ...(client.registrationAccessToken ? { accessToken: client.registrationAccessToken } : {}),
    },
    expiresAt: client.clientSecretExpiresAt,
    scopes: [],
    account: { label: `client registration (${metadata.client_name})` },
    status: "active",
  };
}

/**
 * For tests and tools: whether a vault row is a stored registration (so it is not taken for a credential). The
 * subject alone does not say it: a tool kit keys users' credentials by a user id it is given (RAP `user_id`), which
 * may spell the reserved subject; only this module writes the registration URN as the resource.
 */
export function isRegistrationRecord(record: { subject: string; resource: string }): boolean {
  return (
    record.subject === REGISTRATION_SUBJECT &&
    typeof record.resource === "string" &&
    record.resource.startsWith(URN_PREFIX)
  );
}

/**
 * RFC 7592 §2.3: asks the server to delete the client with its registration access token (only at a client
 * configuration endpoint on the issuer's origin: the token is sent nowhere else), then deletes the record whatever
 * the answer. `unregistered` is true when the server confirmed (204).
 */
export async function deleteStoredRegistration(
  store: CredentialStore,
  record: CredentialRecord,
  policy: RequestPolicy = {},
): Promise<{ unregistered: boolean; deleted: boolean; status?: number }> {
  let unregistered = false;
  let status: number | undefined;
  const token = record.tokens.accessToken;
  const uri = URL.parse(record.provider?.options?.registration_client_uri ?? "");
  const issuer = URL.parse(record.issuer);
  if (isRegistrationRecord(record) && token && uri && issuer && uri.origin === issuer.origin) {
    try {
      assertSecureUrl(uri, "client configuration endpoint");
      const response = await fetch(uri, {
        method: "DELETE",
        headers: { authorization: `Bearer ${token.reveal()}` },
        redirect: "manual",
        signal: AbortSignal.timeout(policy.timeoutMs ?? 10_000),
      });
      await response.body?.cancel().catch(() => {});
      status = response.status;
      unregistered = response.status === 204;
    } catch {
      // Unreachable: deleted locally all the same; the server forgets unused clients on its own terms.
    }
  }
  const deleted = await store.delete({
    subject: record.subject,
    issuer: record.issuer,
    resource: record.resource,
  });
  return { unregistered, deleted, status };
}
