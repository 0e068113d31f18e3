/**
 * The h3 app: /v1 routes from the shared route table, one error envelope for
 * everything (h3's own errors included), JSON serialised once so remote and embedded
 * callers see the same bytes.
 */
import { H3, type H3Event } from "h3";
import { CardsError, toEnvelope, isCardsError } from "../domain/errors.ts";
import { dispatch, errorResponse, isRawRoute } from "../api/dispatch.ts";
import { MAX_BODY_BYTES, type ApiHeaderValues, type ApiResponse } from "../api/types.ts";
import { MAX_ARTIFACT_BYTES, type Service } from "../service/index.ts";
import { readBodyText } from "./body.ts";
import { eventStream } from "./sse.ts";
import { registerUi } from "./ui.ts";

export interface HttpAppOptions {
  log?: (msg: string) => void;
}

export function createHttpApp(svc: Service, opts: HttpAppOptions = {}): H3 {
  const app = new H3({
    silent: true,
    onError: (err) => {
      const cause = (err as { cause?: unknown }).cause ?? err;
      if (isCardsError(cause)) return toResponse(errorResponse(cause));
      const status = (err as { status?: number }).status ?? 500;
      if (status >= 500) {
        opts.log?.(`internal error: ${(cause as Error)?.stack ?? String(cause)}`);
        return toResponse({ status: 500, body: toEnvelope(cause) });
      }
      const code = status === 404 ? "not_found" : status === 405 ? "method_not_allowed" : status === 413 ? "payload_too_large" : "bad_request";
      const message = (err as Error).message;
      return toResponse(errorResponse(new CardsError(code, !message || message === "Bad Request" ? "malformed request (URL, headers or body)" : message)));
    },
  });

  app.get("/v1/events/stream", (event: H3Event) => eventStream(svc, event.req));

  // not async: a read whose route answers at once is answered without a promise
  app.all("/v1/**", (event: H3Event) => {
    const url = event.url;
    const method = event.req.method;
    const headers: ApiHeaderValues = new ApiHeaders(event.req.headers);
    const path = url.pathname.slice(3) || "/";
    const query: Record<string, string> = {};
    if (url.search) for (const [k, v] of url.searchParams) query[k] = v;
    if (method === "GET") {
      const res = dispatch(svc, { method, path, query, headers });
      return res instanceof Promise ? res.then(toResponse) : toResponse(res);
    }
    return withBody(event, method, path, query, headers);
  });

  async function withBody(event: H3Event, method: string, path: string, query: Record<string, string>, headers: ApiHeaderValues): Promise<Response> {
    if (isRawRoute(method, path)) {
      const declared = Number(event.req.headers.get("content-length") ?? NaN);
      if (declared > MAX_ARTIFACT_BYTES) return toResponse(errorResponse(new CardsError("payload_too_large", `artifact over ${MAX_ARTIFACT_BYTES} bytes`, { hint: "see docs/limits.md" })));
      const stream = event.req.body ?? new Uint8Array(0);
      return toResponse(await dispatch(svc, { method, path, query, headers, stream: stream as AsyncIterable<Uint8Array> }));
    }
    let body: string | undefined;
    try {
      body = await readBodyText(event.req, MAX_BODY_BYTES);
    } catch (e) {
      return toResponse(errorResponse(e));
    }
    return toResponse(await dispatch(svc, { method, path, query, headers, body }));
  }

  registerUi(app);

  app.all("/**", (event: H3Event) =>
    toResponse(errorResponse(new CardsError("not_found", `no route ${event.req.method} ${new URL(event.req.url).pathname}`, {
      hint: "the API lives under /v1 and the board under /ui",
    }))));

  return app;
}

/** The request headers the route table reads, each read from the request when asked for. */
class ApiHeaders implements ApiHeaderValues {
  constructor(private readonly h: Headers) {}
  get "x-service-actor"(): string | undefined { return this.h.get("x-service-actor") ?? undefined; }
  get "idempotency-key"(): string | undefined { return this.h.get("idempotency-key") ?? undefined; }
  get "content-type"(): string | undefined { return this.h.get("content-type") ?? undefined; }
}

export function toResponse(res: ApiResponse): Response {
  if (res.raw) return new Response(res.raw, { status: res.status, headers: res.headers });
  return new Response(JSON.stringify(res.body), {
    status: res.status,
    headers: { "content-type": "application/json; charset=utf-8", ...res.headers },
  });
}
