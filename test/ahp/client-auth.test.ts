/** authenticate, expiresIn, -32007 with one retry, several resources: the scripted host plus the embedded IdP. */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AhpAuthRequiredError,
  AhpUnknownResourceError,
  connectAhpHost,
} from "../../src/ahp/client/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";
import { useIdp } from "../support/idp.ts";
import { autoApprove, GUARD, storeToken } from "./fixtures/client-harness.ts";
import { type ScriptedResource, scriptedHost } from "./fixtures/scripted-host.ts";

const AS = "https://as.example";
const ONE: ScriptedResource = {
  resource: "https://api.one.example",
  name: "One",
  authorizationServers: [AS],
  scopes: ["read"],
  schemeId: "one",
};

test(
  "[AHP-client-expiresIn-fresh] expiresIn = whole seconds left at send time, recomputed per send",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [ONE] });
    const store = new MemoryCredentialStore();
    const t0 = Date.now();
    await storeToken(store, {
      issuer: AS,
      resource: ONE.resource,
      token: "tok-one",
      expiresAt: t0 + 3_600_999,
      scopes: ["openid", "read"],
    });
    let now = t0;
    const client = await connectAhpHost(host.url, { store, now: () => now });
    try {
      const [outcome] = await client.authenticate();
      assert.equal(outcome?.expiresIn, 3600);
      now = t0 + 100_500; // 100.5 s later: 3500.499 s left, floored
      await client.authenticate();
      const params = host.authenticateFrames().map((f) => f.message.params);
      assert.deepEqual(params[0], {
        channel: "ahp-root://",
        resource: ONE.resource,
        token: "tok-one",
        expiresIn: 3600,
        scopes: ["read"],
      });
      assert.equal(params[1]?.expiresIn, 3500, "never a stale value");
      assert.deepEqual(client.authenticatedResources(), [ONE.resource]);
    } finally {
      await client.close();
    }
  },
);

test("[AHP-client-expiresIn-unknown] no stored expiry: expiresIn omitted", GUARD, async () => {
  const host = await scriptedHost({ resources: [ONE] });
  const store = new MemoryCredentialStore();
  await storeToken(store, { issuer: AS, resource: ONE.resource, token: "tok-one" });
  const client = await connectAhpHost(host.url, { store });
  try {
    await client.authenticate();
    assert.equal("expiresIn" in (host.authenticateFrames()[0]?.message.params ?? {}), false);
  } finally {
    await client.close();
  }
});

test(
  "[AHP-client-seed-authenticate] seed: {schemeId, scheme:'bearer', token}, no expiresIn",
  GUARD,
  async () => {
    const host = await scriptedHost({
      resources: [ONE],
      dialects: ["seed"],
      seedSchemeResource: true,
    });
    const store = new MemoryCredentialStore();
    await storeToken(store, {
      issuer: AS,
      resource: ONE.resource,
      token: "tok-one",
      expiresAt: Date.now() + 600_000,
    });
    const client = await connectAhpHost(host.url, { store });
    try {
      await client.authenticate();
      assert.deepEqual(host.authenticateFrames().at(-1)?.message.params, {
        schemeId: "one",
        scheme: "bearer",
        token: "tok-one",
      });
    } finally {
      await client.close();
    }
  },
);

for (const dialect of ["official", "seed"] as const) {
  test(
    `[AHP-client-retry-once] ${dialect}: -32007 → authenticate what it names → the command is retried once`,
    GUARD,
    async () => {
      const host = await scriptedHost({
        resources: [ONE],
        dialects: [dialect],
        seedSchemeResource: true,
      });
      const store = new MemoryCredentialStore();
      await storeToken(store, {
        issuer: AS,
        resource: ONE.resource,
        token: "tok-one",
        expiresAt: Date.now() + 600_000,
      });
      const client = await connectAhpHost(host.url, { store });
      try {
        const result = await client.request("whoami");
        assert.deepEqual(result, {
          authenticated: [dialect === "official" ? ONE.resource : "one"],
        });
        assert.deepEqual(
          host.frames.filter((f) => f.message.method !== "initialize").map((f) => f.message.method),
          ["whoami", "authenticate", "whoami"],
        );
      } finally {
        await client.close();
      }
    },
  );
}

