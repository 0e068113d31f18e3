/**
 * The h3 app: /v1 routes from the shared route table, one error envelope for
 * everything (h3's own errors included), JSON serialised once so remote and embedded
 * callers see the same bytes.
 */
import { H3, type H3Event } from "h3";
import { CardsError, fromEnvironment, toEnvelope, isCardsError } from "../domain/errors.ts";
import { escapeControls } from "../domain/text.ts";
import { dispatch, errorResponse, isRawRoute } from "../api/dispatch.ts";
import { logInternalError } from "../api/internal-log.ts";
import { MAX_BODY_BYTES, type ApiHeaderValues, type ApiResponse } from "../api/types.ts";
import { MAX_ARTIFACT_BYTES, type Service } from "../service/index.ts";
import { readBodyText, streamedBody } from "./body.ts";
import { queryParams } from "../api/query.ts";
import { actorHeader, eventStream, utf8Header } from "./sse.ts";
import { registerUi } from "./ui.ts";

export interface HttpAppOptions {
  /** where 503 answers are logged (serverTrouble); none: not logged */
  trouble?: ServerTrouble;
  /** `cards serve --access-log`: one line per answer (accessLine) */
  access?: (line: string) => void;
  /**
   * The server listens on loopback only: a request must name a loopback host. A page on
   * another site that rebinds its own name to 127.0.0.1 (DNS rebinding) is refused.
   */
  loopbackOnly?: boolean;
  /**
   * The origin people and agents reach this server by through a reverse proxy
   * (`--public-url`): requests naming its host, and writes from its pages, are accepted
   * beside the server's own.
   */
  publicOrigin?: string;
}

const LOOPBACK_HOST = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1)$/;

/**
 * Refuses what a web page on another site could make a browser send: any request naming
 * a foreign host (when loopback-only) and any write carrying a foreign Origin. Clients
 * that are not browsers send no Origin and are not affected; the board under /ui is
 * same-origin. There is no authentication (SPEC), so this is what keeps a loopback server
 * out of reach of the web pages its user visits.
 */
function crossSiteRefusal(req: Request, url: URL, loopbackOnly: boolean, publicOrigin: URL | undefined): CardsError | undefined {
  // the host people open (a proxy that keeps Host), with or without its port
  const publicHost = publicOrigin !== undefined && url.hostname === publicOrigin.hostname &&
    (url.port === "" || url.port === (publicOrigin.port || (publicOrigin.protocol === "https:" ? "443" : "80")));
  if (loopbackOnly && !LOOPBACK_HOST.test(url.hostname) && !publicHost) {
    return new CardsError("forbidden", `requests must name a loopback host, not ${JSON.stringify(url.hostname)}`, {
      hint: publicOrigin
        ? `the server listens on loopback and is reached as ${publicOrigin.origin} (--public-url): call it by one of those`
        : "the server listens on loopback: call it as http://127.0.0.1:PORT or http://localhost:PORT; behind a reverse proxy that keeps the Host header, start it with --public-url https://YOUR-HOST (docs/cli.md)",
    });
  }
  const origin = req.headers.get("origin");
  // a request naming the public host was sent to the public origin: a page on that host's
  // other scheme or port (http:// beside https://) is another origin, refused
  const ownOrigin = (o: string) => o === publicOrigin?.origin || (!publicHost && o === url.origin);
  if (origin && req.method !== "GET" && req.method !== "HEAD" && !ownOrigin(origin)) {
    return new CardsError("forbidden", `writes from another origin (${origin}) are refused`, {
      hint: publicOrigin
        ? `a browser page may write only from the server's own origin or ${publicOrigin.origin} (--public-url)`
        : "a browser page may write only from the server's own origin (the board under /ui); behind a reverse proxy, start the server with --public-url set to the address people open (docs/cli.md)",
    });
  }
  return undefined;
}

/**
 * The `--public-url` of a server behind a reverse proxy: http or https, a host, an
 * optional port, and nothing after (the board and the API live at the root: /ui, /v1).
 */
export function parsePublicUrl(raw: string): URL {
  let u: URL | undefined;
  try { u = new URL(raw); } catch { /* refused below */ }
  const bad = (why: string) => new CardsError("usage", `--public-url ${JSON.stringify(raw)} ${why}`, {
    field: "--public-url", value: raw, hint: "the address people open, such as https://cards.example.com (the proxy forwards / to this server)",
  });
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) throw bad("is not an http or https URL");
  if (u.username || u.password) throw bad("holds a user name or password");
  if ((u.pathname !== "/" && u.pathname !== "") || u.search || u.hash) throw bad("has a path, a query or a fragment: the board and the API are served at the root (/ui, /v1), not under a sub-path");
  return u;
}

/** RFC 9110 §7.2: a host (a bracketed IPv6 literal, or a name or IPv4 address) and an optional port. */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::(\d{0,5}))?$/;

/**
 * A Host header that is not one host and port (RFC 9112 §3.2: answered 400): two Host
 * fields (which arrive joined by a comma), a port past 65535, userinfo, a path. A request
 * without Host (HTTP/1.0) passes.
 */
