/**
 * Reading an HTTP answer's body with a size cap that holds while the bytes arrive: a declared `content-length`
 * over the cap is refused unread, and a chunked body is read chunk by chunk and cancelled the moment it passes the
 * cap, so a hostile or broken server streaming gigabytes costs at most `max` bytes of memory.
 */

/** The body as text, or undefined when it is larger than `max` bytes (the rest is then cancelled, never read). */
export async function readCappedText(response: Response, max: number): Promise<string | undefined> {
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > max) {
    await response.body?.cancel().catch(() => {});
    return undefined;
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(all);
}
