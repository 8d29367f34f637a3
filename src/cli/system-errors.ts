/**
 * What a Node system error (errno) means to the person at the terminal, and what they can do about it. Servers
 * and files fail with `EADDRINUSE`, `EACCES`, `ENOENT`…; `fetch` hides the errno in `cause`. Only what the person
 * passed (a port, a path, a host) is quoted, never a URL with its query (it may carry credentials).
 */

import { peerText } from "../core/display.ts";

export interface SystemErrorText {
  /** A stable code for --json output and scripts. */
  code: string;
  message: string;
}

interface Errno {
  code: string;
  syscall?: string;
  port?: number;
  path?: string;
  hostname?: string;
  address?: string;
}

/** The first errno-carrying error in `error` and its causes (fetch: TypeError → cause). */
function findErrno(error: unknown): Errno | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z0-9_]+$/.test(code) && !code.startsWith("ERR_")) {
      return current as Errno;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

const show = (text: unknown) => peerText(text, { max: 300 });

export function describeSystemError(error: unknown): SystemErrorText | undefined {
  if (error instanceof Error && error.name === "TimeoutError") {
    return {
      code: "timeout",
      message:
        "the server did not answer in time; check the URL and that the server is running, then retry.",
    };
  }
  const errno = findErrno(error);
  if (!errno) return undefined;
  const where = typeof errno.port === "number" ? `port ${errno.port}` : "the address";
  const path = errno.path !== undefined ? ` ${show(errno.path)}` : "";
  switch (errno.code) {
    case "EADDRINUSE":
      return {
        code: "port_in_use",
        message: `${where} is in use; pass --port 0 for a free one.`,
      };
    case "EADDRNOTAVAIL":
      return {
        code: "address_unavailable",
        message: `${where} cannot be bound on this machine; pass --port 0 for a free one.`,
      };
    case "EACCES":
    case "EPERM":
      if (errno.syscall === "listen" || errno.syscall === "bind") {
        return {
          code: "port_forbidden",
          message: `${where} needs privileges this process lacks; pass --port 0 for a free one (or a port above 1023).`,
        };
      }
      return {
        code: "permission_denied",
        message: `permission denied${path ? ` on${path}` : ""}; check the owner and mode of that file or folder (ls -l), or point the flag or $AGENTAUTH_HOME at one you own.`,
      };
    case "ENOENT":
      return {
        code: "not_found",
        message: `no such file or folder${path ? `:${path}` : ""}; check the path you passed.`,
      };
    case "EISDIR":
      return {
        code: "is_a_folder",
        message: `${path ? `${path.trim()} is` : "that path is"} a folder; pass the path of a file.`,
      };
    case "ENOTDIR":
      return {
        code: "not_a_folder",
        message: `a part of the path${path} is not a folder; check the path you passed.`,
      };
    case "ENOSPC":
      return { code: "disk_full", message: "the disk is full; free some space and retry." };
    case "ECONNREFUSED":
      return {
        code: "connection_refused",
        message: `nothing is listening at ${errno.address ? `${show(errno.address)}:${typeof errno.port === "number" ? errno.port : "?"}` : "that address"}; check the URL and that the server is running.`,
      };
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return {
        code: "host_not_found",
        message: `the host ${errno.hostname ? show(errno.hostname) : "in the URL"} was not found; check the URL and your network.`,
      };
    case "ECONNRESET":
    case "EPIPE":
      return {
        code: "connection_reset",
        message:
          "the other side closed the connection; check that the server is running and retry.",
      };
    case "ETIMEDOUT":
      return {
        code: "timeout",
        message: "the connection timed out; check the URL and your network, then retry.",
      };
    case "EMFILE":
    case "ENFILE":
      return {
        code: "too_many_open_files",
        message:
          "too many open files; close other programs or raise the limit (ulimit -n), then retry.",
      };
    default:
      return undefined;
  }
}
