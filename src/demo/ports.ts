/**
 * Stable ports for the demo's servers, saved in `ports.json`: issuers and resource URLs keep their addresses from
 * one run to the next (credentials are keyed by them). A saved port that is taken now falls back to a free one.
 */

import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { AgentAuthError } from "../core/errors.ts";

/** A port asked for explicitly (`--port N`) is taken. */
export class DemoPortError extends AgentAuthError {}

export const PORTS_FILE = "ports.json";
export const PORT_NAMES = ["idp", "api", "tool", "runtime", "ahp", "console"] as const;
export type PortName = (typeof PORT_NAMES)[number];
export type DemoPorts = Record<PortName, number>;

/** What the first run prefers: the authorization server on 4444 (what the docs print), the rest anywhere. */
export const PREFERRED_PORTS: Partial<DemoPorts> = { idp: 4444 };

export interface PortChoice {
  ports: DemoPorts;
  /** Saved ports that were taken this time (their server moved to a new port). */
  moved: PortName[];
}

/** Pure: the valid entries of a ports.json text; anything malformed is dropped (the port is chosen afresh). */
export function parsePorts(text: string): Partial<DemoPorts> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  const out: Partial<DemoPorts> = {};
  for (const name of PORT_NAMES) {
    const port = (value as Record<string, unknown>)[name];
    if (typeof port === "number" && Number.isInteger(port) && port > 0 && port <= 65535)
      out[name] = port;
  }
  return out;
}

export function readSavedPorts(dir: string): Partial<DemoPorts> {
  try {
    return parsePorts(readFileSync(join(dir, PORTS_FILE), "utf8"));
  } catch {
    return {};
  }
}

export function savePorts(dir: string, ports: DemoPorts): void {
  writeFileSync(join(dir, PORTS_FILE), `${JSON.stringify(ports, null, 2)}\n`, { mode: 0o600 });
}

/** True when 127.0.0.1:port can be bound now. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port free now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * One port per server: the saved one when free, else (first run) the preferred one when free, else a free one.
 * `override` (the `--port` flag for the console) wins over both and must be free (`demo_port_taken`); 0 there
 * means any free port. No two servers get the same port. The authorization server never moves from a saved port
 * (`demo_issuer_port_taken`): the folder's credentials and grants are keyed by its issuer URL, so a move would
 * orphan every one of them, and the next start would keep the new port.
 */
export async function choosePorts(
  saved: Partial<DemoPorts>,
  override: Partial<DemoPorts> = {},
  preferred: Partial<DemoPorts> = PREFERRED_PORTS,
  /** The saved authorization server port must be kept (the folder was used before this start). */
  pinIssuer = false,
): Promise<PortChoice> {
  const ports = {} as DemoPorts;
  const moved: PortName[] = [];
  const taken = new Set<number>();
  for (const name of PORT_NAMES) {
    const wanted = override[name] ?? saved[name] ?? preferred[name];
    let port: number | undefined;
    if (wanted !== undefined && wanted !== 0 && !taken.has(wanted) && (await isPortFree(wanted))) {
      port = wanted;
    }
    if (port === undefined && override[name] !== undefined && override[name] !== 0) {
      throw new DemoPortError(
        "demo_port_taken",
        `Port ${override[name]} (${name}) is in use; choose another --port, or 0 for any free port.`,
      );
    }
    if (port === undefined && name === "idp" && pinIssuer && saved.idp !== undefined) {
      throw new DemoPortError(
        "demo_issuer_port_taken",
        `Port ${saved.idp}, where this demo folder's authorization server lives (its sign-ins are kept for ` +
          `http://127.0.0.1:${saved.idp}), is in use by another program. Stop that program and start the demo ` +
          "again, or start over on a new port with `npm start -- --fresh` (the folder's sign-ins are forgotten).",
      );
    }
    if (port === undefined) {
      if (override[name] === undefined && saved[name] !== undefined) moved.push(name);
      do port = await freePort();
      while (taken.has(port));
    }
    taken.add(port);
    ports[name] = port;
  }
  return { ports, moved };
}
