/** Test support: the embedded authorization server on a free loopback port, torn down after the test file. */

import { after } from "node:test";
import { type IdpOptions, type RunningIdp, startIdp } from "../../src/idp/index.ts";

/** Starts a strict embedded server for this test file and stops it when the file's tests end. */
export async function useIdp(options: IdpOptions = {}): Promise<RunningIdp> {
  const idp = await startIdp({ autoApproveAs: "alice", deviceIntervalSeconds: 1, ...options });
  after(() => idp.close());
  return idp;
}

/** A confidential client the tests can use for introspection and client-authenticated calls. */
export const CONFIDENTIAL_CLIENT = {
  client_id: "test-confidential",
  client_secret: "test-confidential-secret-0123456789abcdef",
  // Native, so loopback redirect URIs match on any port (RFC 8252 §7.3).
  application_type: "native",
  grant_types: [
    "authorization_code",
    "refresh_token",
    "urn:ietf:params:oauth:grant-type:device_code",
  ],
  redirect_uris: ["http://127.0.0.1/callback"],
  token_endpoint_auth_method: "client_secret_basic",
} as const;
