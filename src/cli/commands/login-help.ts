/** `agentauth login`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

/** DEFAULT_LOGIN_SCOPE of src/oauth/login.ts, written out: that module loads the OAuth engine (test/cli/help.test.ts). */
const DEFAULT_LOGIN_SCOPE = "openid profile email offline_access";

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
