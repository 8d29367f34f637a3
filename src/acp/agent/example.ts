/**
 * The reference agent (`agentauth acp example-agent`): a tiny echo agent whose sessions require login, using the
 * kit against the embedded (or any) authorization server. It speaks ACP v1 and v2 on stdio.
 */

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import * as acp2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { CredentialStore } from "../../vault/types.ts";
import type { AuthMethodConfig } from "./config.ts";
import {
  type AgentAuth,
  type AgentAuthOptions,
  createAgentAuth,
  type SessionPolicy,
} from "./kit.ts";
import { runTerminalLoginIfRequested } from "./terminal.ts";

export const EXAMPLE_AGENT_INFO = {
  name: "agentauth-example-agent",
  title: "agentauth example agent",
  version: "0.1.0",
};

/** The OAuth client id of the example agent (`src/idp` registers it as a public native client). */
export const EXAMPLE_AGENT_CLIENT_ID = "agentauth-example-agent";

export function exampleMethods(issuer: string): AuthMethodConfig[] {
  return [
    {
      kind: "oauth",
      id: "oauth",
      name: "Sign in",
      description: "Sign in with your browser or another device (OAuth device flow)",
      issuer,
      // Its own public client (registered statically at the embedded server), never the CLI's: the agent's
      // tokens, revocations and logout are its own.
      clientId: EXAMPLE_AGENT_CLIENT_ID,
      scope: "openid profile email org offline_access",
      envVar: "AGENTAUTH_EXAMPLE_TOKEN",
    },
    {
      kind: "api-key",
      id: "api-key",
      name: "API key",
      description:
        'A key starting with "echo-", in _meta["api-key"].apiKey or $AGENTAUTH_EXAMPLE_API_KEY',
      // Our own variable, then acpx's convention (ACPX_AUTH_<METHOD_ID>, passed on to the agent it spawns).
      envVar: ["AGENTAUTH_EXAMPLE_API_KEY", "ACPX_AUTH_API_KEY"],
      validate: (key) => (key.startsWith("echo-") ? { label: "Echo API key" } : false),
    },
    {
      kind: "terminal",
      id: "terminal-login",
      name: "Sign in from the terminal",
      args: ["--login"],
      oauthMethodId: "oauth",
    },
  ];
}

export interface ExampleAgentOptions {
  issuer: string;
  store?: CredentialStore;
  env?: NodeJS.ProcessEnv;
  sessionPolicy?: SessionPolicy;
  getAuthState?: AgentAuthOptions["getAuthState"];
}

/** Builds the v1 and v2 apps around one kit; the caller connects them (stdio, or in-process for tests). */
export function buildExampleAgent(options: ExampleAgentOptions): {
  auth: AgentAuth;
  v1: acp.AgentApp;
  v2: acp2.AgentApp;
} {
  const auth = createAgentAuth({
    name: EXAMPLE_AGENT_INFO.name,
    methods: exampleMethods(options.issuer),
    store: options.store,
    env: options.env,
    sessionPolicy: options.sessionPolicy,
    getAuthState: options.getAuthState,
  });
  const v1 = auth
    .installV1(acp.agent({ name: EXAMPLE_AGENT_INFO.name }), { agentInfo: EXAMPLE_AGENT_INFO })
    .onRequest(acp.methods.agent.session.new, () => ({ sessionId: randomUUID() }))
    .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
      await client.notify(acp.methods.client.session.update, {
        sessionId: params.sessionId,
        update: {
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: echo(params.prompt) },
        },
      });
      return { stopReason: "end_turn" };
    });
  const v2 = auth
    .installV2(acp2.agent({ name: EXAMPLE_AGENT_INFO.name }), { info: EXAMPLE_AGENT_INFO })
    .onRequest(acp2.methods.agent.session.new, () => ({ sessionId: randomUUID() }) as never)
    .onRequest(
      acp2.methods.agent.session.prompt,
      async () => ({ stopReason: "end_turn" }) as never,
    );
  return { auth, v1, v2 };
}

/** Runs the example agent on this process's stdio (or its terminal login, when launched with `--login`). */
export async function runExampleAgent(
  options: ExampleAgentOptions & { argv: string[] },
): Promise<number> {
  const { auth, v1, v2 } = buildExampleAgent(options);
  const terminal = await runTerminalLoginIfRequested(auth, options.argv);
  if (terminal !== undefined) return terminal;
  const notice = handRunNotice(Boolean(process.stdin.isTTY));
  if (notice) process.stderr.write(notice);
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout),
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const connection = acp2.agentProtocolRouter().withV1(v1).withV2(v2).connect(stream);
  await connection.closed;
  await auth.credentials.store.close();
  return 0;
}

/**
 * What a person who started the agent by hand sees: stdin is a terminal only then; ACP clients always spawn it on
 * pipes, and their logs (or UI) would show the line on every start, so it stays silent there. stderr, never
 * stdout, which carries only ACP.
 */
export function handRunNotice(stdinIsTerminal: boolean): string | undefined {
  if (!stdinIsTerminal) return undefined;
  return (
    "agentauth example ACP agent: speaking ACP (JSON-RPC) on stdin/stdout; run it from an ACP client, e.g. " +
    "`agentauth acp status -- agentauth acp example-agent`. Ctrl-D quits.\n"
  );
}

function echo(prompt: readonly { type: string; text?: string }[]): string {
  const text = prompt
    .map((block) => (block.type === "text" ? (block.text ?? "") : `[${block.type}]`))
    .join(" ");
  return `echo: ${text}`;
}
