/** The one folder holding all local agentauth state: `$AGENTAUTH_HOME`, else the platform's data directory. */

import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export function agentauthHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AGENTAUTH_HOME) return env.AGENTAUTH_HOME;
  const home = homedir();
  switch (process.platform) {
    case "darwin":
      return join(home, "Library", "Application Support", "agentauth");
    case "win32":
      return join(env.LOCALAPPDATA ?? join(home, "AppData", "Local"), "agentauth");
    default:
      return join(env.XDG_DATA_HOME ?? join(home, ".local", "share"), "agentauth");
  }
}

/** Creates the folder (owner-only) if needed and returns it. */
export function ensureHome(env: NodeJS.ProcessEnv = process.env): string {
  const dir = agentauthHome(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
