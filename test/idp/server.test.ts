import assert from "node:assert/strict";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { test } from "node:test";
import { authorizationRedirect, authorizationUrl, pkce } from "../support/authorize.ts";
import { useIdp } from "../support/idp.ts";

const idp = await useIdp();

/** An address of this machine that is not loopback, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;

function tryConnect(host: string, port: number): Promise<"connected" | string> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
  });
}

test("[IDP-loopback-only] the issuer is http://127.0.0.1:<port>", async () => {
  const issuer = new URL(idp.issuer);
  assert.equal(issuer.hostname, "127.0.0.1");
  assert.equal(issuer.port, String(idp.port));
  assert.equal(issuer.pathname, "/");
  assert.equal(await tryConnect("127.0.0.1", idp.port), "connected");
});

test("[IDP-loopback-only] the server does not listen on the machine's other addresses", {
  skip: externalAddress ? false : "no non-loopback IPv4 address on this machine",
}, async () => {
  assert.equal(await tryConnect(externalAddress ?? "", idp.port), "ECONNREFUSED");
});

test("[IDP-dcr] dynamic client registration (RFC 7591) returns a client_id the server then accepts", async () => {
  const response = await fetch(`${idp.issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      application_type: "native",
      client_name: "registered test client",
      redirect_uris: ["http://127.0.0.1/callback"],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  assert.equal(response.status, 201);
  const client = (await response.json()) as Record<string, unknown>;
  assert.equal(typeof client.client_id, "string");
  assert.notEqual(client.client_id, "");
  assert.equal(client.client_secret, undefined, "a public client gets no secret");
  assert.equal(typeof client.registration_access_token, "string");

  const read = await fetch(String(client.registration_client_uri), {
    headers: { authorization: `Bearer ${client.registration_access_token}` },
  });
  assert.equal(read.status, 200);
  assert.equal(((await read.json()) as { client_id: string }).client_id, client.client_id);

  const { challenge } = await pkce();
  const callback = await authorizationRedirect(
    authorizationUrl(idp.issuer, challenge, {
      client_id: String(client.client_id),
      redirect_uri: "http://127.0.0.1:9/callback",
    }),
  );
  assert.ok(callback.searchParams.get("code"), callback.href);
});

test("[IDP-dcr] a registration with an invalid redirect_uri is refused", async () => {
  const response = await fetch(`${idp.issuer}/reg`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: ["not a url"], token_endpoint_auth_method: "none" }),
  });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { error: string }).error, "invalid_redirect_uri");
});
