/** The token-endpoint wire quirks a provider may have, as data: each one names what real servers do differently. */

export interface HttpQuirks {
  /**
   * Ask for JSON with `Accept: application/json`: GitHub answers `application/x-www-form-urlencoded` otherwise
   * (docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps, step 2 "Response").
   */
  acceptJson?: boolean;
  /** Send the request body as JSON instead of a form (Notion's token endpoint takes JSON). */
  jsonRequestBody?: boolean;
  /** Errors arrive with HTTP 200 and an `error` member (GitHub): treated as the 400 RFC 6749 §5.2 prescribes. */
  errorsWithStatus200?: boolean;
  /** Every answer is HTTP 200 with `{"ok": false, "error": ...}` on failure (Slack Web API). */
  okFalseErrors?: boolean;
  /** The user's token fields sit in a nested object (Slack `authed_user`); they are lifted to the top level. */
  nestedTokens?: string;
  /**
   * With `nestedTokens`: the top-level token is never taken for the person's when the nested object is there
   * without one (Slack: a bot token beside an `authed_user` without `access_token`), nor when a flat answer says
   * `token_type: "bot"`. The answer then has no access token, which is invalid_response.
   */
  requireNested?: boolean;
  /**
   * `scope` is comma-separated (`repo,gist`) or a JSON array (Linear); turned into RFC 6749 §3.3's
   * space-separated list.
   */
  commaScopes?: boolean;
  /**
   * `token_type` is missing or non-standard (Slack `user`, some servers omit it): read as `bearer`, which is what
   * the provider documents the token to be used as.
   */
  bearerTokenType?: boolean;
  /**
   * Provider error codes mapped to the RFC 6749 ones the engine acts on, e.g. GitHub `bad_refresh_token` →
   * `invalid_grant` (the refresh token is gone: mark the credential login_required).
   */
  errorCodes?: Readonly<Record<string, string>>;
}
