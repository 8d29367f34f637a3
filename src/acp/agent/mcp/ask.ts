/**
 * Asking the person to sign in to an MCP server, through the ACP client: URL-mode elicitation (`elicitation/create`
 * with `mode: "url"`, scoped to the session) when the client advertised `elicitation.url`, else the session's own
 * text (an `agent_message_chunk` any client shows), and always the agent's stderr. Only the authorization URL
 * crosses ACP: the code comes back to the agent's loopback listener and the tokens stay in its vault (ACP
 * elicitation RFD: tokens MUST NOT travel over ACP).
 */

import { randomUUID } from "node:crypto";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { peerUrl } from "../../../core/display.ts";
import { McpServerAuthError } from "./errors.ts";
import type { SessionMcpServer } from "./servers.ts";

export interface AskChannel {
  /** The ACP client of the connection, if one is connected. */
  client: acp.AgentContext | undefined;
  urlElicitation: boolean;
  stderr: (text: string) => void;
}

/** What a sign-in left to do: the elicitation to mark complete once the person is signed in. */
export interface Asked {
  elicitationId?: string;
}

/**
 * Shows the authorization URL to the person. With elicitation, resolves when the person accepts (the login then
 * waits for the redirect) and throws a typed `sign_in_declined` / `sign_in_cancelled` otherwise, which ends the
 * sign-in: the server stays unauthenticated and the session goes on.
 */
export async function askToSignIn(
  channel: AskChannel,
  sessionId: string,
  server: SessionMcpServer,
  authorizationUrl: URL,
): Promise<Asked> {
  // Our own URL builder made it, but on the authorization server's endpoint: serialise it safely, and never cut
  // it (a cut URL is a broken sign-in); 8 KiB is above what browsers and servers take.
  const url = peerUrl(authorizationUrl, 8192) ?? authorizationUrl.href;
  const message = `The agent needs you to sign in to the MCP server “${server.name}” (${server.displayUrl}).`;
  // The link carries the server's URL whole as its `resource`; a query may hold a key (auth/status shows `?…`),
  // so such a link goes only to the client that gave the URL, never to the agent's stderr (often kept as a log).
  channel.stderr(
    new URL(server.url).search === ""
      ? `${message} Open ${url}\n`
      : `${message} The sign-in link goes to the ACP client only (the server's URL has a query, which may hold a key).\n`,
  );
  const client = channel.client;
  if (!client) {
    throw new McpServerAuthError(
      "no_client",
      `No ACP client is connected to ask the person to sign in to the MCP server “${server.name}”; reconnect and try again.`,
    );
  }
  const inSession = async () => {
    try {
      await client.notify(acp.methods.client.session.update, {
        sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          // A message of its own (v2 requires the id; v1 reads a new id as a new message).
          messageId: randomUUID(),
          content: { type: "text", text: `${message} Open ${url}\n` },
        },
      });
    } catch (error) {
      // The connection closed (the person quit the client): nobody can be asked, and a transport error is no answer.
      throw new McpServerAuthError(
        "no_client",
        `The ACP client disconnected before the sign-in to the MCP server “${server.name}” could be shown; reconnect and try again.`,
        { cause: error },
      );
    }
    return {};
  };
  if (!channel.urlElicitation) return inSession();
  const elicitationId = randomUUID();
  let response: unknown;
  try {
    response = await client.request(acp.methods.client.elicitation.create, {
      mode: "url",
      sessionId,
      elicitationId,
      url,
      message,
    } as acp.CreateElicitationRequest);
  } catch {
    // A client that advertised elicitation but answers it with an error still gets the link another way.
    return inSession();
  }
  const action = (response as { action?: unknown } | null)?.action;
  if (action === "accept") return { elicitationId };
  if (action === "decline") {
    throw new McpServerAuthError(
      "sign_in_declined",
      `You declined signing in to the MCP server “${server.name}”; the agent goes on without it. Ask again to use it.`,
    );
  }
  throw new McpServerAuthError(
    "sign_in_cancelled",
    `Signing in to the MCP server “${server.name}” was cancelled; the agent goes on without it.`,
  );
}

/** `elicitation/complete`: tells the client the URL it opened is done with (sent after a successful sign-in). */
export async function completeElicitation(
  client: acp.AgentContext | undefined,
  asked: Asked,
): Promise<void> {
  if (!client || !asked.elicitationId) return;
  await client
    .notify(acp.methods.client.elicitation.complete, { elicitationId: asked.elicitationId })
    .catch(() => {});
}
