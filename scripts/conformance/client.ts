/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance`, client mode) runs for each
 * `auth/*` scenario: `node scripts/conformance/client.ts <server-url>`, the scenario in MCP_CONFORMANCE_SCENARIO, the
 * credentials it hands over in MCP_CONFORMANCE_CONTEXT (JSON), the protocol revision in
 * MCP_CONFORMANCE_PROTOCOL_VERSION (suite 0.2.x).
 *
 * It uses agentauth the way docs/mcp.md tells a user to, through the public surfaces only (`agentauth/mcp`,
 * `agentauth/vault`, `agentauth/core`, imported here from their sources so no build is needed): an
 * `agentAuthProvider` over a vault of its own, the official SDK's transport with `fetch: authProvider.fetch`,
 * `stepUp` on a 403, a client metadata document URL, `clientFor` for handed-over credentials, and a grant when the
 * scenario has no person. The "person" is the suite's authorization server, which approves at once: the
 * authorization URL is fetched and its redirect followed back to the provider's loopback listener.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Client,
  InsufficientScopeError,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { Secret } from "../../src/core/index.ts";
import {
  type AgentAuthProviderOptions,
  agentAuthProvider,
  clientCredentials,
  enterpriseManaged,
  type McpGrant,
  workloadIdentity,
} from "../../src/mcp/index.ts";
import type { OAuthClient } from "../../src/oauth/index.ts";
import { openVault } from "../../src/vault/index.ts";

/** The URL the suite's CIMD scenario expects as client_id (it does not fetch it). */
const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

type Context = Record<string, string | undefined>;

/** What the scenario hands over, as agentauth options: a pre-registered client, and a grant when no person signs in. */
function fromContext(scenario: string, context: Context): Partial<AgentAuthProviderOptions> {
  const id = context.client_id;
  const secret = context.client_secret ? new Secret(context.client_secret) : undefined;
  const client = (extra: Partial<OAuthClient> = {}) =>
    id ? () => ({ clientId: id, clientSecret: secret, ...extra }) : undefined;
  let grant: McpGrant | undefined;
  if (scenario.startsWith("auth/client-credentials")) {
    grant = clientCredentials();
    if (context.private_key_pem) {
      return {
        grant,
        clientFor: client({
          authMethod: "private_key_jwt",
          privateKey: new Secret(context.private_key_pem),
          signingAlg: context.signing_algorithm,
        }),
      };
    }
  } else if (scenario === "auth/wif-jwt-bearer") {
    grant = workloadIdentity({ assertion: context.valid_jwt ?? "" });
  } else if (context.idp_issuer) {
    grant = enterpriseManaged({
      idp: { issuer: context.idp_issuer, client: { clientId: context.idp_client_id ?? "" } },
      idToken: context.idp_id_token ?? "",
    });
  }
  return { grant, clientFor: client() };
}

/** The suite's authorization server approves at once: follow its redirect back to the loopback listener. */
async function approve(url: URL): Promise<void> {
  const answer = await fetch(url, { redirect: "manual" });
  await answer.body?.cancel();
  const location = answer.headers.get("location");
  if (!location)
    throw new Error(`the authorization endpoint answered ${answer.status} without a redirect`);
  await (await fetch(new URL(location, url))).arrayBuffer();
}

async function main(serverUrl: string): Promise<void> {
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as Context;
  const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  const home = mkdtempSync(join(tmpdir(), "agentauth-conformance-"));
  const vault = openVault({ home });
  const client = new Client(
    { name: "agentauth-conformance", version: "1.0.0" },
    // 2026-07-28 servers speak the stateless lifecycle only (their mock answers `initialize` with 400).
    version && version >= "2026-07-28"
      ? { versionNegotiation: { mode: { pin: version } } }
      : undefined,
  );
  try {
    const authProvider = agentAuthProvider({
      serverUrl,
      store: vault,
      subject: "conformance",
      clientMetadataUrl: CLIENT_METADATA_URL,
      onAuthorizationUrl: approve,
      ...fromContext(scenario, context),
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(serverUrl), {
        authProvider,
        fetch: authProvider.fetch,
      }),
    );
    // A 403 insufficient_scope: step up (bounded by the provider) and try again.
    const withStepUp = async <T>(call: () => Promise<T>): Promise<T> => {
      for (;;) {
        try {
          return await call();
        } catch (error) {
          if (!(error instanceof InsufficientScopeError)) throw error;
          await authProvider.stepUp(error);
        }
      }
    };
    await withStepUp(() => client.listTools());
    await withStepUp(() => client.callTool({ name: "test-tool", arguments: {} }));
  } finally {
    await client.close().catch(() => {});
    await vault.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const serverUrl = process.argv[2];
if (!serverUrl) {
  console.error(
    "usage: MCP_CONFORMANCE_SCENARIO=<scenario> node scripts/conformance/client.ts <server-url>",
  );
  process.exit(2);
}
main(serverUrl).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`agentauth conformance client: ${(error as Error)?.message ?? String(error)}`);
    process.exit(1);
  },
);
