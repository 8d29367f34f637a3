/**
 * AHP host: `authenticate` calls per second with RFC 9068 JWT verification (JWKS cached after the first call), and
 * the throughput of a gated command on an authenticated connection against the same command ungated, in one run.
 * Raw JSON-RPC frames over a real WebSocket on loopback, 16 requests in flight, medians of alternating rounds.
 *
 * Run: node_modules/.bin/node bench/ahp.bench.ts
 */

import WebSocket from "ws";
import { createAhpHost } from "../src/ahp/host/index.ts";
import { startIdp } from "../src/idp/index.ts";
import { MemoryCredentialStore } from "../src/vault/index.ts";
import { loginForTest } from "../test/support/credentials.ts";

const ROUNDS = 7;
const COMMANDS = 5000;
const AUTHENTICATES = 1000;
const IN_FLIGHT = 16;
const RESOURCE = "https://bench.example.test/";

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

class Peer {
  readonly #socket: WebSocket;
  #next = 0;
  readonly #pending = new Map<
    number,
    (m: { result?: unknown; error?: { code: number; message: string } }) => void
  >();
  constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (message.id !== undefined) this.#pending.get(message.id)?.(message);
    });
  }
  static async open(url: string): Promise<Peer> {
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return new Peer(socket);
  }
  async call(method: string, params: unknown): Promise<unknown> {
    const id = this.#next++;
    const message = await new Promise<{
      result?: unknown;
      error?: { code: number; message: string };
    }>((resolve) => {
      this.#pending.set(id, resolve);
      this.#socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
    this.#pending.delete(id);
    if (message.error) throw new Error(`${method}: ${message.error.code} ${message.error.message}`);
    return message.result;
  }
  close(): void {
    this.#socket.close();
  }
}

async function rate(count: number, run: () => Promise<unknown>): Promise<number> {
  let sent = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (sent < count) {
        sent++;
        await run();
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

const idp = await startIdp({ autoApproveAs: "alice" });
const host = createAhpHost({ rateLimit: { burst: 1_000_000, perSecond: 1_000_000 } })
  .agent({
    provider: "bench",
    displayName: "Bench",
    resources: [
      { resource: RESOURCE, authorizationServers: [idp.issuer], scopesSupported: ["read"] },
    ],
  })
  .command("bench/gated", { requires: [RESOURCE] }, () => ({ ok: true }))
  .command("bench/open", {}, () => ({ ok: true }));
const running = await host.listen({ port: 0 });
try {
  const record = await loginForTest(idp, new MemoryCredentialStore(), {
    resource: RESOURCE,
    scope: "openid read",
  });
  const token = record.tokens.accessToken?.reveal() ?? "";
  const expiresIn = Math.floor(((record.expiresAt ?? Date.now() + 3_600_000) - Date.now()) / 1000);
  const peer = await Peer.open(running.url);
  await peer.call("initialize", {
    protocolVersions: ["1.1.0"],
    clientId: "bench",
    initialSubscriptions: [],
  });
  const authenticate = () =>
    peer.call("authenticate", { channel: "ahp-root://", resource: RESOURCE, token, expiresIn });
  await authenticate(); // fetches and caches the JWKS
  const gated = () => peer.call("bench/gated", {});
  const open = () => peer.call("bench/open", {});
  await rate(1000, gated); // warm-up
  await rate(1000, open);

  const authRates: number[] = [];
  const gatedRates: number[] = [];
  const openRates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    authRates.push(await rate(AUTHENTICATES, authenticate));
    if (round % 2 === 0) {
      gatedRates.push(await rate(COMMANDS, gated));
      openRates.push(await rate(COMMANDS, open));
    } else {
      openRates.push(await rate(COMMANDS, open));
      gatedRates.push(await rate(COMMANDS, gated));
    }
  }
  peer.close();
  const a = median(authRates);
  const g = median(gatedRates);
  const o = median(openRates);
  const pair = median(gatedRates.map((x, i) => x / (openRates[i] ?? x)));
  console.log(`ahp bench: ${ROUNDS} rounds, ${IN_FLIGHT} in flight, one WebSocket on loopback`);
  console.log("measure                                 value     baseline     ratio");
  console.log(
    `authenticate/s (JWT verified)     ${a.toFixed(0).padStart(10)}            -         -`,
  );
  console.log(
    `command/s gated vs ungated        ${g.toFixed(0).padStart(10)} ${o.toFixed(0).padStart(12)} ${(g / o).toFixed(3).padStart(9)}`,
  );
  console.log(
    `  median of per-round ratios                                 ${pair.toFixed(3).padStart(9)}`,
  );
  console.log(
    JSON.stringify({
      bench: "ahp",
      rounds: ROUNDS,
      authenticatePerSecond: Math.round(a),
      gated: Math.round(g),
      ungated: Math.round(o),
      ratio: g / o,
      medianPairRatio: pair,
    }),
  );
} finally {
  await running.close();
  await idp.close();
}
