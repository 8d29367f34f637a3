/**
 * Opens a URL in the person's browser, for the background sign-in: `$BROWSER` when set (the convention of many Unix
 * tools: a command, the URL appended as its last argument), else the platform's opener (`open` on macOS,
 * `rundll32 url.dll,FileProtocolHandler` on Windows, `xdg-open` on Linux when there is a display). The URL is one
 * argument of a process started without a shell, so nothing in it is interpreted. The opener does not get
 * agentauth's own variables (AGENTAUTH_VAULT_KEY, AGENTAUTH_DATABASE_URL). It is waited for (10 s at most, then
 * killed): every process agentauth starts, it also ends.
 */

import { spawn } from "node:child_process";

const OPENER_TIMEOUT_MS = 10_000;

export type OpenOutcome = "opened" | "no-browser" | "failed";

export function browserCommand(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform = process.platform,
): string[] | undefined {
  const chosen = env.BROWSER?.trim();
  if (chosen) return chosen.split(/\s+/);
  if (platform === "darwin") return ["open"];
  if (platform === "win32") return ["rundll32", "url.dll,FileProtocolHandler"];
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return ["xdg-open"];
  return undefined;
}

export function openBrowser(
  url: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<OpenOutcome> {
  const command = browserCommand(env);
  if (!command) return Promise.resolve("no-browser");
  const [file, ...args] = command as [string, ...string[]];
  return new Promise((resolve) => {
    const child = spawn(file, [...args, url], { stdio: "ignore", env: browserEnv(env) });
    const timer = setTimeout(() => child.kill("SIGKILL"), OPENER_TIMEOUT_MS);
    child.on("error", () => {
      clearTimeout(timer);
      resolve("failed");
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? "opened" : "failed");
    });
  });
}

/** The environment a browser gets: the person's, without agentauth's own settings (the vault key among them). */
function browserEnv(env: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const merged: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const name of Object.keys(merged)) if (name.startsWith("AGENTAUTH_")) delete merged[name];
  return merged;
}
