/** The `--tool-auth` / `--tool-secret-file` flags of the RAP runtime commands, turned into an InvocationAuth. */

import { existsSync } from "node:fs";
import { join } from "node:path";
import { agentauthHome } from "../../core/home.ts";
import {
  DEFAULT_INVOCATION_SECRET_FILE,
  type InvocationAuth,
  loadInvocationSecret,
} from "../../rap/invocation-auth.ts";

export const TOOL_AUTH = ["hmac", "bearer", "none"] as const;
export type ToolAuthScheme = (typeof TOOL_AUTH)[number];

/**
 * The invocation authentication the flags name. The default file (`$AGENTAUTH_HOME/rap-invocation.secret`) is
 * created when missing with `create` (the runtime may start before the tool; both then read one secret), or skipped
 * when `optional` (a read-only command). A named file must exist: a typo should not mint a secret no tool knows.
 */
export async function toolAuth(
  scheme: ToolAuthScheme,
  file: string | undefined,
  env: NodeJS.ProcessEnv,
  options: { create?: boolean; optional?: boolean } = {},
): Promise<InvocationAuth | undefined> {
  if (scheme === "none") return undefined;
  const path = file ?? join(agentauthHome(env), DEFAULT_INVOCATION_SECRET_FILE);
  if (file === undefined && options.optional && !existsSync(path)) return undefined;
  const secret = await loadInvocationSecret(path, { create: file === undefined && options.create });
  return scheme === "bearer" ? { scheme: "bearer", secret } : { scheme: "hmac-sha256", secret };
}
