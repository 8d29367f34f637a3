/**
 * The toolset document (RAP §Toolsets) and the operation table behind it, built once at startup: every
 * `inputSchema` compiled with ajv (draft 2020-12), every `requiresAuth` checked against the providers, and the
 * document validated with the same ToolsetSchema the runtime parses it with. Any problem is a startup error.
 */

import ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import { type Toolset, ToolsetSchema } from "../wire.ts";
import { ToolConfigError } from "./errors.ts";
import type { OperationDefinition, ToolServerOptions } from "./options.ts";

// ajv is CommonJS: under nodenext the default import is `module.exports`, whose `default` is the class.
const Ajv2020 = ajv2020.default;

export interface CompiledOperation {
  definition: OperationDefinition;
  validate: ValidateFunction;
}

export type OperationTable = ReadonlyMap<string, CompiledOperation>;

/**
 * The tool kit's JSON Schema compiler. Strict, so a typo in a keyword is a startup error instead of a silently
 * ignored constraint. Formats are not validated (no ajv-formats dependency); they stay annotations. The MCP bridge
 * uses the same one to tell in advance which server schemas the tool kit will accept.
 */
export function schemaCompiler(): InstanceType<typeof Ajv2020> {
  return new Ajv2020({
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    validateFormats: false,
    logger: false,
  });
}

export function compileOperations(
  operations: OperationDefinition[],
  providers: ToolServerOptions["providers"] = {},
): OperationTable {
  const ajv = schemaCompiler();
  const table = new Map<string, CompiledOperation>();
  for (const definition of operations) {
    const { name } = definition;
    if (table.has(name))
      throw new ToolConfigError("duplicate_operation", `Operation "${name}" is declared twice.`);
    if (typeof definition.handler !== "function") {
      throw new ToolConfigError("handler_missing", `Operation "${name}" has no handler function.`);
    }
    const provider = definition.requiresAuth;
    if (provider !== undefined && !Object.hasOwn(providers, provider)) {
      throw new ToolConfigError(
        "provider_unknown",
        `Operation "${name}" requires the OAuth provider "${provider}", which is not configured in \`providers\`.`,
      );
    }
    const annotated = definition.annotations?.requiresAuth;
    if (annotated !== undefined && annotated !== provider) {
      throw new ToolConfigError(
        "requires_auth_mismatch",
        `Operation "${name}": set \`requiresAuth\` (not only annotations.requiresAuth) so the tool runs the OAuth flow.`,
      );
    }
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(definition.inputSchema);
    } catch (error) {
      throw new ToolConfigError(
        "input_schema_invalid",
        `Operation "${name}" has an invalid inputSchema (JSON Schema 2020-12): ${(error as Error).message}`,
        { cause: error },
      );
    }
    table.set(name, { definition, validate });
  }
  return table;
}

/** The document served at `/.well-known/rap-toolset`, validated before it is ever served. */
export function buildToolset(
  info: ToolServerOptions["toolset"],
  operations: OperationTable,
  endpoint: string,
): Toolset {
  const document = {
    name: info.name,
    ...(info.description !== undefined ? { description: info.description } : {}),
    endpoint,
    tools: [...operations.values()].map(({ definition }) => ({
      name: definition.name,
      description: definition.description,
      inputSchema: definition.inputSchema,
      ...annotationsOf(definition),
      ...(definition.displayScript !== undefined
        ? { displayScript: definition.displayScript }
        : {}),
    })),
  };
  const parsed = ToolsetSchema.safeParse(document);
  if (!parsed.success) {
    const where = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      .join("; ");
    throw new ToolConfigError("toolset_invalid", `The toolset document is invalid: ${where}`);
  }
  return parsed.data;
}

function annotationsOf(definition: OperationDefinition): { annotations?: Record<string, unknown> } {
  const annotations = {
    ...definition.annotations,
    ...(definition.requiresAuth !== undefined ? { requiresAuth: definition.requiresAuth } : {}),
  };
  return Object.keys(annotations).length > 0 ? { annotations } : {};
}
