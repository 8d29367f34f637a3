/**
 * The embedded server as a Client ID Metadata Document authorization server (draft-ietf-oauth-client-id-metadata-
 * document; MCP authorization 2026-07-28): a `client_id` that is a URL is fetched, checked and used as the client.
 * oidc-provider 9.13 has this feature built in, but it takes https only and refuses special-use addresses (loopback
 * included), so tests could never serve a document; this resolver sits in the Client adapter's `find(id)` instead
 * (oidc-provider asks the adapter before anything else), with the same rules plus an explicit loopback allowance.
 *
 * Never fetched: loopback, private, link-local and other special-use addresses (SSRF, draft §6), by name or by
 * what a name resolves to (special-use-addresses.ts); `allowHttpLoopback` lets loopback through, nothing else.
 * Bounded: 5 KB, a 2.5 s timeout, no redirects, `application/json` only; accepted documents are cached for a minute
 * (at most 100), so a sign-in's several lookups fetch once. Refusals are oidc-provider's `invalid_client`, with a
 * description that names the rule broken and never echoes the document.
 */

import type { Adapter, AdapterPayload } from "oidc-provider";
import { errors } from "oidc-provider";
import { readCappedText } from "../oauth/body.ts";
import { guardedFetch, isSpecialUseHost } from "./special-use-addresses.ts";

export interface ClientIdMetadataDocumentOptions {
  /** Accept `http://127.0.0.1`, `http://[::1]` and `http://localhost` client_id URLs: tests and local demos only. */
  allowHttpLoopback?: boolean;
  /** Default 2,500 ms. */
  fetchTimeoutMs?: number;
}

const MAX_DOCUMENT_BYTES = 5 * 1024;
const DEFAULT_TIMEOUT_MS = 2_500;
const CACHE_MS = 60_000;
const MAX_CACHED = 100;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);
/** What a document may set; anything else (jwks_uri, sector_identifier_uri…) would make the server fetch more. */
const ACCEPTED_FIELDS = [
  "client_id",
  "client_name",
  "redirect_uris",
  "grant_types",
  "response_types",
  "application_type",
  "client_uri",
  "logo_uri",
  "tos_uri",
  "policy_uri",
  "contacts",
  "scope",
  "software_id",
  "software_version",
];

function refuse(why: string): errors.InvalidClient {
  return new errors.InvalidClient(`client_id metadata document refused: ${why}`);
}

/** Whether `id` is a client_id URL this server would fetch (draft §3): otherwise it is an ordinary unknown id. */
export function isClientIdUrl(id: string, options: ClientIdMetadataDocumentOptions): boolean {
  if (/[\s\\#@]/.test(id)) return false;
  const url = URL.parse(id);
  if (!url) return false;
  const scheme = id.slice(0, id.indexOf(":")).toLowerCase();
  const secure = scheme === "https";
  const loopback =
    scheme === "http" && options.allowHttpLoopback === true && LOOPBACK_HOSTS.has(url.hostname);
  if (!secure && !loopback) return false;
  // SSRF (draft §6): a loopback, private or link-local address, named directly, is never fetched; names that
  // resolve to one are cut at the socket (special-use-addresses.ts).
  if (isSpecialUseHost(url.hostname, { allowLoopback: options.allowHttpLoopback === true })) {
    return false;
  }
  const path =
    id
      .slice(scheme.length + 3)
      .replace(/^[^/?]*/, "")
      .split("?")[0] ?? "";
  if (path === "" || path === "/") return false;
  return !path.split("/").some((segment) => /^(\.|%2e){1,2}$/i.test(segment));
}

/** Checks a fetched document (pure): the client metadata oidc-provider is given, or a refusal. */
export function checkClientMetadataDocument(id: string, document: unknown): AdapterPayload {
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw refuse("it is not a JSON object");
  }
  const metadata = document as Record<string, unknown>;
  if (metadata.client_id !== id) throw refuse("its client_id is not the URL it was fetched from");
  if ("client_secret" in metadata || "client_secret_expires_at" in metadata) {
    throw refuse("it carries a client secret, and a metadata document is public");
  }
  const method = metadata.token_endpoint_auth_method ?? "none";
  if (method !== "none") {
    throw refuse('its token_endpoint_auth_method must be "none" (a public client with PKCE)');
  }
  const redirects = metadata.redirect_uris;
  if (
    !Array.isArray(redirects) ||
    redirects.length === 0 ||
    !redirects.every((uri) => typeof uri === "string" && URL.parse(uri) !== null)
  ) {
    throw refuse("it has no redirect_uris");
  }
  // OAuth 2.1 / RFC 9700 §4.1.3: plain http only to loopback (a native app's listener); elsewhere the code would
  // cross the network in clear. The person never agreed to this client, so the server holds the line for them.
  if (
    redirects.some((uri) => {
      const url = URL.parse(uri as string);
      return (
        (url?.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) ||
        url?.protocol === "javascript:" ||
        url?.protocol === "data:" ||
        (uri as string).includes("#")
      );
    })
  ) {
    throw refuse(
      "a redirect_uri uses http off loopback, a fragment, or a javascript:/data: scheme",
    );
  }
  // RFC 8252 §7.3: a loopback redirect matches on any port, which oidc-provider does for native clients only.
  const allLoopback = redirects.every((uri) => {
    const url = URL.parse(uri as string);
    return url?.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname);
  });
  const applicationType = metadata.application_type ?? (allLoopback ? "native" : undefined);
  const accepted: Record<string, unknown> = {};
  for (const field of ACCEPTED_FIELDS) if (field in metadata) accepted[field] = metadata[field];
  return {
    ...accepted,
    token_endpoint_auth_method: "none",
    ...(applicationType === undefined ? {} : { application_type: applicationType }),
  } as AdapterPayload;
}

