/** The embedded server's HTML: plain, self-contained pages (no external fonts or scripts) for people and tests. */

export function escapeHtml(value: string): string {
  return value
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}
input,button{font-size:1rem;padding:.4rem;margin:.2rem 0;width:100%}code{font-size:1.4rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

export function loginPage(uid: string, clientName: string, error?: string): string {
  return page(
    "Sign in",
    `<p>Sign in to continue to <strong>${escapeHtml(clientName)}</strong>.</p>
${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login" autocomplete="off">
<label>User <input name="login" autofocus required></label>
<label>Password <input name="password" type="password" required></label>
<button type="submit">Sign in</button></form>
<p><small>Demo accounts: alice/alice, bob/bob, carol/carol.</small></p>`,
  );
}

export function consentPage(
  uid: string,
  clientName: string,
  scopes: string[],
  resources: string[],
): string {
  const items = [...scopes.map((s) => `scope ${s}`), ...resources.map((r) => `resource ${r}`)];
  return page(
    "Authorize",
    `<p><strong>${escapeHtml(clientName)}</strong> asks for:</p>
<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join("")}</ul>
<form method="post" action="/interaction/${escapeHtml(uid)}/confirm"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${escapeHtml(uid)}/abort"><button type="submit">Deny</button></form>`,
  );
}

export function deviceInputPage(form: string, message: string): string {
  return page(
    "Connect a device",
    `<p>${escapeHtml(message)}</p>${form}<button type="submit" form="op.deviceInputForm">Continue</button>`,
  );
}

/** What the device-code input page answers with, from oidc-provider's `userCodeInputSource(ctx, form, out, err)`. */
export function deviceInputResponse(
  form: string,
  out: { error?: unknown; error_description?: unknown } | undefined,
  err: (Error & { userCode?: unknown; cause?: unknown }) | undefined,
  clientName: string | undefined,
): string {
  if (!err) return deviceInputPage(form, "Enter the code shown on your device.");
  // oidc-provider turns the interaction's access_denied (Deny on the consent page) into an AbortedError whose
  // cause is AccessDenied, and records access_denied on the device code: the device's next poll is told.
  const cause = err.cause as { error?: unknown } | undefined;
  if (err.name === "AbortedError" && (cause?.error ?? "access_denied") === "access_denied") {
    return deniedPage(clientName ?? "The application");
  }
  if (err.userCode !== undefined || err.name === "NoCodeError")
    return deviceInputPage(form, "That code did not work. Check it and try again.");
  const what = typeof out?.error === "string" ? out.error : "error";
  const why = typeof out?.error_description === "string" ? `: ${out.error_description}` : "";
  return deviceInputPage(
    form,
    `The sign-in could not be completed (${what}${why}). Start again from your device, or enter a new code.`,
  );
}

/** After Deny: the person chose this, so no "failed" wording, and they learn the application knows. */
export function deniedPage(clientName: string): string {
  return page(
    "Access denied",
    `<p>You denied access. <strong>${escapeHtml(clientName)}</strong> was told and will not be signed in.</p>
<p>You can close this page.</p>`,
  );
}

export function deviceConfirmPage(form: string, clientName: string, userCode: string): string {
  return page(
    "Confirm device",
    `<p><strong>${escapeHtml(clientName)}</strong> wants to sign in. Check that your device shows this code:</p>
<p><code>${escapeHtml(userCode)}</code></p>${form}
<button type="submit" form="op.deviceConfirmForm">Continue</button>`,
  );
}

export function deviceSuccessPage(clientName: string): string {
  return page(
    "Signed in",
    `<p>You are signed in to <strong>${escapeHtml(clientName)}</strong>. You can close this page and return to your terminal.</p>`,
  );
}

export function errorPage(error: string, description?: string): string {
  return page(
    "Sign-in failed",
    `<p>${escapeHtml(error)}</p>${description ? `<p>${escapeHtml(description)}</p>` : ""}`,
  );
}
