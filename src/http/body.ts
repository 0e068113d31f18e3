/** Reads a request body as text, refusing more than `max` bytes (413) without buffering past it. */
import { CardsError } from "../domain/errors.ts";
import { bodyTooLarge } from "../api/types.ts";

export async function readBodyText(req: Request, max: number): Promise<string | undefined> {
  try {
    return await readText(req, max);
  } catch (e) {
    if (e instanceof CardsError) throw e;
    throw bodyCutShort(e);
  }
}

/**
 * A body that stopped arriving (the client closed the connection part-way): the client's
 * doing, not a server fault, so no "internal error" in the log; no one may be left to
 * read the answer.
 */
export function bodyCutShort(cause: unknown): CardsError {
  const why = cause instanceof Error && cause.name !== "Error" ? ` (${cause.name})` : "";
  return new CardsError("bad_request", `the request body ended before it was complete: the connection closed part-way${why}`, {
    hint: "send the whole body its Content-Length announces",
  });
}

async function readText(req: Request, max: number): Promise<string | undefined> {
  if (!req.body) return undefined;
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (declared > max) throw bodyTooLarge(max);
  if (declared >= 0) return decode(new Uint8Array(await req.arrayBuffer()), max);
  // no Content-Length (chunked): read in pieces, stopping past the limit
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw bodyTooLarge(max);
    }
    chunks.push(value);
  }
  const buf = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) { buf.set(c, o); o += c.byteLength; }
  return decode(buf, max);
}

function decode(buf: Uint8Array, max: number): string | undefined {
  if (buf.byteLength > max) throw bodyTooLarge(max);
  if (buf.byteLength === 0) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    throw new CardsError("bad_request", "request body is not valid UTF-8");
  }
}


/** A streamed body (an artifact upload) whose read failure is bodyCutShort, as for a JSON body. */
export async function* streamedBody(body: ReadableStream<Uint8Array>): AsyncIterable<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      let chunk: { done: boolean; value?: Uint8Array };
      try {
        chunk = await reader.read();
      } catch (e) {
        throw bodyCutShort(e);
      }
      if (chunk.done || !chunk.value) return;
      yield chunk.value;
    }
  } finally {
    reader.releaseLock();
  }
}
