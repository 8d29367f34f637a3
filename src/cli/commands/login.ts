/** `agentauth login`: a device or browser login at any OAuth server or at a provider preset, stored in the vault. */

import { Secret } from "../../core/secret.ts";
import { DEFAULT_LOGIN_SCOPE, type OAuthClient } from "../../oauth/index.ts";
import { parseFlags } from "../flags.ts";
import { type CliIo, EXIT, UsageError } from "../io.ts";
import { printAccount, runLogin } from "./login-run.ts";
import {
  clientSecretFrom,
  genericFlags,
  providerFromFlags,
  refuseKnownFailures,
  refuseSecretOnArgv,
} from "./provider-flags.ts";

export { printAccount, runLogin } from "./login-run.ts";

export const LOGIN_USAGE = `agentauth login --issuer URL [--client-id ID] [--scope S] [--resource R] [--device | --browser] [--subject S] [--json]
agentauth login --provider NAME --client-id ID [--provider-host URL] [--provider-option K=V]…
                [--client-secret-env VAR | --client-secret-file PATH] [--device | --browser] [--scope S]
                [--redirect-port N] [--json]
  Signs in with the device flow or a browser and a loopback redirect, and stores the tokens encrypted in the
  vault, at any discoverable OAuth server (--issuer) or at a provider ('agentauth providers' lists them).`;

export const LOGIN_HELP: Record<string, string> = {
  "": `agentauth login --issuer URL [options]
agentauth login --provider NAME --client-id ID [options]
  Signs in and stores the tokens encrypted in the vault. The device flow (RFC 8628) prints a URL and a code on
  stderr; the browser flow prints an authorization URL and waits for the redirect on a loopback port (RFC 8252,
  PKCE S256).

  --issuer URL        an OAuth 2.0 / OpenID Connect server (https, or http on loopback); its metadata is discovered
                      (alone, or with --provider generic to give that preset its server)
  --provider NAME     a provider preset instead: github, … ('agentauth providers' lists them and what to register);
                      generic is any server: --provider generic --issuer URL, or --provider-option endpoints={…}
                      for one without metadata
  --provider-host URL a self-hosted server of that provider: GitHub Enterprise Server, GitLab self-managed
                      (https, or http on loopback only)
  --provider-option K=V  another option of the preset, repeatable: e.g. app=github_app for a GitHub App
  --provider-origin REAL=URL  send the provider's requests for origin REAL to URL instead (a proxy or a test
                      simulator; https, or http on loopback), repeatable
  --client-id ID      the registered client id (required with --provider; default agentauth-cli with --issuer)
  --client-secret-env VAR   a confidential client's secret, read from the environment variable VAR
  --client-secret-file PATH a confidential client's secret, read from the file PATH
  --scope S           the scopes to ask for (default: the provider's; "${DEFAULT_LOGIN_SCOPE}" with
                      --issuer and with --provider generic)
  --resource R        the RFC 8707 resource indicator the tokens are for (part of the vault key)
  --device            use the device flow (the default when the provider has one)
  --browser           use a browser and a loopback redirect instead
  --subject S         the vault subject to store the credential under (default the account's id; not agentauth:…)
  --redirect-port N   browser flow: listen on this loopback port (default any free one), for providers that match
                      the registered redirect URI exactly (Atlassian): register http://127.0.0.1:N/callback
  --json              print the stored credential (never a token) as JSON on stdout; errors as JSON too

  The client secret is never taken on the command line (there is no --client-secret flag): it is stored encrypted
  with the credential, so later token refreshes and revocation need no flags. With --issuer and
  neither secret flag, $AGENTAUTH_CLIENT_SECRET is used when set. Ctrl-C cancels the login (exit 130).

  Example:
    agentauth login --issuer http://127.0.0.1:4444 --device
    agentauth login --provider github --client-id Iv1.0123456789abcdef --device
    agentauth login --provider generic --issuer https://auth.example.com --client-id my-app --browser
    GITHUB_SECRET=… agentauth login --provider github --provider-host https://github.example.com \\
      --client-id Ov23li0123456789abcd --client-secret-env GITHUB_SECRET --browser`,
};

