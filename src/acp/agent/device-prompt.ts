/**
 * The device prompt as the kit shows it: RFC 8628 section 3.2 puts the verification URL and the user code in the
 * authorization server's answer, so they are a peer's text. They reach the terminal, the ACP client's
 * elicitation and our notification only after `peerUrl` / `peerText`, as in the CLI (an escape sequence in them
 * must not rewrite the person's terminal; a bidi override must not disguise the URL).
 */

import { peerText, peerUrl } from "../../core/display.ts";
import { DeviceFlowError, type DevicePrompt } from "../../oauth/index.ts";

export interface ShownDevicePrompt {
  /** The WHATWG-serialised verification URL (controls and spaces percent-encoded). */
  uri: string;
  complete?: string;
  userCode: string;
}

export function shownDevicePrompt(prompt: DevicePrompt): ShownDevicePrompt {
  const uri = peerUrl(prompt.verificationUri);
  if (!uri) {
    throw new DeviceFlowError(
      "unusable_verification_uri",
      "The authorization server sent an unusable verification URL (not an absolute URL), so there is no page " +
        "to send you to; ask the server's operator to fix its device authorization endpoint, or use the browser flow.",
    );
  }
  const complete = peerUrl(prompt.verificationUriComplete);
  // RFC 8628 section 6.1 recommends short codes (8 characters); 64 leaves room for any real one.
  const userCode = peerText(prompt.userCode, { max: 64 });
  return { uri, ...(complete ? { complete } : {}), userCode };
}
