/**
 * What `agentauth acp` prints: the status summary, `--json` objects built field by field from what was parsed
 * (nothing the agent sent in `_meta` passes through), the agent's name, and URLs the agent printed on stderr. Every
 * piece of agent text goes through `peerText`/`peerUrl`.
 */

import {
  type AcpAuthClient,
  type AuthStatus,
  agentDisplayName,
  isOpenableUrl,
} from "../../acp/client/index.ts";
import { peerText, peerUrl } from "../../core/display.ts";

/** The agent's name for messages: `agentInfo.title`, else `name`, else the command's basename (issue 8 §4.1). */
export function agentName(client: AcpAuthClient, command: string): string {
  return agentDisplayName(client.profile, command);
}

export function statusJson(client: AcpAuthClient, status: AuthStatus) {
  const { profile } = client;
  return {
    protocolVersion: profile.protocolVersion,
    agent: profile.agent ? { name: profile.agent.name, version: profile.agent.version } : null,
    authMethods: profile.authMethods.map((m) => ({
      id: m.id,
      name: m.name,
      type: m.type,
      ...(m.terminal ? { terminalLogin: true } : {}),
    })),
    capabilities: {
      logout: profile.capabilities.logout,
      status: profile.capabilities.status,
      getAuthState: profile.capabilities.getAuthState,
    },
    state: status.state,
    accounts: status.accounts,
    source: status.source,
    ...(status.reason ? { reason: status.reason } : {}),
    ...(status.unrecognizedState ? { unrecognizedState: status.unrecognizedState } : {}),
    ...(status.hint ? { hint: { state: status.hint.state, label: status.hint.label } } : {}),
  };
}

export function statusText(client: AcpAuthClient, name: string, status: AuthStatus): string {
  const { profile } = client;
  const lines = [
    `${name}${profile.agent?.version ? ` ${peerText(profile.agent.version)}` : ""} (ACP v${profile.protocolVersion})`,
    `State:    ${status.state}${status.source === "none" ? "" : ` (from ${status.source})`}`,
  ];
  if (status.reason) lines.push(`          ${peerText(status.reason)}`);
  // A pushed state (claude-agent-acp) is the state itself, not a hint beside it.
  if (status.hint && status.source !== "_auth/status_update")
    lines.push(
      `Hint:     ${status.hint.state}${status.hint.label ? ` (${peerText(status.hint.label)})` : ""}`,
    );
  for (const a of status.accounts) {
    const who = [
      a.name,
      a.email ? `<${a.email}>` : undefined,
      a.organization ? `(${a.organization})` : undefined,
    ]
      .filter(Boolean)
      .join(" ");
    lines.push(
      `Account:  ${peerText(a.label)}${who ? ` ${peerText(who)}` : ""}${a.active ? " [active]" : ""}`,
    );
  }
  for (const m of profile.authMethods) {
    const legacy = m.terminal ? " [terminal login in _meta]" : "";
    lines.push(`Method:   ${peerText(m.id)} (${peerText(m.type)}) ${peerText(m.name)}${legacy}`);
  }
  if (profile.authMethods.length === 0) lines.push("Method:   none advertised");
  lines.push(`Logout:   ${profile.capabilities.logout ? "supported" : "not supported"}`);
  return `${lines.join("\n")}\n`;
}

/** Who is signed in, for "Already signed in to X as Y": the active account, else the first, else nothing. */
export function signedInAs(status: AuthStatus): string {
  const account = status.accounts.find((a) => a.active) ?? status.accounts[0];
  const label = account?.label ?? status.hint?.label;
  return label ? ` as ${peerText(label, { max: 100 })}` : "";
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>`]+/g;

/**
 * Text the agent printed (stderr, or stdout lines that are not ACP), watched for sign-in links (codex's `chatgpt` login and gemini's `oauth-personal` print theirs
 * there and nothing over ACP): each new openable URL is shown once, sanitised. Nothing else of stderr is printed.
 */
export function textLinks(show: (url: string) => void): (chunk: string) => void {
  const seen = new Set<string>();
  let partial = "";
  return (chunk) => {
    const text = partial + chunk;
    const end = text.lastIndexOf("\n");
    // Keep an unfinished line for the next chunk (bounded: a URL is not megabytes long).
    partial = end === -1 ? text.slice(-8192) : text.slice(end + 1).slice(-8192);
    const complete = end === -1 ? "" : text.slice(0, end);
    for (const match of complete.matchAll(URL_IN_TEXT)) {
      const candidate = match[0].replace(/[.,;:)\]]+$/, "");
      const url = isOpenableUrl(candidate) ? peerUrl(candidate) : undefined;
      if (!url || seen.has(url) || seen.size > 20) continue;
      seen.add(url);
      show(url);
    }
  };
}
