/**
 * Toolset discovery: `GET {base}/.well-known/rap-toolset`, validated whole (an invalid toolset is rejected, never
 * partly loaded), then indexed by tool name, where a name two toolsets share exposes neither tool (RAP §Toolsets).
 */

import type { InvocationAuth } from "../invocation-auth.ts";
import { MAX_BODY_BYTES, TOOLSET_PATH, type Toolset, ToolsetSchema } from "../wire.ts";
import { ToolsetDiscoveryError } from "./errors.ts";
import { describeEndpoint, joinBase, networkReason, readLimitedText, urlProblem } from "./http.ts";
import { type ArgumentsValidator, createSchemaCompiler } from "./input-schema.ts";
import { authHeaders, challengedScheme, unauthorizedText } from "./toolset-config.ts";

export const DEFAULT_DISCOVERY_TIMEOUT_MS = 10_000;

/** A tool as the runtime exposes it: the wire fields plus where it came from and its compiled argument check. */
export interface LoadedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Toolset["tools"][number]["annotations"];
  /** `annotations.requiresAuth`: the auth provider the tool may ask the user to authorize. */
  requiresAuth: string | undefined;
  /** The toolset's name (from the document). */
  toolset: string;
  /** The configured base URL the toolset was discovered from (`close_thread`, `cancel_tool_call` go there). */
  baseUrl: string;
  /** The toolset's `endpoint`: invocations go there. */
  endpoint: string;
  validate: ArgumentsValidator;
}

export interface LoadedToolset {
  baseUrl: string;
  toolset: Toolset;
  tools: LoadedTool[];
}

export interface NameClash {
  name: string;
  /** The toolsets that declared it, by name; none of their `name` tools is exposed. */
  toolsets: string[];
}

export interface Discovery {
  toolsets: LoadedToolset[];
  /** Exposed tools by name: clashing names are absent. */
  tools: Map<string, LoadedTool>;
  clashes: NameClash[];
  /** Base URLs whose fetch failed this time (a cached toolset, when there was one, is still in `toolsets`). */
  failures: ToolsetDiscoveryError[];
}

export interface DiscoveryOptions {
  fetch?: typeof fetch;
  timeoutMs?: number;
  allowInsecureHttp?: boolean;
  /** The invocation authentication for a base URL, sent with its toolset GET too (a tool may require it there). */
  authFor?: (baseUrl: string) => InvocationAuth | undefined;
}

/** Pure: checks a discovery document and compiles every `inputSchema`; any problem rejects the toolset whole. */
export function checkToolset(
  baseUrl: string,
  body: unknown,
  options: { allowInsecureHttp?: boolean } = {},
): LoadedToolset {
  const invalid = (why: string, cause?: unknown) =>
    new ToolsetDiscoveryError(
      "rap_toolset_invalid",
      baseUrl,
      `The RAP toolset at ${describeEndpoint(baseUrl)} was rejected whole: ${why}. Fix the tool server's ` +
        `${TOOLSET_PATH} document; none of its tools is loaded until then.`,
      { cause, reason: why },
    );
  const parsed = ToolsetSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      `${issue?.path.join(".") || "(document)"}: ${issue?.message ?? "invalid"}`,
      parsed.error,
    );
  }
  const toolset = parsed.data;
  const endpointProblem = urlProblem(toolset.endpoint, options.allowInsecureHttp ?? false);
  if (endpointProblem) throw invalid(`its endpoint ${endpointProblem}`);
  const seen = new Set<string>();
  const compile = createSchemaCompiler();
  const tools = toolset.tools.map((tool): LoadedTool => {
    if (seen.has(tool.name)) throw invalid(`tool name "${tool.name}" appears twice`);
    seen.add(tool.name);
    let validate: ArgumentsValidator;
    try {
      validate = compile(tool.inputSchema);
    } catch (error) {
      throw invalid(
        `tool "${tool.name}" has an invalid inputSchema (${(error as Error).message})`,
        error,
      );
    }
    return {
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: tool.annotations,
      requiresAuth: tool.annotations?.requiresAuth,
      toolset: toolset.name,
      baseUrl,
      endpoint: toolset.endpoint,
      validate,
    };
  });
  return { baseUrl, toolset, tools };
}