export function malformedHost(host: string | null): CardsError | undefined {
  if (host === null) return undefined;
  const m = HOST_VALUE.exec(host);
  // and one the URL parser takes, as h3 does ("[1.2.3.4]", "256.1.1.1", "xn--a" are not)
  if (m && !(m[1] && Number(m[1]) > 65535) && URL.canParse(`http://${host}/`)) return undefined;
  return new CardsError("bad_request", `malformed Host header ${JSON.stringify(host)}: one host and an optional port are expected`, {
    field: "Host", value: host, hint: "send one Host header, such as 127.0.0.1:4777",
  });
}

export function createHttpApp(svc: Service, opts: HttpAppOptions = {}): H3 {
  const app = new H3({
    silent: true,
    onError: (err, event) => {
      const cause = fromEnvironment((err as { cause?: unknown }).cause ?? err);
      if (isCardsError(cause)) return toResponse(errorResponse(cause));
      const status = (err as { status?: number }).status ?? 500;
      if (status >= 500) {
        logInternalError(cause, `${event.req.method} ${event.url.pathname}`);
        return toResponse({ status: 500, body: toEnvelope(cause) });
      }
      const code = status === 404 ? "not_found" : status === 405 ? "method_not_allowed" : status === 413 ? "payload_too_large" : "bad_request";
      const message = (err as Error).message;
      return toResponse(errorResponse(new CardsError(code, !message || message === "Bad Request" ? "malformed request (URL, headers or body)" : message)));
    },
  });

  const loopbackOnly = opts.loopbackOnly === true;
  const publicOrigin = opts.publicOrigin === undefined ? undefined : parsePublicUrl(opts.publicOrigin);
  app.use((event: H3Event) => {
    const refused = crossSiteRefusal(event.req, event.url, loopbackOnly, publicOrigin);
    if (refused) return toResponse(errorResponse(refused));
  });

  app.get("/v1/events/stream", (event: H3Event) => eventStream(svc, event.req));
  // the stream is not in the route table: another method there is 405, as on the other paths
  // (HEAD too: a HEAD of an endless stream would answer nothing useful)
  app.all("/v1/events/stream", (event: H3Event) =>
    toResponse(errorResponse(new CardsError("method_not_allowed", `${event.req.method} is not allowed on /events/stream`, { valid_options: ["GET"] }))));

  // not async: a read whose route answers at once is answered without a promise
  app.all("/v1/**", (event: H3Event) => {
    const url = event.url;
    const method = event.req.method;
    if (method === "HEAD") {
      // HEAD is GET without the body (HTTP): same status and headers
      const res = dispatch(svc, { method: "GET", path: url.pathname.slice(3) || "/", query: queryParams(url.search, url.pathname.slice(3) || "/"), headers: new ApiHeaders(event.req.headers) });
      const asHead = (r: ApiResponse): Response => {
        const full = toResponse(r);
        // the GET's body is never read: cancel it, or a streamed artifact keeps its file open
        full.body?.cancel().catch(() => {});
        const headers = new Headers(full.headers);
        // the length the GET would send (a streamed artifact's route sets its own)
        if (!r.raw && !headers.has("content-length")) headers.set("content-length", String(new TextEncoder().encode(JSON.stringify(r.body)).byteLength));
        const head = new Response(null, { status: full.status, headers });
        const message = answerMessages.get(full);
        if (message !== undefined) answerMessages.set(head, message);
        return head;
      };
      return res instanceof Promise ? res.then(asHead) : asHead(res);
    }
    const headers: ApiHeaderValues = new ApiHeaders(event.req.headers);
    const path = url.pathname.slice(3) || "/";
    const query: Record<string, string> = url.search ? queryParams(url.search, path) : {};
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
      const stream = event.req.body ? streamedBody(event.req.body) : new Uint8Array(0);
      return toResponse(await dispatch(svc, { method, path, query, headers, stream }));
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

  // h3 builds the request's URL from Host before any handler runs: a port past 65535 threw
  // there and Bun answered with its 500 page (stack, source and the workspace path)
  const routed = app.fetch;
  const trouble = opts.trouble?.seen;
  const access = opts.access;
  app.fetch = (req: Request) => {
    const started = access ? performance.now() : 0;
    const bad = malformedHost(req.headers.get("host"));
    const res = bad ? toResponse(errorResponse(bad)) : routed(req);
    if (!trouble && !access) return res;
    const answered = (r: Response): Response => {
      if (access) access(accessLine(req, r, performance.now() - started));
      return trouble ? trouble(req, r) : r;
    };
    return res instanceof Promise ? res.then(answered) : answered(res as Response);
  };
  return app;
}

/**
 * One access log line: `METHOD PATH?QUERY STATUS MS ms actor`, the actor as sent
 * (X-Service-Actor; "-" for none) with control characters escaped, so a line stays one
 * line. An event stream is logged when it opens.
 */
export function accessLine(req: Request, res: Response, ms: number): string {
  let target: string;
  // a Host that is not one host and port makes no URL (answered 400 above): its path as sent
  try { const u = new URL(req.url); target = u.pathname + u.search; } catch { target = req.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, "") || "/"; }
  // the actor as the service reads it (UTF-8), so the line names who the card says acted
  const actor = utf8Header(req.headers.get("x-service-actor") ?? undefined);
  return `${req.method} ${escapeControls(target)} ${res.status} ${ms.toFixed(1)} ms ${actor ? escapeControls(actor) : "-"}`;
}

/** The request headers the route table reads, each read from the request when asked for. */
class ApiHeaders implements ApiHeaderValues {
  constructor(private readonly h: Headers) {}
  get "x-service-actor"(): string | undefined { return actorHeader(this.h); }
  get "idempotency-key"(): string | undefined { return this.h.get("idempotency-key") ?? undefined; }
  get "content-type"(): string | undefined { return this.h.get("content-type") ?? undefined; }
}

export function toResponse(res: ApiResponse): Response {
  if (res.raw) return new Response(res.raw, { status: res.status, headers: res.headers });
  // nosniff: a browser never reads a JSON body (card text) as HTML or script
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", "x-content-type-options": "nosniff", ...res.headers };
  // a 405 names the methods the path takes (HTTP), as its valid_options do
  const allowed = res.status === 405 ? (res.body as { valid_options?: unknown[] } | undefined)?.valid_options : undefined;
  if (allowed) headers.allow = allowed.join(", ");
  const out = new Response(JSON.stringify(res.body), { status: res.status, headers });
  if (res.status >= 500) {
    const message = (res.body as { message?: unknown } | undefined)?.message;
    if (typeof message === "string") answerMessages.set(out, message);
  }
  return out;
}

/** The error message of each 5xx answer built here, for the server's log (serverTrouble) without reading the body again. */
const answerMessages = new WeakMap<Response, string>();


/** How often one kind of 503 is logged again while it goes on. */
const TROUBLE_EVERY_MS = 60_000;

/** The 503 log of a server (serverTrouble). */
export interface ServerTrouble {
  /** passes `res` through, noting it when it is a 503 */
  seen(req: Request, res: Response): Response;
  /** tells the counts not told yet (a server stopping) */
  flush(): void;
}

/**
 * A server that cannot serve (503: the disk full, the database damaged or replaced, too
 * many files or streams open) says so in its log, not only to the callers: the first
 * answer of each kind at once; the ones after it within `everyMs` are counted, and told
 * at the end of that time in one line (the latest of them, with the count), so trouble
 * that goes on is one line per `everyMs` and none goes untold. A kind is its message
 * without ids, numbers and paths.
 */
export function serverTrouble(log: (msg: string) => void, everyMs = TROUBLE_EVERY_MS): ServerTrouble {
  const kinds = new Map<string, { at: number; more: number; latest: string; timer?: ReturnType<typeof setTimeout> }>();
  const tell = (kind: string): void => {
    const k = kinds.get(kind)!;
    k.timer = undefined;
    // the monotonic clock: a wall clock stepped back held the next line back as long
    const now = performance.now();
    log(`${k.latest} (the latest of ${k.more} like it in the last ${Math.max(1, Math.round((now - k.at) / 1000))} s)`);
    k.at = now;
    k.more = 0;
  };
  const note = (req: Request, message: string): void => {
    const kind = message.replace(/\/\S+|card_[0-9a-f]+|\d+/g, "#");
    let path = req.url;
    try { path = new URL(req.url).pathname; } catch { /* as sent */ }
    const line = `503 to ${req.method} ${escapeControls(path)}: ${message}`;
    const now = performance.now();
    const k = kinds.get(kind);
    // its count's timer is late: told first, and this one counts toward the next
    if (k?.timer && now - k.at >= everyMs) { clearTimeout(k.timer); tell(kind); }
    if (!k || now - k.at >= everyMs) {
      // kinds whose window is over and nothing left to tell are forgotten
      if (!k && kinds.size >= 64) for (const [other, o] of kinds) if (!o.timer && now - o.at >= everyMs) kinds.delete(other);
      kinds.set(kind, { at: now, more: 0, latest: line });
      log(line);
      return;
    }
    k.more++;
    k.latest = line;
    if (!k.timer) {
      k.timer = setTimeout(() => tell(kind), k.at + everyMs - now);
      // a server stopping does not wait for it
      (k.timer as { unref?: () => void }).unref?.();
    }
  };
  const seen = (req: Request, res: Response): Response => {
    if (res.status !== 503) return res;
    // built here (toResponse): its message is known, and noted before the answer leaves
    const known = answerMessages.get(res);
    if (known !== undefined) {
      note(req, known);
      return res;
    }
    res.clone().json().then(
      (body: { message?: unknown }) => note(req, typeof body?.message === "string" ? body.message : "unavailable"),
      () => note(req, "unavailable"),
    );
    return res;
  };
  const flush = (): void => {
    for (const [kind, k] of kinds) {
      if (!k.timer) continue;
      clearTimeout(k.timer);
      tell(kind);
    }
  };
  return { seen, flush };
}
