/** Tool `inputSchema`s compiled once with Ajv (JSON Schema draft 2020-12, RAP's default), and argument checks. */

// The named export: under nodenext the default import of this CommonJS module types as the namespace.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema";

export type ArgumentsValidator = ValidateFunction;

/**
 * One Ajv instance per toolset load: compiled schemas stay alive only as long as the tools that use them.
 * `strict: false` because tool authors add annotation keywords (`examples`, `x-…`) that are not errors; unknown
 * `format`s are ignored rather than fatal for the same reason. Remote `$ref`s are never fetched: no `loadSchema`.
 */
export function createSchemaCompiler(): (schema: Record<string, unknown>) => ArgumentsValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  return (schema) => {
    const declared = schema.$schema;
    // Ajv cannot mix drafts in one instance; a schema that names another draft is refused with a clear reason
    // rather than validated by rules it was not written for.
    if (declared !== undefined && declared !== DRAFT_2020_12 && declared !== `${DRAFT_2020_12}#`) {
      throw new Error(`$schema ${JSON.stringify(declared)} is not JSON Schema draft 2020-12`);
    }
    return ajv.compile(schema);
  };
}

/** Ajv's errors as short lines (`/count: must be integer`), never echoing the values that failed. */
export function describeIssues(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || "(arguments)"}: ${e.message ?? e.keyword}`);
}
