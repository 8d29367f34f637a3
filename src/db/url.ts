/** PostgreSQL connection strings: where they come from, and how they are shown (never with a password). */

export const DATABASE_URL_ENV = "AGENTAUTH_DATABASE_URL";

/** Is this a PostgreSQL connection string (`postgres://` or `postgresql://`)? */
export function isPostgresUrl(value: string | undefined): value is string {
  return typeof value === "string" && /^postgres(?:ql)?:\/\//i.test(value.trim());
}

/** `AGENTAUTH_DATABASE_URL` when it is set to a PostgreSQL URL; undefined when unset or empty. */
export function databaseUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[DATABASE_URL_ENV]?.trim();
  return value ? value : undefined;
}

/**
 * The URL as it may be printed: user, host, port and database, never the password, and no query (options such as
 * `sslpassword` or `password` may sit there). Unparseable input is not echoed at all.
 */
export function redactDatabaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return "(an unparseable PostgreSQL URL)";
  }
  const user = url.username ? `${decodeSafe(url.username)}@` : "";
  const host = url.host || "(socket)";
  return `${url.protocol}//${user}${host}${url.pathname}`;
}

function decodeSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
