/**
 * Getting back in without a restart. A running console keeps `console.json` (0600) beside the vault it shows:
 * its address, its process, and a link key (256 bits). `agentauth console --link` reads the file and asks the
 * console for a fresh one-time link (`POST /api/link`, `Authorization: Bearer <link key>`). Whoever can read the
 * file can already read the vault's key file in the same folder, so the guard is as strong as before: a browser,
 * another site or another user of the machine still has no way in.
 */

import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AgentAuthError } from "../core/errors.ts";
import { writeSecretFileSync } from "../core/secret-file.ts";
import { isLeaseOwnerGone, leaseOwnerId } from "../vault/lease-owner.ts";

export const CONSOLE_LINK_FILE = "console.json";

/** No running console could give a link. */
export class ConsoleLinkError extends AgentAuthError {}

interface LinkFile {
  kind: "agentauth-console";
  url: string;
  pid: number;
  owner: string;
  linkKey: string;
}

/** Writes the file for this console; returns a remover that leaves a newer console's file alone. */
export function writeLinkFile(path: string, url: string, linkKey: string): () => void {
  const content: LinkFile = {
    kind: "agentauth-console",
    url,
    pid: process.pid,
    owner: leaseOwnerId(),
    linkKey,
  };
  writeSecretFileSync(path, `${JSON.stringify(content)}\n`);
  return () => {
    if (readLinkFile(path)?.owner === content.owner) rmSync(path, { force: true });
  };
}

function readLinkFile(path: string): LinkFile | undefined {
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as Partial<LinkFile>;
    if (value.kind !== "agentauth-console" || typeof value.url !== "string") return undefined;
    if (typeof value.linkKey !== "string" || typeof value.owner !== "string") return undefined;
    if (typeof value.pid !== "number") return undefined;
    return value as LinkFile;
  } catch {
    return undefined;
  }
}

/** Where a running console's file may be: the home's own console, then the demo's folder under it. */
export function linkFileCandidates(home: string): string[] {
  return [join(home, CONSOLE_LINK_FILE), join(home, "demo", CONSOLE_LINK_FILE)];
}

/** A fresh one-time login link from the first running console found in `paths`. */
export async function requestLoginLink(
  paths: readonly string[],
): Promise<{ url: string; loginUrl: string; pid: number }> {
  let unreachable: string | undefined;
  for (const path of paths) {
    const file = readLinkFile(path);
    if (!file || isLeaseOwnerGone(file.owner)) continue;
    let response: Response;
    try {
      response = await fetch(new URL("/api/link", file.url), {
        method: "POST",
        headers: { authorization: `Bearer ${file.linkKey}`, "content-type": "application/json" },
        body: "{}",
        redirect: "manual",
        signal: AbortSignal.timeout(10_000),
      });
    } catch {
      unreachable = file.url;
      continue;
    }
    const body = (await response.json().catch(() => ({}))) as { loginUrl?: unknown };
    if (response.ok && typeof body.loginUrl === "string") {
      return { url: file.url, loginUrl: body.loginUrl, pid: file.pid };
    }
    unreachable = file.url;
  }
  throw new ConsoleLinkError(
    "console_not_running",
    unreachable
      ? `The console at ${unreachable} did not answer; if it was stopped, start it again (\`agentauth console\`, or \`agentauth demo\` for the demo) and open the link it prints.`
      : `No running console was found (looked for ${paths.join(" and ")}). Start one with \`agentauth console\` (or \`agentauth demo\` for the demo); for a demo in another folder, run this with AGENTAUTH_HOME set to that folder.`,
  );
}
