/** `agentauth demo`'s usage and per-subcommand help (the CLI help contract), apart from the command so that help and --version load nothing else. */

export const DEMO_USAGE = `agentauth demo [--data-dir DIR] [--fresh] [--port N] [--json]
  Starts the whole system on loopback (authorization server, example RAP tool and runtime, example AHP host)
  with the console in front of it, and prints the console's link (in a checkout, \`npm start\` runs it).
agentauth demo [--script | --auto-approve]
  Runs every protocol's journey unattended (ACP, AHP, RAP) and prints a transcript; exit 1 when a step fails.`;

export const DEMO_HELP: Record<string, string> = {
  "": `agentauth demo [--data-dir DIR] [--fresh] [--port N] [--json] [--script]
  Starts the whole system on loopback with the console in front of it (in a checkout, \`npm start\`): the embedded
  authorization server, the protected API and the example RAP tool, a RAP runtime, the example AHP host, and the
  console with the ACP, AHP and RAP panels. Progress goes to stderr; then the summary on stdout: the console's
  link (open it in your browser; it works once), every address, and commands to try each protocol, written for
  where it runs (npx agentauth in a project that installed it, agentauth when global). Everything
  (vault, keys, the server's state, ports) lives in one folder, so a second start keeps users signed in and the
  same addresses. Ctrl-C stops everything.

  --data-dir DIR     the demo's folder (default $AGENTAUTH_HOME/demo); a non-empty folder must be a demo folder
  --fresh            empty the demo folder first (only one marked as a demo folder: demo.json)
  --port N           the console's port (default: the one saved in the folder, else a free one; 0 = any)
  --json             print one line {"event":"ready","urls":{…},"dataDir":…} on stdout instead of the summary
  --script           run every protocol's journey unattended in a temporary folder and print a transcript
  --auto-approve     the same as --script

  Examples:
    agentauth demo
    agentauth demo --fresh --data-dir /tmp/agentauth-demo
    agentauth demo --script`,
};