export async function loginCommand(argv: string[], io: CliIo): Promise<number> {
  refuseSecretOnArgv(argv);
  const { values } = parseFlags({
    args: argv,
    options: {
      issuer: { type: "string" },
      provider: { type: "string" },
      "provider-host": { type: "string" },
      "provider-option": { type: "string", multiple: true, default: [] },
      "provider-origin": { type: "string", multiple: true, default: [] },
      "client-id": { type: "string" },
      "client-secret-env": { type: "string" },
      "client-secret-file": { type: "string" },
      scope: { type: "string" },
      resource: { type: "string" },
      device: { type: "boolean", default: false },
      browser: { type: "boolean", default: false },
      subject: { type: "string" },
      "redirect-port": { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const generic = values.provider === "generic";
  if (values.issuer !== undefined && values.provider !== undefined && !generic) {
    throw new UsageError(
      `give --issuer URL or --provider NAME, not both (a preset knows its server; --issuer goes with --provider generic or alone)`,
    );
  }
  if (values.device && values.browser) throw new UsageError("choose one of --device and --browser");
  const secretFlags = { env: values["client-secret-env"], file: values["client-secret-file"] };
  const common = {
    scope: values.scope,
    resource: values.resource,
    subject: values.subject,
    redirectPort: redirectPortOf(values["redirect-port"], values.device),
  };
  if (values.provider !== undefined) {
    if (generic) genericFlags(values.issuer, values["provider-host"], values["provider-option"]);
    const provider = providerFromFlags({
      provider: values.provider,
      host: values["provider-host"],
      options:
        generic && values.issuer
          ? [...values["provider-option"], `issuer=${values.issuer}`]
          : values["provider-option"],
      origins: values["provider-origin"],
      clientId: values["client-id"],
      clientSecret: clientSecretFrom(secretFlags, io.env),
    });
    const flow = values.browser
      ? "browser"
      : values.device || provider.flows.includes("device")
        ? "device"
        : "browser";
    refuseKnownFailures(values.provider, flow, provider.client.clientSecret !== undefined);
    // A generic server has no preset scope: the documented default, as for --issuer (not none, which a server
    // may answer with access_denied after the person approved).
    const scope = common.scope ?? (generic ? DEFAULT_LOGIN_SCOPE : undefined);
    printAccount(io, await runLogin(io, { provider, flow, ...common, scope }), values.json);
    return EXIT.ok;
  }
  if (values.issuer === undefined) {
    throw new UsageError(
      "login needs --issuer URL (any discoverable OAuth server) or --provider NAME ('agentauth providers')",
    );
  }
  for (const flag of ["provider-host", "provider-option", "provider-origin"] as const) {
    const value = values[flag];
    if (value !== undefined && (!Array.isArray(value) || value.length > 0)) {
      throw new UsageError(`--${flag} goes with --provider NAME, not with --issuer`);
    }
  }
  // The implicit $AGENTAUTH_CLIENT_SECRET applies to --issuer logins only: sending it to a provider the person
  // named for another reason would hand one server's secret to another.
  const fromEnv = io.env.AGENTAUTH_CLIENT_SECRET;
  const clientSecret =
    clientSecretFrom(secretFlags, io.env) ?? (fromEnv ? new Secret(fromEnv) : undefined);
  const client: OAuthClient = {
    clientId: values["client-id"] ?? "agentauth-cli",
    clientSecret,
  };
  const record = await runLogin(io, {
    issuer: values.issuer,
    client,
    flow: values.browser ? "browser" : "device",
    ...common,
    scope: values.scope ?? DEFAULT_LOGIN_SCOPE,
  });
  printAccount(io, record, values.json);
  return EXIT.ok;
}

function redirectPortOf(value: string | undefined, device: boolean): number | undefined {
  if (value === undefined) return undefined;
  if (device) throw new UsageError("--redirect-port goes with the browser flow, not --device");
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new UsageError(
      `--redirect-port must be a port number from 1 to 65535, not ${JSON.stringify(value)}`,
    );
  }
  return port;
}
