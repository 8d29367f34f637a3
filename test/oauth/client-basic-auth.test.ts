/**
 * RFC 6749 §2.3.1 client_secret_basic as both kinds of server read it: the strict embedded server decodes the
 * form-urlencoded id and secret (oidc-provider), and many servers compare the decoded Base64 raw (the MCP
 * conformance suite's pre-registration scenario among them). Only what must be encoded is: characters outside RFC
 * 3986's unreserved set (a `:` in the id, `%`, `+`, spaces), so an id like `pre-registered-client`
 * reaches a raw-comparing server unchanged while odd ids still decode right.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { Secret } from "../../src/core/secret.ts";
import { discoverAuthorizationServer, introspectToken } from "../../src/oauth/index.ts";
import { useIdp } from "../support/idp.ts";
import { scriptedServer } from "../support/scripted-server.ts";

// RFC 6749 Appendix A: ids and secrets are VSCHARs (printable ASCII, space included).
const ODD_ID = "odd:client+id%20 (x)-._~*!";
const ODD_SECRET = "s3cret:with+plus%25 space-'quote'";
const idp = await useIdp({
  clients: [
    {
      client_id: ODD_ID,
      client_secret: ODD_SECRET,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
});

test("[RFC6749-basic-encoding-decoder] an id and secret with reserved characters (`:`, `+`, `%`, space, quotes) authenticate at a server that decodes them", async () => {
  const as = await discoverAuthorizationServer(idp.issuer);
  const answer = await introspectToken({
    as,
    client: { clientId: ODD_ID, clientSecret: new Secret(ODD_SECRET) },
    token: new Secret("not-a-token"),
  });
  assert.equal(answer.active, false, "authenticated (a refused client is invalid_client)");
});

test("[RFC6749-basic-encoding-raw] unreserved characters are not encoded, so a server comparing the Basic credentials raw accepts them", async () => {
  const seen: string[] = [];
  const server = await scriptedServer({
    "/introspect": (req) => {
      const header = req.headers.authorization ?? "";
      const decoded = Buffer.from(header.replace(/^Basic /, ""), "base64").toString("utf8");
      seen.push(decoded);
      return decoded === "pre-registered-client:pre-registered_secret.~"
        ? { body: { active: false } }
        : { status: 401, body: { error: "invalid_client" } };
    },
  });
  const answer = await introspectToken({
    as: { issuer: server.origin, introspection_endpoint: `${server.origin}/introspect` },
    client: {
      clientId: "pre-registered-client",
      clientSecret: new Secret("pre-registered_secret.~"),
    },
    token: new Secret("not-a-token"),
  });
  assert.equal(answer.active, false);
  assert.deepEqual(seen, ["pre-registered-client:pre-registered_secret.~"]);
});
