/** Content-type sniffing from magic bytes, for artifacts uploaded without a Content-Type. */
const SIGNATURES: Array<[number[], string, number?]> = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "image/png"],
  [[0xff, 0xd8, 0xff], "image/jpeg"],
  [[0x47, 0x49, 0x46, 0x38], "image/gif"],
  [[0x25, 0x50, 0x44, 0x46, 0x2d], "application/pdf"],
  [[0x50, 0x4b, 0x03, 0x04], "application/zip"],
  [[0x1f, 0x8b], "application/gzip"],
  [[0x42, 0x5a, 0x68], "application/x-bzip2"],
  [[0x28, 0xb5, 0x2f, 0xfd], "application/zstd"],
  [[0x7f, 0x45, 0x4c, 0x46], "application/x-elf"],
  [[0x00, 0x61, 0x73, 0x6d], "application/wasm"],
  [[0x53, 0x51, 0x4c, 0x69, 0x74, 0x65, 0x20, 0x66], "application/vnd.sqlite3"],
];

/** The MIME type of a byte prefix; text when it decodes as UTF-8 without control bytes. */
export function sniffMime(head: Uint8Array): string {
  for (const [sig, mime] of SIGNATURES) if (sig.every((b, i) => head[i] === b)) return mime;
  if (head.length >= 12 && String.fromCharCode(...head.subarray(0, 4)) === "RIFF" && String.fromCharCode(...head.subarray(8, 12)) === "WEBP") return "image/webp";
  if (head.length === 0) return "application/octet-stream";
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(head.length >= 64 ? trimPartial(head) : head);
  } catch {
    return "application/octet-stream";
  }
  if (/[\u0000-\u0008\u000e-\u001f]/.test(text)) return "application/octet-stream";
  const t = text.trimStart();
  if (t.startsWith("{") || t.startsWith("[")) return "application/json";
  if (/^<\?xml|^<svg/i.test(t)) return t.toLowerCase().includes("<svg") ? "image/svg+xml" : "application/xml";
  if (/^<!doctype html|^<html/i.test(t)) return "text/html";
  return "text/plain; charset=utf-8";
}

/** Drops a UTF-8 sequence cut off at the end of a prefix. */
function trimPartial(b: Uint8Array): Uint8Array {
  let end = b.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = b[end - i]!;
    if ((byte & 0xc0) === 0xc0) { end -= i; break; }
    if ((byte & 0x80) === 0) break;
  }
  return b.subarray(0, end);
}

/** JavaScript MIME types (WHATWG MIME Sniffing) and CSS: what a page can load and run as its own. */
const ACTIVE_TYPES = new Set([
  "application/ecmascript", "application/javascript", "application/x-ecmascript", "application/x-javascript",
  "text/ecmascript", "text/javascript", "text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
  "text/javascript1.3", "text/javascript1.4", "text/javascript1.5", "text/jscript", "text/livescript",
  "text/x-ecmascript", "text/x-javascript", "text/css",
]);

/**
 * The Content-Type an artifact is served with. Stored bytes are anyone's and are served
 * from the board's origin: a script or a stylesheet goes out as text/plain, which a
 * browser (with nosniff) neither runs nor applies when a page loads it, so an upload can
 * never pass the board's `script-src 'self'`. The field keeps the declared type.
 */
export function servedMime(mime: string): string {
  return ACTIVE_TYPES.has(mime.split(";")[0]!.trim().toLowerCase()) ? "text/plain; charset=utf-8" : mime;
}
