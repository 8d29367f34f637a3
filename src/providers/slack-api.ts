/**
 * The Slack Web API calls around the OAuth grant: `auth.test` for the account and `auth.revoke` for sign-out, and
 * the scope list in Slack's comma-separated form. Every Slack method answers HTTP 200 with `ok: false` and a short
 * machine-readable `error` on failure ("Web API basics", https://docs.slack.dev/apis/web-api/).
 */

import type {
  AccountContext,
  ProviderAccount,
  RevocationOutcome,
  RevokeContext,
} from "../oauth/index.ts";
import { apiRequest, str } from "./api.ts";
import { ProviderApiError, ProviderConfigError } from "./errors.ts";

/** `chat:write users:read` or `chat:write,users:read` → `chat:write,users:read` ("Installing with OAuth"). */
export function slackScopes(scope: string): string {
  return scope
    .split(/[\s,]+/)
    .filter(Boolean)
    .join(",");
}

/**
 * The Slack account: subject `TEAM:USER`. A Slack member id is only unique inside its workspace (or Enterprise
 * Grid org), and a person in two workspaces holds two different tokens, so the workspace id qualifies the user id
 * (the way "Sign in with Slack" returns both `https://slack.com/user_id` and `https://slack.com/team_id`). The ids
 * come from the exchange answer (`authed_user.id`, `team.id`, or `enterprise.id` for an org-wide install);
 * `auth.test` adds the handle and the workspace URL. When `auth.test` fails, the ids alone still make the account.
 */
export async function slackAccount(url: string, context: AccountContext): Promise<ProviderAccount> {
  const fromAnswer = accountFromAnswer(context.response);
  let tested: Record<string, unknown> | undefined;
  try {
    tested = await slackCall(url, context, "account lookup", bearer(context.accessToken.reveal()));
  } catch (error) {
    if (fromAnswer.subject) return fromAnswer;
    throw error;
  }
  const userId = str(tested, "user_id");
  const teamId = str(tested, "team_id");
  return {
    subject: fromAnswer.subject ?? (userId && teamId ? `${teamId}:${userId}` : undefined),
    login: str(tested, "user"),
    organization: str(tested, "team") ?? fromAnswer.organization,
  };
}

/** What the oauth.v2.access answer says about who approved (its `authed_user` and `team`). */
export function accountFromAnswer(response: Record<string, unknown>): ProviderAccount {
  const user = str(response.authed_user, "id") ?? str(response, "user_id");
  const team = str(response.team, "id") ?? str(response.enterprise, "id");
  return {
    subject: user && team ? `${team}:${user}` : undefined,
    organization: str(response.team, "name") ?? str(response.enterprise, "name"),
  };
}

/**
 * `auth.revoke` revokes the token, and with token rotation the whole grant (refresh tokens included). A token Slack
 * no longer accepts (`invalid_auth`, `token_revoked`, `account_inactive`) has nothing left to revoke. A rotating
 * access token that has expired (`token_expired`, after 12 h) cannot call auth.revoke itself, so the refresh token
 * is exchanged once for a live one ("Using token rotation") and that one is revoked: signing out must not need a
 * fresh token first.
 */
export async function slackRevoke(
  urls: { revoke: string; access: string },
  context: RevokeContext,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const gone = { refreshToken: "absent", accessToken: "absent" } as const;
  const done = {
    refreshToken: context.refreshToken ? "revoked" : "absent",
    accessToken: "revoked",
  } as const;
  if (!context.accessToken) return gone;
  try {
    await slackCall(urls.revoke, context, "revocation", bearer(context.accessToken.reveal()));
    return done;
  } catch (error) {
    const code = error instanceof SlackApiError ? error.slackError : undefined;
    if (code && GONE.has(code)) return gone;
    if (code !== "token_expired") throw error;
  }
  if (!context.refreshToken) {
    throw new ProviderApiError(
      "provider_revocation_failed",
      "Slack refused the revocation because the access token has expired and no refresh token is stored. Remove the app at https://slack.com/apps/manage.",
    );
  }
  const live = await refreshForRevocation(urls.access, context);
  if (!live) return gone;
  await slackCall(urls.revoke, context, "revocation", bearer(live));
  return done;
}

/** One refresh at oauth.v2.access (Basic client credentials); undefined when Slack no longer knows the token. */
async function refreshForRevocation(
  url: string,
  context: RevokeContext,
): Promise<string | undefined> {
  const { client } = context;
  if (!client.clientSecret) {
    throw new ProviderConfigError(
      "provider_client_secret_missing",
      "Signing out of Slack with an expired token needs the app's client secret (to refresh it once first).",
    );
  }
  const basic = Buffer.from(
    `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret.reveal())}`,
  ).toString("base64");
  let answer: Record<string, unknown>;
  try {
    answer = await slackCall(
      url,
      context,
      "token refresh before revocation",
      `Basic ${basic}`,
      new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: context.refreshToken?.reveal() ?? "",
      }).toString(),
    );
  } catch (error) {
    if (error instanceof SlackApiError && error.slackError === "invalid_refresh_token") {
      return undefined;
    }
    throw error;
  }
  const token = str(answer, "access_token") ?? str(answer.authed_user, "access_token");
  if (!token) {
    throw new ProviderApiError(
      "provider_response_invalid",
      "Slack's refresh answer had no access token; the sign-out could not revoke the grant. Try again later.",
    );
  }
  return token;
}

function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** A Slack method answered `ok: false`; `slackError` is its code (`invalid_auth`, `token_revoked`, ...). */
export class SlackApiError extends ProviderApiError {
  readonly slackError: string;
  constructor(code: string, message: string, slackError: string) {
    super(code, message, { status: 200 });
    this.slackError = slackError;
  }
}

const GONE = new Set(["invalid_auth", "token_revoked", "account_inactive", "not_authed"]);

/** One Web API method call with a Bearer token; `ok: false` becomes a ProviderApiError naming Slack's code. */
async function slackCall(
  url: string,
  policy: { signal?: AbortSignal; timeoutMs?: number },
  what: string,
  authorization: string,
  form = "",
): Promise<Record<string, unknown>> {
  const answer = await apiRequest(url, {
    signal: policy.signal,
    timeoutMs: policy.timeoutMs,
    method: "POST",
    provider: "Slack",
    what,
    headers: {
      authorization,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: form,
  });
  const json = answer.json;
  if (answer.status !== 200 || typeof json !== "object" || json === null) {
    throw new ProviderApiError(
      "provider_response_invalid",
      `Slack answered the ${what} with HTTP ${answer.status} and no usable result. Try again later.`,
      { status: answer.status },
    );
  }
  const body = json as Record<string, unknown>;
  if (body.ok !== true) {
    // Slack's error codes are short identifiers (`invalid_auth`); anything else is not echoed.
    const slackError =
      typeof body.error === "string" && /^[a-z0-9_]{1,64}$/.test(body.error)
        ? body.error
        : "unknown_error";
    throw new SlackApiError(
      what === "account lookup" ? "provider_account_unreadable" : "provider_revocation_failed",
      `Slack refused the ${what} (${slackError}).`,
      slackError,
    );
  }
  return body;
}
