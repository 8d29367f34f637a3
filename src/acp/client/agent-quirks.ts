/**
 * What measured agents do that their `initialize` answer does not say, as data (as `src/oauth/quirks/` is for
 * providers): where an API key must go, which variables a method needs, where the key lives afterwards, and which
 * methods cannot finish over ACP. Keyed by `agentInfo.name`; each entry names the version it was read from (the
 * agent's published sources) and measured with (docs/acp.md, "The client against real agents"). An agent not listed
 * gets the generic reading of its methods (method-needs.ts). Pure data.
 */

/** Where a key given to `login({apiKey})` goes. */
export type KeyQuirk =
  /** `_meta["api-key"]` as a plain string; the key then counts as the variable `standsFor`. */
  | { meta: "string"; standsFor: string }
  /** A variable of the agent's environment: the agent is restarted with it before `authenticate`. */
  | { env: string };

export interface MethodQuirk {
  key?: KeyQuirk;
  /** Variables the method needs in the agent's environment; any one set suffices. */
  needs?: readonly (readonly string[])[];
  /** The agent checks `needs` itself and answers why it refuses: `authenticate` is sent even when they look unset. */
  agentChecks?: boolean;
  /** Where the key lives after the login: only in the agent's process (read anew at each start), or a file. */
  keyLives?: "process" | { file: string };
  /** The method's legacy terminal descriptor starts the agent's ACP server again: it is never run as a login. */
  terminalIsServer?: boolean;
  /** An `agent` method that shows nothing anywhere while it waits: what the person can do. */
  silent?: string;
  /** What works instead when the method asks for input on the agent's stdin (the ACP channel); starts lower-case. */
  instead?: string;
}

export interface AgentQuirks {
  /** The version whose sources and behaviour this entry describes. */
  measured: string;
  methods: Readonly<Record<string, MethodQuirk>>;
}

const GEMINI_KEY = "GEMINI_API_KEY";

export const AGENT_QUIRKS: Readonly<Record<string, AgentQuirks>> = {
  // bundle/gemini-*.js GeminiAgent.authenticate: `typeof meta?.["api-key"] === "string"`; it checks no key, and a
  // method other than the selected one first clears the cached Google sign-in. createContentGeneratorConfig reads
  // GEMINI_API_KEY, GOOGLE_API_KEY, GOOGLE_CLOUD_PROJECT(_ID) + GOOGLE_CLOUD_LOCATION; the gateway's URL is
  // GOOGLE_GEMINI_BASE_URL. settings.json keeps only the selected method, never the key.
  "gemini-cli": {
    measured: "0.61.0",
    methods: {
      "oauth-personal": {
        instead:
          "run `gemini` once in a terminal and sign in with Google there (Gemini CLI caches that sign-in for " +
          `later starts), or use the API-key method gemini-api-key with ${GEMINI_KEY} set.`,
      },
      "gemini-api-key": {
        key: { meta: "string", standsFor: GEMINI_KEY },
        needs: [[GEMINI_KEY]],
        keyLives: "process",
      },
      "vertex-ai": {
        key: { env: "GOOGLE_API_KEY" },
        needs: [
          ["GOOGLE_API_KEY"],
          ["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION"],
          ["GOOGLE_CLOUD_PROJECT_ID", "GOOGLE_CLOUD_LOCATION"],
        ],
        keyLives: "process",
      },
      gateway: {
        key: { meta: "string", standsFor: GEMINI_KEY },
        needs: [["GOOGLE_GEMINI_BASE_URL"]],
        keyLives: "process",
      },
    },
  },
  // src/codex_agent.rs: `chatgpt` runs codex_login's server on 127.0.0.1:1455 and blocks until a browser comes back;
  // the key methods read read_codex_api_key_from_env / read_openai_api_key_from_env and store the key with
  // login_with_api_key in $CODEX_HOME/auth.json, which `logout` deletes.
  "codex-acp": {
    measured: "0.16.0",
    methods: {
      chatgpt: {
        silent:
          "Its ChatGPT login waits for a browser on the machine it runs on, at http://127.0.0.1:1455 (it opens " +
          "one there if it can, and says nothing over ACP). If no browser opened, stop waiting and sign in with the " +
          "Codex CLI in a terminal (`codex login --device-auth`; codex-acp reads the ~/.codex/auth.json it writes).",
      },
      "codex-api-key": {
        key: { env: "CODEX_API_KEY" },
        keyLives: { file: "~/.codex/auth.json ($CODEX_HOME/auth.json)" },
      },
      "openai-api-key": {
        key: { env: "OPENAI_API_KEY" },
        keyLives: { file: "~/.codex/auth.json ($CODEX_HOME/auth.json)" },
      },
    },
  },
  // chunks/acpAgent-*.js buildAuthMethods: `_meta: {type: "terminal", args: ["--auth-type=openai"]}`, which is
  // `qwen --acp --auth-type=openai`, its ACP server again. QwenAgent.authenticate resolves the model and key from
  // the environment or settings.json and answers -32603 with data.details naming what is missing.
  "qwen-code": {
    measured: "0.24.4",
    methods: {
      openai: {
        key: { env: "OPENAI_API_KEY" },
        needs: [["OPENAI_API_KEY"]],
        agentChecks: true,
        keyLives: "process",
        terminalIsServer: true,
      },
    },
  },
};

export function methodQuirk(
  agentName: string | undefined,
  methodId: string,
): MethodQuirk | undefined {
  if (agentName === undefined || !Object.hasOwn(AGENT_QUIRKS, agentName)) return undefined;
  const methods = AGENT_QUIRKS[agentName]?.methods;
  return methods && Object.hasOwn(methods, methodId) ? methods[methodId] : undefined;
}
