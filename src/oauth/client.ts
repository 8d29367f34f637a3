/**
 * OAuth client identities and how they authenticate at the token endpoint: public (PKCE, no secret), a shared secret
 * (client_secret_basic / _post, RFC 6749 §2.3.1), or a private key (private_key_jwt, RFC 7523 §2.2).
 */

import { createPrivateKey } from "node:crypto";
import { importJWK, importPKCS8 } from "jose";
import * as oauth from "oauth4webapi";
import type { Secret } from "../core/secret.ts";
import { TokenEndpointError } from "./errors.ts";

export type ClientAuthMethod =
  | "none"
  | "client_secret_basic"
  | "client_secret_post"
  | "private_key_jwt";

export interface OAuthClient {
  clientId: string;
  /** Present for confidential clients; wrapped so it never prints. */
  clientSecret?: Secret;
  /** private_key_jwt: the client's private key, PKCS#8 PEM or a private JWK as JSON; wrapped so it never prints. */
  privateKey?: Secret;
  /** private_key_jwt: the JWS algorithm; default from the key (ES256/ES384/ES512, RS256, EdDSA). */
  signingAlg?: string;
  /** private_key_jwt: the `kid` to name in the assertion's header, when the server has several of the client's keys. */
  keyId?: string;
  /** Default: private_key_jwt with a private key, `client_secret_basic` with a secret, `none` without either. */
  authMethod?: ClientAuthMethod;
}

/** The oauth4webapi pair for a client: its metadata and how it authenticates at the token endpoint. */
export function clientParts(client: OAuthClient): { client: oauth.Client; auth: oauth.ClientAuth } {
  const method =
    client.authMethod ??
    (client.privateKey ? "private_key_jwt" : client.clientSecret ? "client_secret_basic" : "none");
  const metadata: oauth.Client = { client_id: client.clientId, token_endpoint_auth_method: method };
  if (method === "none") return { client: metadata, auth: oauth.None() };
  if (method === "private_key_jwt") {
    if (!client.privateKey) throw new TypeError("private_key_jwt needs a private key");
    return { client: metadata, auth: privateKeyJwt(client.privateKey, client) };
  }
  if (!client.clientSecret) throw new TypeError(`${method} needs a client secret`);
  const secret = client.clientSecret.reveal();
  return {
    client: metadata,
    auth:
      method === "client_secret_post" ? oauth.ClientSecretPost(secret) : clientSecretBasic(secret),
  };
}

/**
 * RFC 6749 §2.3.1 HTTP Basic, encoding only what must be encoded. The RFC form-urlencodes the id and the secret
 * before Base64; oauth4webapi also encodes `-`, `_`, `.`, `~` (HTML 4.01's reading), which servers that decode
 * accept and servers comparing the credentials raw refuse (`pre-registered-client` arrives as
 * `pre%2Dregistered%2Dclient`). Leaving RFC 3986's unreserved characters as they are satisfies both: a decoder
 * leaves them unchanged, and everything a decoder would alter (`%`, `+`, a space, the `:` separator) is encoded.
 */
export function clientSecretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${basicEncode(client.client_id)}:${basicEncode(secret)}`;
    headers.set("authorization", `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`);
  };
}

function basicEncode(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~]+/g, (run) =>
    encodeURIComponent(run).replace(
      /[!'()*]/g,
      (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
    ),
  );
}

/**
 * RFC 7523 §2.2 client authentication (oauth4webapi's assertion: `iss` = `sub` = the client id, `aud` = the issuer,
 * a fresh `jti`, one minute of life). The key is imported once per client object, on first use.
 */
function privateKeyJwt(key: Secret, client: OAuthClient): oauth.ClientAuth {
  let imported: Promise<CryptoKey> | undefined;
  return async (as, metadata, body, headers) => {
    imported ??= importPrivateKey(key, client.signingAlg);
    const cryptoKey = await imported;
    return oauth.PrivateKeyJwt({ key: cryptoKey, kid: client.keyId })(as, metadata, body, headers);
  };
}

async function importPrivateKey(key: Secret, alg: string | undefined): Promise<CryptoKey> {
  const text = key.reveal().trim();
  try {
    if (text.startsWith("{")) {
      const jwk = JSON.parse(text) as Record<string, unknown>;
      return (await importJWK(jwk, alg ?? algorithmOfJwk(jwk))) as CryptoKey;
    }
    return await importPKCS8(text, alg ?? algorithmOfPem(text));
  } catch {
    throw new TokenEndpointError(
      "client_key_invalid",
      "The client's private key (private_key_jwt) cannot be read: give a PKCS#8 PEM or a private JWK, and its algorithm (signingAlg) when it is not ES256, ES384, ES512, RS256 or EdDSA.",
    );
  }
}

function algorithmOfPem(pem: string): string {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType === "ec") {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === "secp384r1" ? "ES384" : curve === "secp521r1" ? "ES512" : "ES256";
  }
  if (key.asymmetricKeyType === "ed25519") return "EdDSA";
  return "RS256";
}

function algorithmOfJwk(jwk: Record<string, unknown>): string {
  if (typeof jwk.alg === "string") return jwk.alg;
  if (jwk.kty === "EC")
    return jwk.crv === "P-384" ? "ES384" : jwk.crv === "P-521" ? "ES512" : "ES256";
  if (jwk.kty === "OKP") return "EdDSA";
  return "RS256";
}
