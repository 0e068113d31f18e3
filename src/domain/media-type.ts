/**
 * Media types (`text/plain; charset=utf-8`): an artifact's `mime` and an upload's
 * Content-Type. Parameters are printable ASCII, as an HTTP header carries them: a value
 * past it was stored from the embedded CLI and refused by the remote one before sending.
 */
import { CardsError } from "./errors.ts";

const MEDIA_TYPE = /^[A-Za-z0-9][\w.+-]*\/[A-Za-z0-9][\w.+-]*(?:[ \t]*;[\x20-\x7E\t]*)?$/;

/** The longest Content-Type an upload may declare. */
export const MAX_CONTENT_TYPE = 200;

export const isMediaType = (s: string): boolean => MEDIA_TYPE.test(s);

/**
 * An upload's declared type, checked the same way on every surface (the CLI checks it
 * before sending): a media type, or undefined when absent or application/octet-stream
 * (the bytes are sniffed then).
 * @throws validation_failed naming Content-Type
 */
export function declaredMediaType(contentType: string | undefined): string | undefined {
  const t = contentType?.trim();
  if (!t) return undefined;
  if (!isMediaType(t) || t.length > MAX_CONTENT_TYPE) {
    throw new CardsError("validation_failed", `Content-Type ${JSON.stringify(t.slice(0, MAX_CONTENT_TYPE))} is not a media type`, {
      field: "Content-Type", value: t.slice(0, MAX_CONTENT_TYPE),
      hint: "send a media type such as text/plain or image/png, in ASCII, or leave Content-Type out (CLI: --type) to have the bytes sniffed",
    });
  }
  return t.split(";")[0]!.trim().toLowerCase() === "application/octet-stream" ? undefined : t;
}