async function fetchDocument(
  id: string,
  timeoutMs: number,
  fetch: typeof globalThis.fetch,
): Promise<AdapterPayload> {
  let response: Response;
  try {
    response = await fetch(id, {
      headers: { accept: "application/json" },
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    throw refuse("it could not be fetched in time");
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    // A redirect is refused, not followed: the document must live at the client_id itself.
    throw refuse(`its URL answered HTTP ${response.status}, not 200`);
  }
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/json" && !type?.endsWith("+json")) {
    await response.body?.cancel().catch(() => {});
    throw refuse("it is not served as application/json");
  }
  let text: string | undefined;
  try {
    text = await readCappedText(response, MAX_DOCUMENT_BYTES);
  } catch {
    throw refuse("it could not be read in time");
  }
  if (text === undefined) throw refuse(`it is larger than ${MAX_DOCUMENT_BYTES} bytes`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw refuse("it is not valid JSON");
  }
  return checkClientMetadataDocument(id, document);
}

/** `find(id)` for client_id URLs: the checked metadata, from a short cache or a fresh fetch. */
export function clientMetadataDocumentResolver(
  options: ClientIdMetadataDocumentOptions,
): (id: string) => Promise<AdapterPayload | undefined> {
  const cache = new Map<string, { payload: AdapterPayload; until: number }>();
  const pending = new Map<string, Promise<AdapterPayload>>();
  const fetchGuarded = guardedFetch({ allowLoopback: options.allowHttpLoopback === true });
  return async (id) => {
    if (!isClientIdUrl(id, options)) return undefined;
    const cached = cache.get(id);
    if (cached && cached.until > Date.now()) return cached.payload;
    cache.delete(id);
    let request = pending.get(id);
    if (!request) {
      request = fetchDocument(
        id,
        options.fetchTimeoutMs ?? DEFAULT_TIMEOUT_MS,
        fetchGuarded,
      ).finally(() => pending.delete(id));
      pending.set(id, request);
    }
    const payload = await request;
    cache.set(id, { payload, until: Date.now() + CACHE_MS });
    while (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
    return payload;
  };
}

/** The adapter class with client_id URLs resolved through their documents; stored clients still come first. */
export function withClientMetadataDocuments(
  Base: new (name: string) => Adapter,
  resolve: (id: string) => Promise<AdapterPayload | undefined>,
): new (
  name: string,
) => Adapter {
  return class extends (Base as new (
    name: string,
  ) => Adapter & { find(id: string): Promise<AdapterPayload | undefined> }) {
    readonly #client: boolean;

    constructor(name: string) {
      super(name);
      this.#client = name === "Client";
    }

    override async find(id: string): Promise<AdapterPayload | undefined> {
      const stored = (await super.find(id)) ?? undefined;
      if (stored || !this.#client) return stored;
      return resolve(id);
    }
  };
}
