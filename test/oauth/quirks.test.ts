/**
 * The engine's provider quirks (src/oauth/quirks), the pure parts: rewriting token answers into the RFC 6749
 * §5.1/§5.2 shape, comma and array scopes, and rate-limit recognition. quirks-fetch.test.ts runs `quirksFetch`
 * against a real loopback server.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { normaliseTokenAnswer, rateLimitOf, spaceScopes } from "../../src/oauth/index.ts";

test("[QUIRK-normalise-status200-error] an error answered with HTTP 200 becomes the RFC 6749 §5.2 400, with the provider's code mapped", () => {
  const out = normaliseTokenAnswer(
    {
      status: 200,
      body: {
        error: "bad_refresh_token",
        error_description: "The refresh token passed is incorrect or expired.",
      },
    },
    { errorsWithStatus200: true, errorCodes: { bad_refresh_token: "invalid_grant" } },
  );
  assert.equal(out.status, 400);
  assert.equal(out.body.error, "invalid_grant");
  assert.match(String(out.body.error_description), /^bad_refresh_token: The refresh token/);
  // Without the quirk a 200 error stays as it is (and oauth4webapi refuses it as a token response).
  assert.equal(normaliseTokenAnswer({ status: 200, body: { error: "x" } }, {}).status, 200);
});

test("[QUIRK-normalise-ok-false] Slack's {ok:false} with 200 becomes a 400 error; {ok:false} without a code still is one", () => {
  const out = normaliseTokenAnswer(
    { status: 200, body: { ok: false, error: "invalid_code" } },
    { okFalseErrors: true },
  );
  assert.deepEqual(out, { status: 400, body: { error: "invalid_code" } });
  const bare = normaliseTokenAnswer({ status: 200, body: { ok: false } }, { okFalseErrors: true });
  assert.deepEqual(bare, { status: 400, body: { error: "unknown_error" } });
});

test("[QUIRK-normalise-nested] nested user tokens are lifted; the bot token's fields do not leak into the user's", () => {
  const out = normaliseTokenAnswer(
    {
      status: 200,
      body: {
        ok: true,
        access_token: "xoxb-bot",
        token_type: "bot",
        scope: "chat:write",
        refresh_token: "xoxe-bot-refresh",
        authed_user: {
          id: "U1",
          access_token: "xoxp-user",
          token_type: "user",
          scope: "users:read,search:read",
        },
      },
    },
    { okFalseErrors: true, nestedTokens: "authed_user", commaScopes: true, bearerTokenType: true },
  );
  assert.equal(out.body.access_token, "xoxp-user");
  assert.equal(out.body.scope, "users:read search:read");
  assert.equal(out.body.token_type, "bearer");
  assert.equal("refresh_token" in out.body, false, "the bot's refresh token is not the user's");
  assert.deepEqual((out.body.authed_user as { id: string }).id, "U1");
  // A nested object without a token (a bot-only install) leaves the body alone.
  const botOnly = normaliseTokenAnswer(
    { status: 200, body: { access_token: "xoxb", authed_user: { id: "U1" } } },
    { nestedTokens: "authed_user" },
  );
  assert.equal(botOnly.body.access_token, "xoxb");
});

test("[QUIRK-normalise-no-token-stays] an answer without an access token is not invented one", () => {
  const out = normaliseTokenAnswer(
    { status: 200, body: { scope: "a,b" } },
    { commaScopes: true, bearerTokenType: true },
  );
  assert.equal(out.body.access_token, undefined);
  assert.equal(out.body.token_type, undefined);
  assert.equal(out.status, 200);
});

test("[QUIRK-token-type] a missing or non-standard token_type reads as bearer; DPoP is kept", () => {
  const q = { bearerTokenType: true };
  assert.equal(
    normaliseTokenAnswer({ status: 200, body: { access_token: "t" } }, q).body.token_type,
    "bearer",
  );
  assert.equal(
    normaliseTokenAnswer({ status: 200, body: { access_token: "t", token_type: "user" } }, q).body
      .token_type,
    "bearer",
  );
  assert.equal(
    normaliseTokenAnswer({ status: 200, body: { access_token: "t", token_type: "DPoP" } }, q).body
      .token_type,
    "DPoP",
  );
});

test("[QUIRK-space-scopes] comma-separated scopes become RFC 6749 §3.3 space-separated ones", () => {
  assert.equal(spaceScopes("repo,gist"), "repo gist");
  assert.equal(spaceScopes("repo, gist ,,user"), "repo gist user");
  assert.equal(spaceScopes(""), "");
  assert.equal(spaceScopes("already spaced"), "already spaced");
});

test("[QUIRK-rate-limit-of] 429 with Retry-After seconds or a date, and GitHub's 403 with x-ratelimit-remaining: 0, are rate limits; a plain 403 is not", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const r = (status: number, headers: Record<string, string>) =>
    new Response(null, { status, headers });
  assert.deepEqual(rateLimitOf(r(429, { "retry-after": "30" }), now), { retryAfterMs: 30_000 });
  assert.deepEqual(rateLimitOf(r(429, { "retry-after": "Thu, 01 Jan 2026 00:01:00 GMT" }), now), {
    retryAfterMs: 60_000,
  });
  assert.deepEqual(rateLimitOf(r(429, {}), now), { retryAfterMs: undefined });
  assert.deepEqual(
    rateLimitOf(
      r(403, { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(now / 1000 + 120) }),
      now,
    ),
    { retryAfterMs: 120_000 },
  );
  assert.equal(rateLimitOf(r(403, {}), now), undefined);
  assert.equal(rateLimitOf(r(403, { "x-ratelimit-remaining": "12" }), now), undefined);
  assert.equal(rateLimitOf(r(200, { "retry-after": "5" }), now), undefined);
  // A hostile Retry-After cannot park a caller for days, nor be negative.
  assert.deepEqual(rateLimitOf(r(429, { "retry-after": "999999999" }), now), {
    retryAfterMs: 15 * 60_000,
  });
  assert.deepEqual(rateLimitOf(r(429, { "retry-after": "Wed, 31 Dec 2025 00:00:00 GMT" }), now), {
    retryAfterMs: 0,
  });
  assert.deepEqual(rateLimitOf(r(429, { "retry-after": "soon" }), now), {
    retryAfterMs: undefined,
  });
});

test("[QUIRK-array-scopes] a scope sent as a JSON array (Linear's documented token answer) becomes a space-separated string", () => {
  const out = normaliseTokenAnswer(
    { status: 200, body: { access_token: "t", token_type: "Bearer", scope: ["read", "write"] } },
    { commaScopes: true },
  );
  assert.equal(out.body.scope, "read write");
  // Anything but strings in the array is left alone for oauth4webapi to refuse.
  const odd = normaliseTokenAnswer(
    { status: 200, body: { access_token: "t", scope: ["read", 7] } },
    { commaScopes: true },
  );
  assert.deepEqual(odd.body.scope, ["read", 7]);
});

test("[QUIRK-rate-limit-linear] Linear's rate limit (HTTP 400 with X-RateLimit-Requests-Remaining: 0, reset in epoch ms) is a rate limit", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const limited = new Response(null, {
    status: 400,
    headers: {
      "x-ratelimit-requests-remaining": "0",
      "x-ratelimit-requests-reset": String(now + 30_000),
    },
  });
  assert.deepEqual(rateLimitOf(limited, now), { retryAfterMs: 30_000 });
  const fine = new Response(null, {
    status: 400,
    headers: { "x-ratelimit-requests-remaining": "12" },
  });
  assert.equal(rateLimitOf(fine, now), undefined);
});
