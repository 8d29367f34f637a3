/**
 * What `rap runtime serve` keeps between starts so that callback URLs handed to tools stay valid: the port it
 * listened on and the public base URL (RAP tools keep `callback_url` durably and deliver late, e.g. after an OAuth
 * detour or a subscription event; a runtime that comes back on another port would answer none of them).
 * One small JSON file beside the runtime database (`rap-runtime.json` for the default `rap-runtime.db`), mode 0600.
 */

import { readFileSync } from "node:fs";
import { z } from "zod";
import { AgentAuthError } from "../../core/errors.ts";
import { writeSecretFileSync } from "../../core/secret-file.ts";
import { jsonLine } from "../io.ts";

export const RuntimeSettingsSchema = z.object({
  port: z.number().int().min(1).max(65535).optional(),
  publicUrl: z.string().url().optional(),
});
export type RuntimeSettings = z.infer<typeof RuntimeSettingsSchema>;

/** The settings file could not be read or written, or does not hold settings. */
export class RuntimeSettingsError extends AgentAuthError {
  declare readonly code: "rap_runtime_settings_invalid" | "rap_runtime_settings_io";
}

/** `<db without .db>.json`: one settings file per database, since the calls (and their URLs) live there. */
export function settingsPath(dbPath: string): string {
  return `${dbPath.replace(/\.db$/, "")}.json`;
}

export function readSettings(path: string): RuntimeSettings {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new RuntimeSettingsError(
      "rap_runtime_settings_io",
      `Cannot read the RAP runtime settings file ${path} (${(error as NodeJS.ErrnoException).code ?? "error"}). ` +
        "Check its permissions.",
    );
  }
  let parsed: ReturnType<typeof RuntimeSettingsSchema.safeParse>;
  try {
    parsed = RuntimeSettingsSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = RuntimeSettingsSchema.safeParse(undefined);
  }
  if (!parsed.success) {
    throw new RuntimeSettingsError(
      "rap_runtime_settings_invalid",
      `The RAP runtime settings file ${path} does not hold valid settings; fix it, or delete it to start on a new ` +
        "port (callback URLs issued before will then stop working).",
    );
  }
  return parsed.data;
}

/** Owner-only, written to a temporary file and renamed: a crash mid-write never leaves half a file. */
export function writeSettings(path: string, settings: RuntimeSettings): void {
  try {
    writeSecretFileSync(path, jsonLine(settings));
  } catch (error) {
    throw new RuntimeSettingsError(
      "rap_runtime_settings_io",
      `Cannot write the RAP runtime settings file ${path} (${(error as NodeJS.ErrnoException).code ?? "error"}). ` +
        "Check that its folder is writable.",
    );
  }
}
