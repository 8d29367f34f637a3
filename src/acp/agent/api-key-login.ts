/**
 * `authenticate` for an API-key method (pure apart from the author's `validate`): the key comes from
 * `_meta["api-key"]`, as `{apiKey}` or a plain string (gemini-cli's shape, which clients send), to be stored in the
 * vault; or, when that is absent, from the method's environment variables (acpx and similar clients pass keys only
 * that way; the key stays there and is never copied). Refusals are `-32602` saying what was wrong and what to send
 * instead, naming the variable, never the key.
 */

import * as acp from "@agentclientprotocol/sdk/unstable";
import type { AccountInfo } from "../../vault/types.ts";
import { API_KEY_META, ApiKeyMetaSchema } from "../wire.ts";
import type { ApiKeyMethod } from "./config.ts";
import type { MethodCredentials } from "./credentials.ts";

/** The two shapes `_meta["api-key"]` is read in, for refusals. */
const BOTH_SHAPES = `_meta["${API_KEY_META}"] (a string or {apiKey})`;

/** An accepted key: one passed in `_meta` (the kit stores it) or the environment's (nothing to store). */
export type AcceptedApiKey =
  | { source: "meta"; apiKey: string; account: AccountInfo }
  | { source: "env" };

export async function acceptApiKey(
  method: ApiKeyMethod,
  meta: Record<string, unknown> | undefined,
  credentials: MethodCredentials,
): Promise<AcceptedApiKey> {
  const passed = meta?.[API_KEY_META];
  // acpx and similar clients send no _meta and put the key in the agent's environment instead.
  if (passed === undefined) return acceptEnvApiKey(method, credentials);
  const parsed = ApiKeyMetaSchema.safeParse(passed);
  if (!parsed.success)
    throw acp.RequestError.invalidParams(
      undefined,
      `_meta["${API_KEY_META}"] is not an API key: send the key as a string, or {apiKey: string} (1 to 4096 characters)`,
    );
  const account = method.validate
    ? await method.validate(parsed.data.apiKey)
    : { label: "API key" };
  if (!account) {
    throw acp.RequestError.invalidParams(
      undefined,
      "the API key was refused: it is not signed in and nothing was stored; send a valid key",
    );
  }
  return { source: "meta", apiKey: parsed.data.apiKey, account };
}

/**
 * The key in the method's environment variable, validated but not copied to the vault: the environment stays
 * the source (as for status), so logout has nothing of it to delete and the key never outlives the process.
 */
async function acceptEnvApiKey(
  method: ApiKeyMethod,
  credentials: MethodCredentials,
): Promise<AcceptedApiKey> {
  const fromEnv = credentials.envApiKey(method);
  if (!fromEnv) {
    const names = envVarNames(method).map((n) => `$${n}`);
    throw acp.RequestError.invalidParams(
      undefined,
      `no API key: pass one in ${BOTH_SHAPES}` +
        (names.length > 0 ? `, or set ${names.join(" or ")} in the agent's environment` : ""),
    );
  }
  const account = method.validate
    ? await method.validate(fromEnv.value.reveal())
    : { label: `$${fromEnv.name}` };
  if (!account)
    throw acp.RequestError.invalidParams(
      undefined,
      `the API key in $${fromEnv.name} was refused: set a valid key there, or pass one in ${BOTH_SHAPES}`,
    );
  return { source: "env" };
}

function envVarNames(method: ApiKeyMethod): readonly string[] {
  if (method.envVar === undefined) return [];
  return typeof method.envVar === "string" ? [method.envVar] : method.envVar;
}
