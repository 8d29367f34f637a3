/**
 * Server-side request forgery guard for the URLs the embedded server fetches on a stranger's say-so (client_id
 * metadata documents; draft-ietf-oauth-client-id-metadata-document §6): loopback, private, link-local (the cloud
 * metadata service at 169.254.169.254), carrier-grade NAT, documentation, multicast and other special-use
 * addresses (RFC 6890 registries) are refused, as oidc-provider's own CIMD fetch does.
 *
 * Two layers: a URL naming such an address (in any spelling the URL parser normalises: `2130706433`, `0x7f.1`,
 * `[::ffff:7f00:1]`) or a `localhost` name is refused before any connection (`isSpecialUseHost`); a host name that
 * resolves to one, or rebinds between a check and the fetch, is caught at the socket: the connection actually
 * dialled is cut before a request is written (`guardedFetch`).
 */

import { BlockList, isIP } from "node:net";

const special = new BlockList();
const loopback = new BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  special.addSubnet(prefix, bits, "ipv4");
}
for (const [prefix, bits] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96], // NAT64: reaches the embedded IPv4 address
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16], // 6to4: reaches the embedded IPv4 address
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  special.addSubnet(prefix, bits, "ipv6");
}
loopback.addSubnet("127.0.0.0", 8, "ipv4");
loopback.addAddress("::1", "ipv6");

// IPv4-mapped addresses (::ffff:0:0/96) are not listed: BlockList would match every IPv4 address against such a
// rule. They are checked as the IPv4 address they carry (mappedIpv4).
function mappedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  if (!lower.startsWith("::ffff:")) return undefined;
  const rest = lower.slice(7);
  if (isIP(rest) === 4) return rest;
  const [high, low] = rest.split(":").map((part) => Number.parseInt(part, 16));
  if (high === undefined || low === undefined || Number.isNaN(high) || Number.isNaN(low)) {
    return undefined;
  }
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** Whether an IP address (v4 or v6, without brackets) is loopback. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return loopback.check(v4, "ipv4");
  const family = isIP(address);
  return family !== 0 && loopback.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** Whether an IP address (v4 or v6, without brackets) is special-use; loopback included. Not an IP: false. */
export function isSpecialUseAddress(address: string): boolean {
  const v4 = mappedIpv4(address);
  if (v4) return special.check(v4, "ipv4");
  const family = isIP(address);
  if (family === 0) return false;
  return special.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * Whether a URL's (parsed, normalised) hostname must not be fetched: a special-use IP literal, or a `localhost`
 * name (RFC 6761 §6.3). With `allowLoopback`, loopback ones pass.
 */
export function isSpecialUseHost(hostname: string, options: { allowLoopback?: boolean }): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return options.allowLoopback !== true;
  if (isIP(host) === 0) return false;
  if (options.allowLoopback === true && isLoopbackAddress(host)) return false;
  return isSpecialUseAddress(host);
}

type Dispatcher = {
  on(event: "connect", listener: (origin: URL, targets: unknown[]) => void): unknown;
};

/** Node's fetch runs on undici, whose Agent class is reachable only through the global dispatcher it installs. */
function agentClass(): (new () => Dispatcher) | undefined {
  void Response; // makes Node load undici and install its global dispatcher
  const global = globalThis as Record<symbol, { constructor?: new () => Dispatcher } | undefined>;
  return (
    global[Symbol.for("undici.globalDispatcher.2")] ??
    global[Symbol.for("undici.globalDispatcher.1")]
  )?.constructor;
}

function socketOf(
  client: unknown,
): { remoteAddress?: string; destroy(e: Error): void } | undefined {
  if (typeof client !== "object" || client === null) return undefined;
  const symbol = Object.getOwnPropertySymbols(client).find((s) => s.description === "socket");
  return symbol === undefined
    ? undefined
    : ((client as Record<symbol, unknown>)[symbol] as ReturnType<typeof socketOf>);
}

/**
 * A `fetch` whose connections are checked once dialled: one landing on a special-use address (loopback allowed
 * only with `allowLoopback`) is destroyed before the request is written, and the fetch fails. Without undici's
 * Agent (not Node's fetch) it refuses to fetch at all rather than fetch unguarded.
 */
export function guardedFetch(options: { allowLoopback: boolean }): typeof fetch {
  const Agent = agentClass();
  if (!Agent) {
    return () => Promise.reject(new Error("no guarded HTTP client is available in this runtime"));
  }
  const dispatcher = new Agent();
  dispatcher.on("connect", (_origin, targets) => {
    const socket = socketOf(targets[targets.length - 1]);
    const address = socket?.remoteAddress;
    if (address === undefined) return;
    if (options.allowLoopback && isLoopbackAddress(address)) return;
    if (isSpecialUseAddress(address)) {
      socket?.destroy(new Error("the host resolves to a special-use IP address"));
    }
  });
  return (input, init) => fetch(input, { ...init, dispatcher } as RequestInit);
}