/** Fetches one toolset. No redirects: the document must be where the runtime was configured to look (pinned URL). */
export async function fetchToolset(
  baseUrl: string,
  options: DiscoveryOptions = {},
): Promise<LoadedToolset> {
  const allowInsecureHttp = options.allowInsecureHttp ?? false;
  const unreachable = (why: string, cause?: unknown) =>
    new ToolsetDiscoveryError(
      "rap_toolset_unreachable",
      baseUrl,
      `Cannot load the RAP toolset from ${describeEndpoint(baseUrl)}: ${why}. Check that the tool server is ` +
        `running and serves ${TOOLSET_PATH} under that base URL.`,
      { cause, reason: why },
    );
  const problem = urlProblem(baseUrl, allowInsecureHttp);
  if (problem) throw unreachable(`the base URL ${problem}`);
  const url = joinBase(baseUrl, TOOLSET_PATH);
  const auth = options.authFor?.(baseUrl);
  const get = async (notBeforeMs?: number): Promise<Response> => {
    try {
      return await (options.fetch ?? fetch)(url, {
        headers: {
          accept: "application/json",
          ...authHeaders(auth, { method: "GET", url, body: "", notBeforeMs }),
        },
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_DISCOVERY_TIMEOUT_MS),
      });
    } catch (error) {
      throw unreachable(networkReason(error), error);
    }
  };
  const signedAt = Date.now();
  let response = await get();
  if (response.status === 401 && auth?.scheme === "hmac-sha256") {
    // The same GET signed in the same second by a runtime that just restarted is, to the tool, a replay: sign once
    // more in the next second. A wrong secret is refused again, and reported below.
    await response.body?.cancel();
    const nextSecond = (Math.floor(signedAt / 1000) + 1) * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, nextSecond - Date.now())));
    response = await get(nextSecond);
  }
  if (response.status === 401) {
    await response.body?.cancel();
    const scheme = challengedScheme(response.headers.get("www-authenticate"));
    throw new ToolsetDiscoveryError(
      "rap_toolset_unreachable",
      baseUrl,
      `Cannot load the RAP toolset: ${unauthorizedText("the tool server", url, auth, scheme)}`,
      { reason: "HTTP 401: the tool refused the runtime's credentials" },
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw unreachable(`it answered HTTP ${response.status}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(await readLimitedText(response, MAX_BODY_BYTES));
  } catch (error) {
    throw new ToolsetDiscoveryError(
      "rap_toolset_invalid",
      baseUrl,
      `The RAP toolset at ${describeEndpoint(baseUrl)} was rejected whole: its body is not JSON within ` +
        `${MAX_BODY_BYTES} bytes (${(error as Error).message}).`,
      { cause: error, reason: "the body is not JSON within the size limit" },
    );
  }
  return checkToolset(baseUrl, body, { allowInsecureHttp });
}

/** Pure: the exposed tools by name. A name declared by two or more toolsets is exposed by none of them. */
export function indexTools(toolsets: readonly LoadedToolset[]): {
  tools: Map<string, LoadedTool>;
  clashes: NameClash[];
} {
  const byName = new Map<string, LoadedTool[]>();
  for (const set of toolsets) {
    for (const tool of set.tools) byName.set(tool.name, [...(byName.get(tool.name) ?? []), tool]);
  }
  const tools = new Map<string, LoadedTool>();
  const clashes: NameClash[] = [];
  for (const [name, candidates] of byName) {
    if (candidates.length === 1 && candidates[0]) tools.set(name, candidates[0]);
    else clashes.push({ name, toolsets: candidates.map((t) => t.toolset) });
  }
  return { tools, clashes };
}

/**
 * Discovers every base URL concurrently. A base URL that fails keeps its `previous` toolset when there is one
 * (RAP §Lifecycle: a toolset-fetch failure SHOULD fall back to the cache); every failure is reported in `failures`.
 */
export async function discoverToolsets(
  baseUrls: readonly string[],
  options: DiscoveryOptions = {},
  previous: ReadonlyMap<string, LoadedToolset> = new Map(),
): Promise<Discovery> {
  const unique = [...new Set(baseUrls)];
  const settled = await Promise.allSettled(unique.map((base) => fetchToolset(base, options)));
  const toolsets: LoadedToolset[] = [];
  const failures: ToolsetDiscoveryError[] = [];
  settled.forEach((outcome, i) => {
    const base = unique[i] as string;
    if (outcome.status === "fulfilled") toolsets.push(outcome.value);
    else {
      const cached = previous.get(base);
      if (cached) toolsets.push(cached);
      failures.push(outcome.reason as ToolsetDiscoveryError);
    }
  });
  return { toolsets, failures, ...indexTools(toolsets) };
}
