/**
 * The Slack Web API calls around the OAuth grant: `auth.test` for the account and `auth.revoke` for sign-out, and
 * the scope list in Slack's comma-separated form. Every Slack method answers HTTP 200 with `ok: false` and a short
 * machine-readable `error` on failure ("Web API basics", https://docs.slack.dev/apis/web-api/).
 */

import {
  ACCESS_TOKEN_REJECTED,
  type AccountContext,
  type ProviderAccount,
  type RevocationOutcome,
  type RevokeContext,
} from "../oauth/index.ts";
import { apiRequest, str } from "./api.ts";
import { ProviderApiError } from "./errors.ts";

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
 * access token that has expired (`token_expired`, after 12 h) cannot call auth.revoke itself: `logout()` refreshes
 * an expired token through the engine first (the rotated tokens stored before use), and when Slack still says
 * `token_expired` (the clocks disagree) ACCESS_TOKEN_REJECTED has it refresh once more and retry. The refresh is
 * never done here: a single-use refresh token spent without storing its successor would be lost.
 */
export async function slackRevoke(
  urls: { revoke: string },
  context: RevokeContext,
): Promise<{ refreshToken: RevocationOutcome; accessToken: RevocationOutcome }> {
  const gone = { refreshToken: "absent", accessToken: "absent" } as const;
  if (!context.accessToken) return gone;
  try {
    await slackCall(urls.revoke, context, "revocation", bearer(context.accessToken.reveal()));
    return { refreshToken: context.refreshToken ? "revoked" : "absent", accessToken: "revoked" };
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
  throw new ProviderApiError(
    ACCESS_TOKEN_REJECTED,
    "Slack says this credential's access token has expired, even after a refresh, so it could not be revoked. " +
      "Try again in a moment; if it persists, remove the app at https://slack.com/apps/manage and delete the " +
      "credential (agentauth vault delete).",
  );
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
