/**
 * How an OAuth method that names a provider preset is read (pure, in process): its default flow, name and
 * description, the startup errors for configurations that cannot work, and which provider the kit uses to refresh
 * and revoke a stored credential.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type AuthMethodConfig,
  AuthMethodConfigError,
  createAgentAuth,
  toAuthStatus,
  toGetAuthState,
  v1AuthMethods,
  v2AuthMethods,
} from "../../src/acp/agent/index.ts";
import { methodProviders, oauthTarget } from "../../src/acp/agent/oauth-method.ts";
import { Secret } from "../../src/core/secret.ts";
import type { Provider } from "../../src/oauth/index.ts";
import { github } from "../../src/providers/index.ts";
import { MemoryCredentialStore } from "../../src/vault/index.ts";

const HOST = "https://github.example.com";
const gh = () => github({ clientId: "Iv1.agent", host: HOST });
/** A provider that documents only the browser flow (as Slack, Notion, Linear and Atlassian do). */
const browserOnly = (): Provider => ({
  ...gh(),
  displayName: "Browser Only",
  flows: ["authorization_code"],
});
const client = { terminal: false, urlElicitation: false };

function startup(methods: AuthMethodConfig[]) {
  return () => createAgentAuth({ name: "t", methods, store: new MemoryCredentialStore() });
}

test("[ACP-provider-method-defaults] a provider method runs the device flow when the provider has one, and is advertised as 'Sign in with <provider>'", () => {
  const method: AuthMethodConfig = { kind: "oauth", id: "github", provider: gh() };
  assert.equal(oauthTarget(method).flow, "device");
  assert.equal(oauthTarget(method).issuer, `${HOST}/login/oauth`);
  assert.equal(oauthTarget(method).clientId, "Iv1.agent");
  assert.deepEqual(v1AuthMethods([method], client), [
    {
      id: "github",
      name: "Sign in with GitHub Enterprise (github.example.com)",
      description:
        "Sign in with your GitHub Enterprise (github.example.com) account: open a link on any device and enter a code",
    },
  ]);
  assert.equal(v2AuthMethods([method], client)[0]?.type, "agent");
  // The author's own words win.
  const named: AuthMethodConfig = { ...method, name: "GitHub", description: "Your GitHub account" };
  assert.deepEqual(v1AuthMethods([named], client), [
    { id: "github", name: "GitHub", description: "Your GitHub account" },
  ]);
});

test("[ACP-provider-browser-default] a provider without a device flow defaults to the browser flow", () => {
  const method: AuthMethodConfig = { kind: "oauth", id: "b", provider: browserOnly() };
  assert.equal(oauthTarget(method).flow, "browser");
  assert.doesNotThrow(startup([method]));
  assert.equal(
    v1AuthMethods([method], client)[0]?.description,
    "Sign in with your Browser Only account in your browser",
  );
});

test("[ACP-provider-flow-unsupported] flow: 'device' on a provider without a device flow is a typed startup error that says what to configure", () => {
  const method: AuthMethodConfig = {
    kind: "oauth",
    id: "b",
    provider: browserOnly(),
    flow: "device",
  };
  assert.throws(startup([method]), (error: unknown) => {
    assert.ok(error instanceof AuthMethodConfigError);
    assert.equal(error.code, "auth_method_flow_unsupported");
    assert.match(
      error.message,
      /OAuth method b asks for the device flow, which Browser Only does not offer/,
    );
    assert.match(error.message, /flow: "browser"/);
    return true;
  });
});

test("[ACP-oauth-method-config-errors] a provider plus an issuer, or neither, is refused at startup; issuer methods work as before", () => {
  const both = {
    kind: "oauth",
    id: "x",
    provider: gh(),
    issuer: "https://issuer.example",
  } as unknown as AuthMethodConfig;
  assert.throws(startup([both]), { code: "auth_method_ambiguous" });
  const neither = { kind: "oauth", id: "y", name: "Sign in" } as unknown as AuthMethodConfig;
  assert.throws(startup([neither]), {
    code: "auth_method_incomplete",
    message: /provider: github/,
  });
  const unnamed = {
    kind: "oauth",
    id: "z",
    issuer: "https://issuer.example",
    clientId: "c",
  } as unknown as AuthMethodConfig;
  assert.throws(startup([unnamed]), { code: "auth_method_incomplete", message: /needs a name/ });
  const issuer: AuthMethodConfig = {
    kind: "oauth",
    id: "oauth",
    name: "Sign in",
    issuer: "https://issuer.example",
    clientId: "c",
  };
  assert.doesNotThrow(startup([issuer]));
  assert.deepEqual(oauthTarget(issuer), {
    issuer: "https://issuer.example",
    clientId: "c",
    flow: "device",
  });
});

