/** Reading an event stream's Response in process, for as long as a test needs. */

/**
 * Reads `res`'s text until `until` holds, the stream ends, or `ms` pass, then cancels it.
 * `done`: the server ended the stream.
 */
export async function readStream(res: Response, until: (text: string) => boolean, ms = 2000): Promise<{ text: string; done: boolean }> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  let done = false;
  const end = Date.now() + ms;
  // a read that outlasts the 50 ms wait stays pending and is awaited next time (a second
  // read() would take the chunk after it, and this one's chunk would be lost)
  let pending: Promise<{ done: boolean; value?: Uint8Array }> | undefined;
  while (!until(text) && Date.now() < end) {
    pending ??= reader.read();
    const r = await Promise.race([pending, Bun.sleep(50).then(() => null)]);
    if (!r) continue;
    pending = undefined;
    if (r.done) { done = true; break; }
    text += dec.decode(r.value, { stream: true });
  }
  void pending?.catch(() => {}); // settled by the release below
  reader.releaseLock();
  void res.body!.cancel().catch(() => {});
  return { text, done };
}
