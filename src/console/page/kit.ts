/// <reference lib="dom" />
/**
 * The page script's small vocabulary, shared by every part (bundle.ts explains how the parts are served): elements
 * built with textContent only (never innerHTML with data), the status line, JSON posts with the CSRF header, safe
 * links, relative times in words, and keeping the keyboard focus on "the same" control when a list is rebuilt.
 */

export type Kit = ReturnType<typeof consoleKit>;

export function consoleKit() {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "";
  const byId = (id: string): HTMLElement | null => document.getElementById(id);

  function say(text: string): void {
    const line = byId("status");
    if (line) line.textContent = text;
  }

  function el<K extends keyof HTMLElementTagNameMap>(
    tag: K,
    text?: string,
    attrs: Record<string, string> = {},
  ): HTMLElementTagNameMap[K] {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    return node;
  }

  /** Only http(s) links become hrefs (the server filters too). */
  function safeHref(url: string | null): string | null {
    if (!url) return null;
    try {
      const parsed = new URL(url);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch {
      return null;
    }
  }

  function inWords(ms: number): string {
    const s = Math.round(Math.abs(ms) / 1000);
    if (s < 120) return `${s} s`;
    const m = Math.round(s / 60);
    if (m < 120) return `${m} min`;
    const h = Math.round(m / 60);
    return h < 48 ? `${h} h` : `${Math.round(h / 24)} days`;
  }

  function expiresText(expiresAt: number | null, now: number): string {
    if (expiresAt === null) return "no expiry stated";
    return expiresAt > now
      ? `expires in ${inWords(expiresAt - now)}`
      : `expired ${inWords(now - expiresAt)} ago`;
  }

  function clock(at: number): string {
    return new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  }

  async function post(
    path: string,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) {
      const error = answer.error as { message?: string } | undefined;
      throw new Error(error?.message ?? `The console answered HTTP ${response.status}.`);
    }
    return answer;
  }

  /** Keeps keyboard focus on "the same" control (its data-focus-key) when a list is rebuilt. */
  function keepFocus(container: HTMLElement, rebuild: () => void): void {
    const active = document.activeElement;
    const key =
      active instanceof HTMLElement && container.contains(active)
        ? active.getAttribute("data-focus-key")
        : null;
    rebuild();
    if (!key) return;
    for (const candidate of Array.from(
      container.querySelectorAll<HTMLElement>("[data-focus-key]"),
    )) {
      if (candidate.getAttribute("data-focus-key") === key) {
        candidate.focus();
        break;
      }
    }
  }

  /** A status badge: the words always, a coloured dot repeating them. */
  function badge(text: string, tone: "ok" | "warn" | "bad" | "neutral"): HTMLElement {
    const node = el("span", undefined, { class: `badge badge-${tone}` });
    node.append(el("span", undefined, { class: "dot", "aria-hidden": "true" }), text);
    return node;
  }

  return { byId, say, el, safeHref, inWords, expiresText, clock, post, keepFocus, badge };
}
