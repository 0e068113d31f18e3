/**
 * The CLI's two ways to reach the API: embedded (open the workspace, dispatch the route
 * table in-process) and remote (CARDS_URL / --url over HTTP). Both return the response
 * body text exactly as HTTP would carry it, so both modes print the same bytes.
 */
import { CardsError, type ErrorEnvelope } from "../domain/errors.ts";
import { assertIdempotencyKey, type ApiRequest } from "../api/types.ts";
import { declaredMediaType } from "../domain/media-type.ts";
import { assertActorText, givenActor } from "../domain/text.ts";

export interface CliGlobals {
  dir?: string;
  url?: string;
  actor?: string;
  idempotencyKey?: string;
  /** --timeout: seconds a remote call may take (else CARDS_TIMEOUT, else remote.ts's default) */
  timeout?: string;
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface RawResponse {
  status: number;
  /** the body as HTTP carries it */
  text: string;
  /** the decoded body when it is already in memory (embedded mode), so it is not serialized and parsed again */
  body?: unknown;
  bytes?: Uint8Array;
  headers?: Record<string, string>;
}

export interface ApiCall {
  method: string;
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** raw request bytes (artifact uploads) and their type */
  bytes?: Uint8Array;
  contentType?: string;
  /** answer with the raw response bytes (artifact downloads) */
  wantBytes?: boolean;
}

/** Performs one API call and returns the parsed body; an error answer throws its envelope as a CardsError. */
export async function callApi(g: CliGlobals, call: ApiCall): Promise<unknown> {
  const res = await callRaw(g, call);
  const body = res.body !== undefined ? res.body : res.text ? JSON.parse(res.text) : null;
  if (res.status >= 400) throw envelopeError(body as ErrorEnvelope);
  return body;
}

/**
 * Refuses a path that would reach another route over HTTP than embedded: a URL resolves
 * `.` and `..` segments (and `%2E`) before it is sent, so `links remove CARD . ..` became
 * DELETE /cards/CARD and deleted the card; and a `%` that starts no escape is refused by
 * a server, but was read as a literal embedded. Both modes now answer the same refusal.
 */
export function checkPath(path: string): void {
  for (const raw of path.split("?")[0]!.split("/")) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      throw new CardsError("bad_request", `malformed percent-encoding in the path ${JSON.stringify(path)}`, { field: "path", value: path, hint: "write a literal % as %25" });
    }
    if (seg === "." || seg === "..") {
      throw new CardsError("bad_request", `"${seg}" cannot be an id or a path segment: a URL resolves it to another route`, {
        field: "path", value: path, hint: "check the ids given: no card, link type, entry or comment id is . or ..",
      });
    }
  }
}

export async function callRaw(g: CliGlobals, call: ApiCall): Promise<RawResponse> {
  checkPath(call.path);
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) query[k] = v;
  const headers: Record<string, string> = {};
  const actor = callerActor(g);
  // refused on every call, embedded too: a header cannot carry it, so a remote read
  // refused it while the same read embedded answered
  if (actor) assertActorText(actor);
  if (actor) headers["x-service-actor"] = serverUrl(g) ? actorHeader(actor) : actor;
  const url = serverUrl(g);
  const write = call.method.toUpperCase() !== "GET";
  // checked here in both modes, as the route would: fetch refuses a header past U+00FF
  if (g.idempotencyKey && write) assertIdempotencyKey(headers["idempotency-key"] = g.idempotencyKey);
  // over a network an answer can be lost after the write was applied: every remote write
  // carries a key, which the error then names, so the retry is safe (an upload's bytes are
  // not in the request hash: it gets none)
  else if (url && write && !call.bytes) headers["idempotency-key"] = `cli-${crypto.randomUUID()}`;
  const body = call.body === undefined ? undefined : typeof call.body === "string" ? call.body : JSON.stringify(call.body, keepNonFinite);
  // checked here in both modes, as the route would: fetch refuses a header past U+00FF
  if (call.contentType) headers["content-type"] = declaredMediaType(call.contentType) ?? call.contentType;
  const req: ApiRequest = { method: call.method.toUpperCase(), path: call.path, query, headers, body, ...(call.bytes ? { stream: call.bytes } : {}) };
  if (url) {
    const { remoteRequest, timeoutSeconds, DEFAULT_TIMEOUT_S, DEFAULT_TRANSFER_TIMEOUT_S } = await import("./remote.ts");
    const transfer = call.bytes !== undefined || call.wantBytes === true;
    return remoteRequest(url, req, { wantBytes: call.wantBytes === true, timeoutS: timeoutSeconds(g) ?? (transfer ? DEFAULT_TRANSFER_TIMEOUT_S : DEFAULT_TIMEOUT_S), env: g.env });
  }
  const { localRequest } = await import("./local.ts");
  return localRequest(g, req);
}

/**
 * A number JSON cannot hold (`1e400` in --fields parses to Infinity) is sent as the same
 * out-of-range literal, so the service refuses it as it refuses that body from
 * `cards api` or HTTP; JSON.stringify alone sends `null`, which removes the field.
 */
function keepNonFinite(_key: string, v: unknown): unknown {
  return typeof v === "number" && !Number.isFinite(v) ? (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(v > 0 ? "1e999" : v < 0 ? "-1e999" : "null") : v;
}

/**
 * Who the caller is: `--actor`, else this process's CARDS_ACTOR. Sent as X-Service-Actor
 * in both modes: a server must not fall back to its own CARDS_ACTOR or default_user for a
 * caller that named itself (embedded, the service would read the same CARDS_ACTOR).
 */
export function callerActor(g: CliGlobals): string | undefined {
  // checked here, in both modes: remote, fetch would drop the spaces of " " and send none
  return g.actor !== undefined ? givenActor(g.actor, "--actor") : givenActor(g.env.CARDS_ACTOR, "CARDS_ACTOR");
}

/**
 * The actor as an X-Service-Actor value: its UTF-8 bytes, one per character, as HTTP
 * carries them (fetch refuses a header value past U+00FF; the server reads the bytes back
 * as UTF-8). An actor a header cannot carry at all is refused here, as the service would.
 */
export function actorHeader(actor: string): string {
  assertActorText(actor);
  return /[^\x00-\x7f]/.test(actor) ? String.fromCharCode(...new TextEncoder().encode(actor)) : actor;
}

/**
 * The server a call goes to, if any: `--url`, else CARDS_URL unless `--dir` names a
 * workspace on the command line (the flag the caller just typed wins over the environment).
 */
export function serverUrl(g: CliGlobals): string | undefined {
  const [url, from] = g.url ? [g.url, "--url"] : g.dir !== undefined ? [undefined, ""] : [g.env.CARDS_URL || undefined, "CARDS_URL"];
  // `127.0.0.1:4777` without a scheme failed later as an unreachable server (exit 7)
  if (url !== undefined && !/^https?:\/\//i.test(url)) {
    throw new CardsError("usage", `${from} must start with http:// or https://`, { field: from, value: url, hint: `for example ${from === "--url" ? "--url " : "CARDS_URL="}http://${url.replace(/^[a-z]+:\/*/i, "")}` });
  }
  return url;
}

/** Rebuilds a CardsError from an envelope so the runner prints the same envelope back. */
export function envelopeError(env: ErrorEnvelope): CardsError {
  const { error, message, ...extra } = env ?? { error: "internal", message: "empty error response" };
  return new CardsError(error, message, extra);
}
