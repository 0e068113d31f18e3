/**
 * What a route handler sees: the service, path params, query, the parsed JSON body, and
 * helpers for the actor and the operation context (actor + Idempotency-Key).
 */
import { badRequest } from "../domain/errors.ts";
import { canonicalJson, parseUntrustedJson } from "../domain/json.ts";
import { requestHash, type OpContext, type Service } from "../service/service.ts";
import { assertIdempotencyKey, bodyTooLarge, MAX_BODY_BYTES, type ApiRequest } from "./types.ts";

export class RouteCall {
  private parsed?: { value: unknown };

  constructor(
    readonly svc: Service,
    readonly req: ApiRequest,
    readonly params: Record<string, string>,
  ) {}

  get query(): Record<string, string> {
    return this.req.query;
  }

  /** The JSON body; absent body reads as undefined. Malformed JSON is 400. */
  json(): unknown {
    if (this.parsed) return this.parsed.value;
    const text = this.req.body;
    let value: unknown;
    if (text === undefined || text.trim() === "") value = undefined;
    else {
      if (text.length > MAX_BODY_BYTES) {
        throw bodyTooLarge(MAX_BODY_BYTES);
      }
      value = parseUntrustedJson(text, "request body", { hint: "send one JSON object" });
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw badRequest("request body must be a JSON object", { value: value === null ? "null" : Array.isArray(value) ? "array" : typeof value });
      }
      // SPEC Authentication 2: a body field named actor is overwritten by the resolved
      // identity; writes take the actor from the request, so the field is dropped here
      if (Object.hasOwn(value, "actor")) delete (value as Record<string, unknown>).actor;
    }
    this.parsed = { value };
    return value;
  }

  /** The acting identity for a write (header, CARDS_ACTOR, default_user), else 403. */
  actor(): string {
    return this.svc.requireActor(this.req.headers["x-service-actor"]);
  }

  /** The viewing actor for reads (`me` in saved filters); may be undefined. */
  viewer(): string | undefined {
    return this.svc.resolveActor(this.req.headers["x-service-actor"]);
  }

  /** Operation context for a write answering `status` on success. */
  op(status: number): OpContext {
    const actor = this.actor();
    const key = this.req.headers["idempotency-key"];
    if (key === undefined) return { actor };
    assertIdempotencyKey(key);
    const { method, path, body = "", query } = this.req;
    const hash = requestHash(method, path, this.canonicalBody(), query);
    const rawHash = requestHash(method, path, body, query);
    return { actor, idempotency: { key, hash, ...(rawHash !== hash ? { rawHash } : {}), status } };
  }

  /** The body as canonical JSON (equal JSON, equal text); as sent when it is not JSON (the call fails on it). */
  private canonicalBody(): string {
    try {
      const value = this.json();
      return value === undefined ? "" : canonicalJson(value);
    } catch {
      return this.req.body ?? "";
    }
  }

  /** An integer query parameter (e.g. DELETE ?version=N); 400 when it is not one. */
  intQuery(name: string): number | undefined {
    const raw = this.req.query[name];
    if (raw === undefined) return undefined;
    // 0 too: no card has version 0 (a body's version 0 is refused the same way)
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw badRequest(`${name} must be a positive integer`, { field: name, value: raw });
    return Number(raw);
  }

  /** Rejects query parameters a route does not take. */
  onlyQuery(...allowed: string[]): void {
    for (const k of Object.keys(this.req.query)) {
      if (!allowed.includes(k)) {
        throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, ...(allowed.length ? { valid_options: allowed } : { hint: "this route takes no query parameters" }) });
      }
    }
  }
}
