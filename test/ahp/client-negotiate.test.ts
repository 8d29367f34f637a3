/** Dialect negotiation, connection failures and protocol violations, against the scripted host. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AhpConnectError,
  AhpProtocolError,
  AhpVersionError,
  connectAhpHost,
} from "../../src/ahp/client/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { GUARD } from "./fixtures/client-harness.ts";
import { type ScriptedResource, scriptedHost } from "./fixtures/scripted-host.ts";

const RESOURCE: ScriptedResource = {
  resource: "https://api.one.example",
  name: "One",
  authorizationServers: ["http://127.0.0.1:1"],
  scopes: ["read"],
  schemeId: "one",
};

test(
  "[AHP-client-negotiate] an official host: protocolVersions [1.1.0, 1.0.0, 0.9.0], root state read from initialize",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE] });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      assert.equal(client.dialect, "official");
      assert.equal(client.protocolVersion, "1.1.0");
      const init = host.frames[0]?.message;
      assert.equal(init?.method, "initialize");
      assert.deepEqual(init?.params?.protocolVersions, ["1.1.0", "1.0.0", "0.9.0"]);
      assert.deepEqual(init?.params?.initialSubscriptions, ["ahp-root://"]);
      assert.deepEqual(
        client
          .resources()
          .map((r) => [r.id, r.resource, r.label, r.authorizationServers, r.scopes, r.required]),
        [
          [
            "https://api.one.example",
            "https://api.one.example",
            "One",
            ["http://127.0.0.1:1"],
            ["read"],
            true,
          ],
        ],
      );
    } finally {
      await client.close();
    }
  },
);

test(
  "[AHP-client-negotiate-subscribe] official root state not in initialize: the client subscribes to ahp-root://",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE], rootViaSubscribe: true });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      assert.equal(host.frames[1]?.message.method, "subscribe");
      assert.deepEqual(host.frames[1]?.message.params, { channel: "ahp-root://" });
      assert.deepEqual(
        client.resources().map((r) => r.id),
        ["https://api.one.example"],
      );
    } finally {
      await client.close();
    }
  },
);

test(
  "[AHP-client-negotiate-fallback] a seed-only host refuses official with -32005: a new connection speaks the seed",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE], dialects: ["seed"] });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      assert.equal(client.dialect, "seed");
      assert.equal(client.protocolVersion, 1);
      assert.deepEqual(
        host.frames.map((f) => [f.connection, f.message.method]),
        [
          [1, "initialize"],
          [2, "initialize"],
        ],
      );
      assert.equal(host.frames[1]?.message.params?.protocolVersion, 1);
      assert.deepEqual(
        client.resources().map((r) => [r.id, r.label]),
        [["one", "One"]],
      );
    } finally {
      await client.close();
    }
  },
);

test("[AHP-client-negotiate-order] dialects option: seed first is tried first", GUARD, async () => {
  const host = await scriptedHost({ resources: [RESOURCE] });
  const client = await connectAhpHost(host.url, {
    store: new MemoryCredentialStore(),
    dialects: ["seed", "official"],
  });
  try {
    assert.equal(client.dialect, "seed");
    assert.equal(host.frames.length, 1);
  } finally {
    await client.close();
  }
});

test(
  "[AHP-client-version-unsupported] only official allowed against a seed host: ahp_version_unsupported with the host's versions",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE], dialects: ["seed"] });
    await assert.rejects(
      connectAhpHost(host.url, { store: new MemoryCredentialStore(), dialects: ["official"] }),
      (error: unknown) =>
        error instanceof AhpVersionError &&
        error.code === "ahp_version_unsupported" &&
        error.supportedVersions.includes(1),
    );
  },
);

test(
  "[AHP-client-connect-failed] nothing listening, or not a ws URL: ahp_connect_failed",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [] });
    const url = host.url;
    await host.close();
    await assert.rejects(
      connectAhpHost(url, { store: new MemoryCredentialStore() }),
      (error: unknown) => error instanceof AhpConnectError && error.code === "ahp_connect_failed",
    );
    await assert.rejects(
      connectAhpHost("http://127.0.0.1:1", { store: new MemoryCredentialStore() }),
      AhpConnectError,
    );
  },
);

test(
  "[AHP-client-protocol-error] a non-JSON frame ends the connection with ahp_protocol_error",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE] });
    let onDisconnect: (error: Error) => void = () => {};
    const disconnected = new Promise<Error>((resolve) => {
      onDisconnect = resolve;
    });
    const client = await connectAhpHost(host.url, {
      store: new MemoryCredentialStore(),
      onDisconnect: (error) => onDisconnect(error),
    });
    host.sendRaw("this is not json");
    const error = await disconnected;
    assert.ok(error instanceof AhpProtocolError);
    assert.equal((error as AhpProtocolError).code, "ahp_protocol_error");
    await assert.rejects(client.request("whoami"), AhpProtocolError);
    await client.close();
  },
);

test(
  "[AHP-client-negotiate-0.9] an official host that offers only 0.9.x: one connection, version 0.9.0, resources read",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [RESOURCE], onlyVersionLine: "0.9" });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      assert.equal(client.dialect, "official");
      assert.equal(client.protocolVersion, "0.9.0");
      assert.deepEqual(
        client.resources().map((r) => r.id),
        ["https://api.one.example"],
      );
      assert.equal(host.frames.filter((f) => f.message.method === "initialize").length, 1);
    } finally {
      await client.close();
    }
  },
);
