/**
 * The engine's provider quirks (src/oauth/quirks): `quirksFetch`, oauth4webapi's customFetch, against a real
 * loopback HTTP server answering what providers really send (form bodies, HTML pages, huge bodies, 429s).
 */

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, test } from "node:test";
import { quirksFetch, RateLimitedError, TokenEndpointError } from "../../src/oauth/index.ts";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A real HTTP server on a free loopback port; each test sets what it answers. */
let handler: Handler = (_req, _body, res) => res.writeHead(404).end();
const received: { headers: IncomingMessage["headers"]; body: string }[] = [];
const server = createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  received.push({ headers: req.headers, body });
  handler(req, body, res);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
after(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

function answer(status: number, type: string, body: string | Buffer, headers = {}): Handler {
  return (_req, _body, res) => {
    res.writeHead(status, { "content-type": type, ...headers });
    res.end(body);
  };
}

const form = () =>
  new URLSearchParams({ grant_type: "authorization_code", code: "the-code-value" });
const init = () => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: form(),
  redirect: "manual" as const,
});

test("[QUIRK-fetch-accept-json-body] acceptJson sends Accept: application/json; jsonRequestBody sends the form as JSON", async () => {
  handler = answer(
    200,
    "application/json",
    JSON.stringify({ access_token: "t", token_type: "bearer" }),
  );
  received.length = 0;
  await quirksFetch({ acceptJson: true, jsonRequestBody: true }, "Example")(url, init());
  assert.equal(received[0]?.headers.accept, "application/json");
  assert.equal(received[0]?.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(received[0]?.body ?? ""), {
    grant_type: "authorization_code",
    code: "the-code-value",
  });
  received.length = 0;
  await quirksFetch({}, "Example")(url, init());
  assert.match(String(received[0]?.headers["content-type"]), /x-www-form-urlencoded/);
  assert.equal(received[0]?.body, "grant_type=authorization_code&code=the-code-value");
});

test("[QUIRK-fetch-form-body] a form-encoded answer (GitHub without Accept) becomes JSON with numeric expires_in and spaced scopes", async () => {
  handler = answer(
    200,
    "application/x-www-form-urlencoded; charset=utf-8",
    "access_token=gho_abc&token_type=bearer&scope=repo%2Cgist&expires_in=28800",
  );
  const response = await quirksFetch({ commaScopes: true }, "GitHub")(url, init());
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.deepEqual(await response.json(), {
    access_token: "gho_abc",
    token_type: "bearer",
    scope: "repo gist",
    expires_in: 28800,
  });
  assert.equal(
    response.url,
    url,
    "oauth4webapi checks the response came from the endpoint it asked",
  );
});

test("[QUIRK-fetch-status200-error] a 200 error answer comes out as the 400 oauth4webapi expects", async () => {
  handler = answer(
    200,
    "application/json",
    JSON.stringify({
      error: "bad_verification_code",
      error_description: "The code passed is incorrect or expired.",
    }),
  );
  const response = await quirksFetch(
    { errorsWithStatus200: true, errorCodes: { bad_verification_code: "invalid_grant" } },
    "GitHub",
  )(url, init());
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { error: string }).error, "invalid_grant");
});

test("[QUIRK-fetch-html] an HTML page is a typed error: invalid_response (wrong endpoint, login wall), server_error for a 5xx (retry later)", async () => {
  for (const [status, code] of [
    [200, "invalid_response"],
    [404, "invalid_response"],
    [502, "server_error"],
  ] as const) {
    handler = answer(status, "text/html", "<!DOCTYPE html><html><body>Bad gateway</body></html>");
    await assert.rejects(quirksFetch({}, "Example")(url, init()), (error: unknown) => {
      assert.ok(error instanceof TokenEndpointError);
      assert.equal(error.code, code);
      assert.equal(error.status, status);
      assert.match(error.message, /Example answered with an HTML page/);
      return true;
    });
  }
  handler = answer(200, "text/plain", "all good!");
  await assert.rejects(quirksFetch({}, "Example")(url, init()), /something that is not JSON/);
  handler = answer(200, "application/json", "[1,2]");
  await assert.rejects(quirksFetch({}, "Example")(url, init()), { code: "invalid_response" });
});

test("[QUIRK-fetch-oversized] an answer over 1 MB is refused before parsing, declared or chunked", async () => {
  const huge = Buffer.alloc(2 * 1024 * 1024, "a");
  handler = answer(200, "application/json", huge);
  await assert.rejects(quirksFetch({}, "Example")(url, init()), (error: unknown) => {
    assert.ok(error instanceof TokenEndpointError);
    assert.equal(error.code, "invalid_response");
    assert.match(error.message, /larger than/);
    return true;
  });
  // No content-length: the body streams in chunks; the cap still applies.
  handler = (_req, _body, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write(`{"access_token":"${"a".repeat(600 * 1024)}`);
    res.end(`${"b".repeat(600 * 1024)}"}`);
  };
  await assert.rejects(quirksFetch({}, "Example")(url, init()), /larger than/);
});

test("[QUIRK-fetch-rate-limited] a 429 with Retry-After is RateLimitedError: retryable, the wait taken from the header", async () => {
  handler = answer(429, "application/json", JSON.stringify({ error: "rate_limited" }), {
    "retry-after": "7",
  });
  await assert.rejects(quirksFetch({}, "Slack")(url, init()), (error: unknown) => {
    assert.ok(error instanceof RateLimitedError);
    assert.equal(error.code, "rate_limited");
    assert.equal(error.retryable, true);
    assert.equal(error.retryAfterMs, 7000);
    assert.match(error.message, /Slack is rate limiting requests right now\. Try again in 7 s/);
    return true;
  });
});

test("[QUIRK-fetch-empty] an empty 200 (a revocation endpoint) passes through as it is", async () => {
  handler = answer(200, "text/plain", "");
  const response = await quirksFetch({ acceptJson: true }, "Example")(url, init());
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "");
});

test("[QUIRK-fetch-no-secret-in-errors] errors never carry the request's code or the answer's tokens", async () => {
  handler = answer(500, "text/html", "<html>access_token=leaked-token-value</html>");
  await assert.rejects(quirksFetch({}, "Example")(url, init()), (error: unknown) => {
    const text = `${(error as Error).message} ${JSON.stringify(error)}`;
    assert.equal(text.includes("the-code-value"), false);
    assert.equal(text.includes("leaked-token-value"), false);
    return true;
  });
});
