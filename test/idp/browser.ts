/** Test support for the IdP's page tests: the small part of a browser a sign-in needs. */

/** The small part of a browser these pages need: a cookie jar (names only; paths ignored) and manual redirects. */
export class Browser {
  readonly #cookies = new Map<string, string>();

  async request(
    url: URL,
    form?: Record<string, string>,
  ): Promise<{ status: number; location?: URL; html: string }> {
    const response = await fetch(url, {
      method: form ? "POST" : "GET",
      body: form ? new URLSearchParams(form) : undefined,
      redirect: "manual",
      headers: { cookie: [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";");
      const eq = pair.indexOf("=");
      if (eq > 0) this.#cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get("location");
    return {
      status: response.status,
      location: location ? new URL(location, url) : undefined,
      html: await response.text(),
    };
  }

  /** Follows redirects while they stay on `origin`; returns the last page, or the redirect that leaves. */
  async visit(url: URL, origin: string, form?: Record<string, string>) {
    let answer = await this.request(url, form);
    while (answer.location && answer.location.origin === origin)
      answer = await this.request(answer.location);
    return answer;
  }
}
