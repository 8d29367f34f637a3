/** Vault ids on the command line: base64url, so one may begin with "-" and must not be read as a flag. */

const DASH_ID = /^-[A-Za-z0-9_][A-Za-z0-9_-]{10}$/;

/** Moves ids that begin with "-" behind "--" so node:util parseArgs takes them as positionals. */
export function idsAsPositionals(args: string[]): string[] {
  const end = args.includes("--") ? args.indexOf("--") : args.length;
  const head = args.slice(0, end);
  const ids = head.filter((arg) => DASH_ID.test(arg));
  if (ids.length === 0) return args;
  return [...head.filter((arg) => !DASH_ID.test(arg)), "--", ...ids, ...args.slice(end + 1)];
}
