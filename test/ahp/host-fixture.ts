/**
 * Test support for the AHP host suites: the embedded IdP, the example host with a captured log, real access
 * tokens from a real login, and connected raw peers in either dialect.
 */

import { after } from "node:test";
import type { ListenOptions, RunningAhpHost } from "../../src/ahp/host/index.ts";
import { startExampleHost } from "../../src/ahp/host/index.ts";
import { createLogger } from "../../src/core/log.ts";
import type { IdpOptions, RunningIdp } from "../../src/idp/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { loginForTest } from "../support/credentials.ts";
import { useIdp } from "../support/idp.ts";
import { WsPeer } from "../support/ws-peer.ts";

export { EXAMPLE_ALPHA as ALPHA, EXAMPLE_BETA as BETA } from "../../src/ahp/host/index.ts";

export interface HostStand {
  idp: RunningIdp;
  host: RunningAhpHost;
  /** Every log line the host wrote. */
  logs: string[];
  /** A fresh real access token for `resource` with `scope`. */
  token(resource: string, scope?: string): Promise<string>;
  peerOfficial(extra?: Record<string, unknown>): Promise<WsPeer>;
  peerSeed(): Promise<WsPeer>;
}

export async function useHostStand(
  options: { idp?: IdpOptions; listen?: Omit<ListenOptions, "port"> } = {},
): Promise<HostStand> {
  const idp = await useIdp(options.idp);
  const logs: string[] = [];
  const logger = createLogger({ write: (line) => logs.push(line), level: "debug" });
  const host = await startExampleHost({ issuer: idp.issuer, logger, ...options.listen });
  after(() => host.close());
  const peers: WsPeer[] = [];
  after(() => Promise.all(peers.map((p) => p.close())));
  const connect = async () => {
    const peer = await WsPeer.connect(host.url);
    peers.push(peer);
    return peer;
  };
  return {
    idp,
    host,
    logs,
    async token(resource, scope = "read") {
      const record = await loginForTest(idp, new MemoryCredentialStore(), {
        resource,
        scope: `openid ${scope}`,
      });
      const token = record.tokens.accessToken?.reveal();
      if (!token) throw new Error("the login returned no access token");
      return token;
    },
    async peerOfficial(extra = {}) {
      const peer = await connect();
      const init = await peer.request("initialize", {
        channel: "ahp-root://",
        protocolVersions: ["1.1.0"],
        clientId: "test-client",
        ...extra,
      });
      if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
      return peer;
    },
    async peerSeed() {
      const peer = await connect();
      const init = await peer.request("initialize", {
        protocolVersion: 1,
        clientId: "seed-client",
      });
      if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
      return peer;
    },
  };
}

/** Connects without initializing (for handshake and bad-input tests); closed when the file ends. */
export async function rawPeer(url: string): Promise<WsPeer> {
  const peer = await WsPeer.connect(url);
  after(() => peer.close());
  return peer;
}
