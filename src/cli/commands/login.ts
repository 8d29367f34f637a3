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
