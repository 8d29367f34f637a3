/** Crypto helpers for helper B's simulators: PKCE S256 (RFC 7636), random tokens, RFC 8628 user codes, RS256 JWT signing and its JWKS (RFC 7515/7517/7518), at_hash (OIDC Core). node:crypto only. */
import {
  createHash,
  createSign,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
} from "node:crypto";

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}

/** RFC 7636 §4.1: 43-128 characters of [A-Z a-z 0-9 - . _ ~]. */
export function isValidVerifier(verifier: string): boolean {
  return /^[A-Za-z0-9\-._~]{43,128}$/.test(verifier);
}

export function randomToken(prefix: string, bytes = 24): string {
  return `${prefix}${randomBytes(bytes).toString("base64url")}`;
}

/** An RSA key pair that signs RS256 JWTs (RFC 7515, RFC 7518 §3.3) and publishes itself as a JWKS (RFC 7517). */
export class RsaSigner {
  readonly kid = randomBytes(8).toString("hex");
  private readonly privateKey: KeyObject;
  private readonly publicJwk: Record<string, unknown>;
  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.publicJwk = publicKey.export({ format: "jwk" }) as Record<string, unknown>;
  }
  sign(claims: Record<string, unknown>): string {
    const header = Buffer.from(
      JSON.stringify({ alg: "RS256", kid: this.kid, typ: "JWT" }),
    ).toString("base64url");
    const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
    const signer = createSign("RSA-SHA256");
    signer.update(`${header}.${payload}`);
    return `${header}.${payload}.${signer.sign(this.privateKey).toString("base64url")}`;
  }
  jwks(): { keys: Record<string, unknown>[] } {
    return { keys: [{ ...this.publicJwk, kid: this.kid, use: "sig", alg: "RS256" }] };
  }
}

/** RFC 7636 §4.3 / §4.6 check at the token endpoint; returns an error description or undefined when fine. */
export function checkPkce(
  challenge: string | undefined,
  verifier: string | undefined,
): string | undefined {
  if (challenge === undefined) {
    return verifier === undefined ? undefined : "code_verifier sent but no code_challenge was";
  }
  if (verifier === undefined) return "Missing code verifier.";
  if (!isValidVerifier(verifier) || s256(verifier) !== challenge) return "Invalid code verifier.";
  return undefined;
}

/** An RFC 8628 user code: 8 letters from a confusion-free alphabet, shown as XXXX-XXXX (§6.1). */
export function userCode(): string {
  const alphabet = "BCDFGHJKLMNPQRSTVWXZ";
  const b = randomBytes(8);
  let s = "";
  for (let i = 0; i < 8; i++) s += alphabet[b[i]! % alphabet.length];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/** OIDC Core §3.1.3.6: at_hash is the base64url of the left half of SHA-256 of the access token (RS256). */
export function atHash(accessToken: string): string {
  return createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url");
}
