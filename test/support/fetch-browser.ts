/**
 * Test support: a "browser" for `$BROWSER`: fetches the URL it is given (following redirects, as the auto-approving
 * embedded server's sign-in needs) and records it in $FETCH_BROWSER_LOG when set, so a test can count sign-ins.
 */

import { appendFileSync } from "node:fs";

const url = process.argv[2];
if (!url) process.exit(2);
if (process.env.FETCH_BROWSER_LOG) appendFileSync(process.env.FETCH_BROWSER_LOG, `${url}\n`);
if (process.env.FETCH_BROWSER_HOLD !== "1") await (await fetch(url)).arrayBuffer();