test(
  "[AHP-client-retry-once] still -32007 after the retry: ahp_auth_required, exactly one retry",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [ONE] });
    const store = new MemoryCredentialStore();
    await storeToken(store, {
      issuer: AS,
      resource: ONE.resource,
      token: "tok-one",
      expiresAt: Date.now() + 600_000,
    });
    const client = await connectAhpHost(host.url, { store });
    try {
      host.challengeNext(99);
      await assert.rejects(
        client.request("whoami"),
        (error: unknown) =>
          error instanceof AhpAuthRequiredError &&
          error.code === "ahp_auth_required" &&
          error.resources.includes(ONE.resource),
      );
      assert.equal(host.frames.filter((f) => f.message.method === "whoami").length, 2);
    } finally {
      await client.close();
    }
  },
);

test(
  "[AHP-client-auth-required-no-login] no credential and no login policy: ahp_auth_required, no token sent",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [ONE] });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      await assert.rejects(client.request("whoami"), AhpAuthRequiredError);
      assert.equal(host.authenticateFrames().length, 0);
    } finally {
      await client.close();
    }
  },
);

test(
  "[AHP-client-unknown-resource] a resource the host never advertised: ahp_unknown_resource, nothing sent",
  GUARD,
  async () => {
    const host = await scriptedHost({ resources: [ONE], dialects: ["seed"] });
    const client = await connectAhpHost(host.url, { store: new MemoryCredentialStore() });
    try {
      await assert.rejects(
        client.authenticate(["github"]),
        (error: unknown) =>
          error instanceof AhpUnknownResourceError && error.code === "ahp_unknown_resource",
      );
      assert.equal(host.authenticateFrames().length, 0);
    } finally {
      await client.close();
    }
  },
);

test(
  "[AHP-client-multi-resource] two resources gated together on one authorization server: one device login, two vault records, one retry",
  GUARD,
  async () => {
    const idp = await useIdp();
    const a: ScriptedResource = {
      resource: "https://api.a.example",
      name: "A",
      authorizationServers: [idp.issuer],
      scopes: ["read"],
      schemeId: "a",
    };
    const b: ScriptedResource = {
      resource: "https://api.b.example",
      name: "B",
      authorizationServers: [idp.issuer],
      scopes: ["write"],
      schemeId: "b",
    };
    const host = await scriptedHost({ resources: [a, b] });
    const store = new MemoryCredentialStore();
    const prompts: string[] = [];
    const client = await connectAhpHost(host.url, { store, login: autoApprove(prompts) });
    try {
      const result = (await client.request("whoami")) as { authenticated: string[] };
      assert.deepEqual([...result.authenticated].sort(), [a.resource, b.resource]);
      assert.equal(prompts.length, 1, "one sign-in covers both resources (issue 8 §2.5)");
      const records = await store.list();
      assert.deepEqual(records.map((r) => [r.subject, r.issuer, r.resource]).sort(), [
        ["alice", idp.issuer, a.resource],
        ["alice", idp.issuer, b.resource],
      ]);
      const sent = host.authenticateFrames().map((f) => f.message.params ?? {});
      assert.equal(sent.length, 2);
      assert.notEqual(sent[0]?.token, sent[1]?.token);
      for (const params of sent)
        assert.ok(Number(params.expiresIn) >= 3590 && Number(params.expiresIn) <= 3600);
      assert.equal(host.frames.filter((f) => f.message.method === "whoami").length, 2);
      const status = await client.status();
      assert.deepEqual(
        status.map((s) => [s.id, s.authenticated, s.credential.present, s.credential.account]),
        [
          [a.resource, true, true, "alice@example.test"],
          [b.resource, true, true, "alice@example.test"],
        ],
      );
    } finally {
      await client.close();
    }
  },
);