test("[ACP-provider-resolver] a stored credential from the method's own provider is refreshed and revoked with the configured provider; others are rebuilt from the catalogue", () => {
  const own = github({ clientId: "Iv1.agent", clientSecret: "configured", host: HOST });
  const resolve = methodProviders([{ kind: "oauth", id: "github", provider: own }]);
  const stored = { clientId: "Iv1.agent" };
  assert.equal(resolve(own.ref, stored), own);
  // Another client id, or another host: not this method's, rebuilt from the catalogue with the stored client.
  const other = resolve(own.ref, { clientId: "Iv1.other" });
  assert.notEqual(other, own);
  assert.equal(other.client.clientId, "Iv1.other");
  const elsewhere = resolve({ name: "github", options: { app: "oauth_app" } }, stored);
  assert.equal(elsewhere.issuer, "https://github.com/login/oauth");
  assert.throws(() => resolve({ name: "nonesuch" }, stored), { code: "provider_unknown" });
  // A secret only the vault still holds (dropped from the configuration) is still used for revocation.
  const publicOwn = gh();
  const resolvePublic = methodProviders([{ kind: "oauth", id: "github", provider: publicOwn }]);
  const withSecret = resolvePublic(publicOwn.ref, {
    clientId: "Iv1.agent",
    clientSecret: own.client.clientSecret,
  });
  assert.notEqual(withSecret, publicOwn);
  assert.equal(withSecret.client.clientSecret?.reveal(), "configured");
});

test("[ACP-provider-account-status] a provider credential's account shows with its handle as the label and the provider in _meta; getAuthState names it", () => {
  const methods = [
    {
      methodId: "github",
      configured: true,
      source: "vault" as const,
      accounts: [
        {
          label: "alice",
          login: "alice",
          name: "Alice Liddell",
          avatarUrl: "https://avatars.example/1001",
          provider: "github",
          updatedAt: 1,
        },
      ],
    },
  ];
  assert.deepEqual(toAuthStatus(methods), {
    state: "authenticated",
    accounts: [
      {
        label: "alice",
        active: true,
        name: "Alice Liddell",
        _meta: {
          agentauth: {
            provider: "github",
            login: "alice",
            avatarUrl: "https://avatars.example/1001",
          },
        },
      },
    ],
  });
  assert.equal(
    toGetAuthState(methods).authMethods?.[0]?.message,
    "Signed in to github as alice (stored in the agentauth vault).",
  );
});

test("[ACP-provider-logout-manage-url] logout of a provider without a revocation API deletes the credential and tells the person where to remove the app", async () => {
  const provider: Provider = {
    ...gh(),
    displayName: "No Revoke",
    revocation: { kind: "none", manageUrl: "https://no-revoke.example/settings/apps" },
  };
  const store = new MemoryCredentialStore();
  const written: string[] = [];
  const auth = createAgentAuth({
    name: "t",
    methods: [{ kind: "oauth", id: "nr", provider }],
    store,
    stderr: (text) => written.push(text),
  });
  await store.put({
    subject: "acp-agent:t",
    issuer: provider.issuer,
    resource: "",
    clientId: provider.client.clientId,
    provider: provider.ref,
    tokens: { accessToken: new Secret("gho_not_revocable_here") },
    scopes: [],
    account: { label: "alice", login: "alice" },
    status: "active",
  });
  assert.equal((await auth.status()).state, "authenticated");
  await auth.logout();
  assert.equal((await auth.status()).state, "unauthenticated");
  assert.deepEqual(await store.list(), []);
  assert.deepEqual(written, [
    "Signed out here. No Revoke offers no way to revoke the app's access from here: remove it at https://no-revoke.example/settings/apps\n",
  ]);
});
