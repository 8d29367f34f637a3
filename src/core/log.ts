/** Structured JSON-lines logging to stderr, redacted by construction: `Secret`s and secret-named fields never print. */

import { escapeUnseenInJson } from "./display.ts";
import { REDACTED, Secret } from "./secret.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LoggerOptions {
  /** Where lines go; defaults to stderr so stdout stays for machine-readable output. */
  write?: (line: string) => void;
  level?: LogLevel;
  fields?: LogFields;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

// Belt and braces: a field whose name says it holds a secret is redacted even when passed as a plain string.
const SECRET_NAME =
  /(token|secret|password|passwd|verifier|authorization|auth_?code|user_?code|device_?code|cookie|api[_-]?key|assertion|private)/i;

/**
 * `code` is both the OAuth authorization code (RFC 6749 §4.1.2, a secret) and the usual name of an error code.
 * An error code has a recognisable shape: a number (HTTP, JSON-RPC), an errno (`E` and upper-case letters only:
 * `ECONNREFUSED`, `EPERM`), upper-case words joined by `_` (`ERR_INVALID_URL`, `SQLITE_BUSY`), or snake_case words
 * (`invalid_grant`, `rap_store_io`). Authorization codes are random strings (mixed case, digits, `-`); some
 * providers issue upper-case alphanumeric ones, which is why a bare upper-case word with digits or without an
 * underscore is not taken for an error code. Only those shapes are shown; any other value under `code` is redacted
 * (issue 8 §4.11). The device grant's user_code (RFC 8628 §3.2) is short-lived and meant to be typed by a person,
 * but while pending it is a credential for the grant: redacted in logs by name (the CLI still prints it to the
 * person), as is device_code.
 */
const ERROR_CODE = /^(?:E[A-Z]{2,15}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+)$/;

function isSecretField(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (SECRET_NAME.test(key)) return true;
  if (key.toLowerCase() !== "code") return false;
  if (typeof value === "number") return false;
  return !(typeof value === "string" && value.length <= 64 && ERROR_CODE.test(value));
}

export function redact(value: unknown, depth = 0): unknown {
  if (value instanceof Secret) return REDACTED;
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(code ? { code } : {}) };
  }
  if (value === null || typeof value !== "object") return value;
  if (depth > 6) return "[depth]";
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretField(k, v) ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const min = ORDER[options.level ?? envLevel()];
  const base = options.fields ?? {};
  const emit = (level: LogLevel, event: string, fields: LogFields = {}) => {
    if (ORDER[level] < min) return;
    const record = redact({ time: new Date().toISOString(), level, event, ...base, ...fields });
    // JSON.stringify escapes C0 but leaves C1, bidi and invisible characters raw: a peer's text in a field would
    // reach a terminal or a reader as is. Escaped instead (lossless: parsing gives the same record).
    write(`${escapeUnseenInJson(JSON.stringify(record))}\n`);
  };
  return {
    debug: (e, f) => emit("debug", e, f),
    info: (e, f) => emit("info", e, f),
    warn: (e, f) => emit("warn", e, f),
    error: (e, f) => emit("error", e, f),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

function envLevel(): LogLevel {
  const level = process.env.AGENTAUTH_LOG_LEVEL;
  return level === "debug" || level === "warn" || level === "error" ? level : "info";
}

/** A logger that prints nothing: the default for library code unless the caller passes one. */
export const silentLogger: Logger = createLogger({ write: () => {}, level: "error" });
