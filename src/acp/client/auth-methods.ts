/**
 * The `authMethods` an agent advertises in `initialize`, read into one shape whatever the wire said: ACP v1 (`id`,
 * no `type` means `agent`, terminal `env` an object), ACP v2 (`methodId`, `type` required, terminal `env` an array
 * of `{name, value}`), and the removed `env_var` type some agents still send (dirac, glm-acp-agent). Pure.
 */

import { peerText } from "../../core/display.ts";

/** A method type: `agent`, `terminal`, the legacy `env_var`, or a custom/future one (kept, never run). */
export type AuthMethodType = "agent" | "terminal" | "env_var" | (string & {});

/** One variable of a legacy `env_var` method (unstable v1 `AuthEnvVar`: `secret` defaults true, `optional` false). */
export interface EnvVarSpec {
  name: string;
  label?: string;
  secret: boolean;
  optional: boolean;
}

export interface AdvertisedAuthMethod {
  id: string;
  name: string;
  description?: string;
  type: AuthMethodType;
  /** `terminal`: arguments appended to the configured agent invocation. */
  args: readonly string[];
  /** `terminal`: variables overlaid on the configured environment (v1 object or v2 array, normalised). */
  env: Readonly<Record<string, string>>;
  /** `env_var`: the variables the person supplies. */
  vars: readonly EnvVarSpec[];
  /** `env_var`: where the person gets the credential. */
  link?: string;
  /** A legacy terminal login described in `_meta` of a method that is `agent` on the wire (see `readLegacyTerminal`). */
  terminal?: LegacyTerminal;
  /** The method takes an API key in `authenticate`'s `_meta["api-key"]` (gemini-cli marks it so; ids say `api-key`). */
  takesApiKey: boolean;
}

/**
 * Terminal logins from before `type: "terminal"` (issue 8 §3.7):
 * - `terminal-auth`: `_meta["terminal-auth"] {command, args, env?, label?}` (claude-code-acp 0.16, opencode, Copilot
 *   CLI), sent when the client opts in with `clientCapabilities._meta["terminal-auth"]: true`. It names its own
 *   command, so a client runs it only once a person agreed.
 * - `meta-type`: qwen-code's `_meta: {type: "terminal", args}`, read like the spec's terminal type (args appended to
 *   the configured agent command).
 */
export interface LegacyTerminal {
  style: "terminal-auth" | "meta-type";
  /** `terminal-auth` only: the program the agent asks to run. */
  command?: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  label?: string;
}

/**
 * Variable names we accept from an agent: POSIX portable names (IEEE Std 1003.1 §8.1). They are shown to the person
 * before a terminal login runs, so control, bidi or shell-special characters must never reach that line.
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Reads `authMethods`. Entries that are not objects or have no id are dropped, and so are repeated ids (the first
 * wins): a client cannot pick between two methods with one id. Both id spellings are accepted in both versions,
 * because agents mid-migration send either.
 */
export function readAuthMethods(raw: unknown, version: 1 | 2): AdvertisedAuthMethod[] {
  if (!Array.isArray(raw)) return [];
  const seen = new Set<string>();
  const methods: AdvertisedAuthMethod[] = [];
  for (const entry of raw) {
    const method = readAuthMethod(entry, version);
    if (!method || seen.has(method.id)) continue;
    seen.add(method.id);
    methods.push(method);
  }
  return methods;
}

function readAuthMethod(entry: unknown, version: 1 | 2): AdvertisedAuthMethod | undefined {
  if (!isRecord(entry)) return undefined;
  const primary = version === 2 ? entry.methodId : entry.id;
  const fallback = version === 2 ? entry.id : entry.methodId;
  const id = nonEmpty(primary) ?? nonEmpty(fallback);
  if (!id) return undefined;
  // v1: "When no `type` is present, the method is treated as `agent`." v2 requires `type`; we read a missing one the
  // same way rather than drop the method.
  const type = nonEmpty(entry.type) ?? "agent";
  const env = type === "terminal" ? readEnv(entry.env) : {};
  // A terminal method whose variables we cannot show as they are is refused whole, not run with some dropped.
  if (env === undefined) return undefined;
  return {
    id,
    name: nonEmpty(entry.name) ?? id,
    description: nonEmpty(entry.description),
    type,
    args: type === "terminal" ? readArgs(entry.args) : [],
    env,
    vars: type === "env_var" ? readVars(entry.vars) : [],
    link: type === "env_var" ? nonEmpty(entry.link) : undefined,
    ...(type === "agent" ? legacyTerminal(entry._meta) : {}),
    takesApiKey:
      type === "agent" &&
      ((isRecord(entry._meta) && entry._meta["api-key"] !== undefined) || API_KEY_ID.test(id)),
  };
}

const API_KEY_ID = /(^|[-_])api[-_]?key($|[-_])/i;

const MAX_WORDS = 64;
const MAX_WORD = 300;

function showable(word: unknown): boolean {
  return (
    typeof word === "string" &&
    word.length <= MAX_WORD &&
    peerText(word, { max: MAX_WORD }) === word
  );
}

function legacyTerminal(meta: unknown): { terminal?: LegacyTerminal } {
  if (!isRecord(meta)) return {};
  const described = meta["terminal-auth"];
  if (isRecord(described) && nonEmpty(described.command)) {
    // The person is shown this command exactly before it runs: a word that cannot be shown as it is (control or
    // bidi characters, too long) or too many of them, and the descriptor is not used at all.
    const words = [described.command, ...readArgs(described.args)];
    const env = readEnv(described.env);
    if (env === undefined) return {};
    const shown = [...words, ...Object.keys(env), ...Object.values(env)];
    if (words.length > MAX_WORDS || !shown.every(showable)) return {};
    return {
      terminal: {
        style: "terminal-auth",
        command: described.command as string,
        args: readArgs(described.args),
        env,
        label: nonEmpty(described.label),
      },
    };
  }
  if (meta.type === "terminal") {
    const env = readEnv(meta.env);
    if (env === undefined) return {};
    return { terminal: { style: "meta-type", args: readArgs(meta.args), env } };
  }
  return {};
}

function readArgs(raw: unknown): string[] {
  return Array.isArray(raw) ? raw.filter((arg): arg is string => typeof arg === "string") : [];
}

/**
 * v1: `{NAME: value}`; v2: `[{name, value}]` (names unique). Either shape is accepted in either version. Undefined
 * when a name is not a portable variable name: the caller refuses the method.
 */
function readEnv(raw: unknown): Record<string, string> | undefined {
  const env: Record<string, string> = {};
  let refused = false;
  const put = (name: unknown, value: unknown) => {
    if (typeof name === "string" && !ENV_NAME.test(name)) refused = true;
    else if (typeof name === "string" && typeof value === "string") env[name] = value;
  };
  if (Array.isArray(raw)) {
    for (const item of raw) if (isRecord(item)) put(item.name, item.value);
  } else if (isRecord(raw)) {
    for (const [name, value] of Object.entries(raw)) put(name, value);
  }
  return refused ? undefined : env;
}

function readVars(raw: unknown): EnvVarSpec[] {
  if (!Array.isArray(raw)) return [];
  const vars: EnvVarSpec[] = [];
  for (const item of raw) {
    if (!isRecord(item) || typeof item.name !== "string" || !ENV_NAME.test(item.name)) continue;
    vars.push({
      name: item.name,
      label: nonEmpty(item.label),
      secret: item.secret !== false,
      optional: item.optional === true,
    });
  }
  return vars;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
