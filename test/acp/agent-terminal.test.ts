/**
 * Terminal login as the client runs it (ACP: same program, the method's args appended): the agent binary with
 * `--login` prints where to sign in on stderr, exits 0 once the person approves, and leaves a credential that a
 * fresh agent process reports. A failed login exits non-zero and says why.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { useIdp } from "../support/idp.ts";
import { tempDir } from "../support/tmp.ts";
import {
  assertNotPrinted,
  assertResult,
  initializeV1,
  newSessionParams,
  openInBrowser,
  startAgent,
  vaultTokens,
} from "./fixtures/agent-process.ts";

const idp = await useIdp();
const TIMEOUT = { timeout: 30_000 };

test(
  "[ACP-terminal-login] `agent --login` shows the URL and code on stderr, exits 0 when approved, and a new agent is authenticated",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    // The client appends the method's args ([--login]) and overlays its env ({}): exactly what initialize advertised.
    const advertised = startAgent(t, { issuer: idp.issuer, home });
    const init = await initializeV1(advertised, { auth: { terminal: true } });
    const terminal = (init.authMethods as { id: string; args?: string[] }[]).find(
      (m) => m.id === "terminal-login",
    );
    assert.deepEqual(terminal?.args, ["--login"]);
    await advertised.close();

    const login = startAgent(t, { issuer: idp.issuer, home, argv: terminal?.args ?? [] });
    const [, uri, code] = await login.waitForStderr(
      /open\n\n {2}(http:\/\/127\.0\.0\.1:\d+\/device)\n\nand enter the code\n\n {2}([A-Z]{4}-[A-Z]{4})\n/,
    );
    assert.equal(uri, `${idp.issuer}/device`);
    await openInBrowser(`${uri}?user_code=${code}`);
    assert.deepEqual(await login.exited, { code: 0, signal: null });
    assert.match(login.stderr, /^Signed in as alice@example\.test\.$/m);
    // stdout is the ACP channel; a terminal login writes nothing there.
    assert.equal(login.stdout, "");

    const [tokens] = await vaultTokens(home);
    for (const [name, value] of Object.entries(tokens ?? {})) {
      if (typeof value === "object" && value) assertNotPrinted(login, value.reveal(), name);
    }

    const agent = startAgent(t, { issuer: idp.issuer, home });
    await initializeV1(agent, { auth: { terminal: true } });
    assertResult(await agent.request("auth/status", {}), {
      state: "authenticated",
      accounts: [
        {
          label: "alice@example.test",
          active: true,
          name: "Alice Liddell",
          email: "alice@example.test",
          organization: "Wonderland Labs",
        },
      ],
    });
    assert.equal((await agent.request("session/new", newSessionParams(home))).error, undefined);
  },
);

test(
  "[ACP-terminal-login-unreachable] `agent --login` against an unreachable issuer exits non-zero with a message on stderr",
  TIMEOUT,
  async (t) => {
    const home = tempDir();
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const login = startAgent(t, { issuer: "http://127.0.0.1:1", home, argv: ["--login"] });
    const exit = await login.exited;
    assert.notEqual(exit.code, 0);
    assert.equal(exit.signal, null);
    assert.match(login.stderr, /^Sign-in failed: .+/m);
    assert.equal(login.stdout, "");
  },
);
