/**
 * Step-up after a 403 `insufficient_scope` (MCP authorization 2026-07-28, "Scope Challenge Handling"; RFC 6750
 * §3.1): sign in again asking for the union of what was granted and what the server now requires, so the new grant
 * does not lose scopes the earlier calls needed. The SDK's transport hands a plain `AuthProvider`'s host an
 * `InsufficientScopeError` instead of re-authorizing itself, so the host calls `provider.stepUp(error)`.
 */

/** Space-separated scope lists merged in order, duplicates dropped. Pure. */
export function scopeUnion(
  ...lists: ReadonlyArray<string | readonly string[] | undefined>
): string[] {
  const out = new Set<string>();
  for (const list of lists) {
    const items = typeof list === "string" ? list.split(" ") : (list ?? []);
    for (const scope of items) if (scope !== "") out.add(scope);
  }
  return [...out];
}

/** Whether `wanted` asks for anything `granted` lacks (a step-up that adds nothing would loop). */
export function addsScopes(wanted: readonly string[], granted: readonly string[]): boolean {
  return wanted.some((scope) => !granted.includes(scope));
}

/** Default bound on step-ups per provider: a server that keeps asking for more is refused, not obeyed forever. */
export const DEFAULT_MAX_STEP_UPS = 3;
