/**
 * The transport-neutral API: one route table that HTTP (h3) mounts and the embedded CLI
 * dispatches in-process, so both modes print the same bytes for the same call.
 */
import { CardsError } from "../domain/errors.ts";

export interface ApiRequest {
  method: string;
  /** path relative to /v1, e.g. `/cards/card_0123…`, without the query string */
  path: string;
  query: Record<string, string>;
  /** the request headers the API reads (API_HEADERS), names lower-case */
  headers: ApiHeaderValues;
  /** raw request body text (JSON routes) */
  body?: string;
  /** the request body as bytes, for routes that take raw uploads (artifacts) */
  stream?: AsyncIterable<Uint8Array> | Uint8Array;
}

export interface ApiResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** `body` is a byte stream to send as is (artifact downloads), not JSON */
  raw?: ReadableStream<Uint8Array>;
}

/** The request headers the route table reads: a server hands over only these. */
export const API_HEADERS = ["x-service-actor", "idempotency-key", "content-type"] as const;
export type ApiHeaderValues = { readonly [K in (typeof API_HEADERS)[number]]?: string };

/** Request size limits (DECISIONS "Size limits"); docs/limits.md. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** 413 for a request body over `max` bytes, saying where larger content goes. */
export function bodyTooLarge(max: number): CardsError {
  return new CardsError("payload_too_large", `request body over ${max} bytes`, { hint: "send less; files go to artifact fields (POST /v1/cards/{id}/artifacts/{field}, up to 64 MiB)" });
}

/**
 * An Idempotency-Key is 1 to 255 printable ASCII characters (`!` to `~`), on every
 * surface: a header carries other text as bytes that HTTP reads as Latin-1 and the CLI
 * had as UTF-8, so one key named two records (docs/limits.md).
 */
export function assertIdempotencyKey(key: string): void {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new CardsError("bad_request", "Idempotency-Key must be 1 to 255 printable ASCII characters (! to ~, no spaces)", {
      field: "Idempotency-Key", hint: "make the key of ASCII letters, digits and - _ . : (a UUID is a good key)",
    });
  }
}
