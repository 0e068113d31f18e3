/**
 * The route table of /v1: method, path, and a handler that parses, calls one service
 * function and picks the status. HTTP mounts it; the embedded CLI dispatches it.
 */
import { describeWorkspace, health } from "../service/workspace.ts";
import type { ApiResponse } from "./types.ts";
import type { RouteCall } from "./call.ts";

export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  summary: string;
  /** only in `cards serve` (reload, POST /boards) */
  serveOnly?: boolean;
  /** takes the request body as raw bytes (ApiRequest.stream), not JSON */
  rawBody?: boolean;
  /** answers with raw bytes (ApiResponse.raw), not JSON */
  rawResponse?: boolean;
  /**
   * the query parameters a write takes (DELETE's version guard); any other is refused
   * before the write runs: `POST /cards?dry_run=true` would otherwise store a card
   */
  writeQuery?: string[];
  handle(c: RouteCall): ApiResponse | Promise<ApiResponse>;
}

export const VERSION = "0.1.0";

/** Loads a module once; `loaded` holds it afterwards (an import() per request cost ~5 us in a server). */
interface Loader<T> { (): Promise<T>; loaded?: T }
type ServiceModule<L> = L extends Loader<infer T> ? T : never;

function lazy<T>(load: () => Promise<T>): Loader<T> {
  let loading: Promise<T> | undefined;
  const loader = (() => (loading ??= load().then((m) => (loader.loaded = m)))) as Loader<T>;
  return loader;
}

/**
 * Runs `fn` with a service module: at once when it is loaded, so a server answers reads
 * synchronously (no promise per request: ~10 us of a point read under load), else after
 * loading it (the first call, and every one-shot CLI call).
 */
function withModule<T, R>(loader: Loader<T>, fn: (m: T) => R): R | Promise<R> {
  return loader.loaded ? fn(loader.loaded) : loader().then(fn);
}

/**
 * Service modules load on first use, so a one-shot CLI call evaluates only the code of
 * the route it runs (perf-baselines.md §1: module loading dominates a CLI call).
 */
const load = {
  artifacts: lazy(() => import("../service/artifacts.ts")),
  breaches: lazy(() => import("../service/breaches.ts")),
  cards: lazy(() => import("../service/cards.ts")),
  comments: lazy(() => import("../service/comments.ts")),
  entries: lazy(() => import("../service/entries.ts")),
  events: lazy(() => import("../service/events.ts")),
  history: lazy(() => import("../service/history.ts")),
  links: lazy(() => import("../service/links.ts")),
  list: lazy(() => import("../service/list.ts")),
  ownership: lazy(() => import("../service/ownership.ts")),
  reads: lazy(() => import("../service/reads.ts")),
  reload: lazy(() => import("../service/reload.ts")),
  upgrade: lazy(() => import("../service/upgrade.ts")),
  users: lazy(() => import("../service/users.ts")),
};


const ok = (body: unknown, status = 200, headers?: Record<string, string>): ApiResponse => ({ status, body, ...(headers ? { headers } : {}) });

/** A write answer; replays and dry runs are marked with headers. */
function written(body: unknown, status: number, dryRun: boolean, replayed?: boolean): ApiResponse {
  if (dryRun) return ok(body, 200, { "dry-run": "true" });
  return ok(body, status, replayed ? { "idempotent-replayed": "true" } : undefined);
}

/** A plain write: run it with the operation context, answer `status` (200 on a replay of a 200 route). */
async function write(c: RouteCall, status: number, fn: (ctx: ReturnType<RouteCall["op"]>) => Promise<unknown>): Promise<ApiResponse> {
  const ctx = c.op(status);
  const body = await fn(ctx);
  return written(body, status, false, ctx.replayed);
}

const isDryRun = (body: unknown): boolean => (body as { dry_run?: unknown } | undefined)?.dry_run === true;

export const ROUTES: Route[] = [
  { method: "GET", path: "/health", summary: "Service version and workspace id",
    handle: async (c) => { c.onlyQuery(); return ok(await health(c.svc, VERSION)); } },
  { method: "GET", path: "/openapi.json", summary: "This API as OpenAPI 3.1, generated from the live workspace",
    handle: async (c) => { c.onlyQuery(); return ok((await import("./openapi.ts")).openApiDocument(c.svc)); } },
  { method: "GET", path: "/workspace", summary: "Workspace, card types, boards and current schema versions",
    handle: (c) => { c.onlyQuery(); return ok(describeWorkspace(c.svc)); } },
  { method: "GET", path: "/boards/:board_id", summary: "One board definition",
    handle: (c) => { c.onlyQuery(); return ok(c.svc.board(c.params.board_id!)); } },
  { method: "GET", path: "/boards/:board_id/counts", summary: "How many cards the board holds per column, narrowed like GET /cards",
    handle: (c) => {
      const run = (m: ServiceModule<typeof load.list>): ApiResponse | Promise<ApiResponse> => {
        const counts = m.countBoardCards(c.svc, c.params.board_id!, c.query, c.viewer());
        return counts instanceof Promise ? counts.then((x) => ok(x)) : ok(counts);
      };
      return load.list.loaded ? run(load.list.loaded) : load.list().then(run);
    } },
  { method: "POST", path: "/workspace/reload", summary: "Re-read the definitions and swap them in (serve mode only)", serveOnly: true,
    handle: async (c) => write(c, 200, async (ctx) => (await load.reload()).reloadRequested(c.svc, c.json(), ctx)) },
  { method: "POST", path: "/boards", summary: "Write a board definition and reload (serve mode only)", serveOnly: true,
    handle: async (c) => {
      const ctx = c.op(201);
      const r = await (await load.reload()).putBoard(c.svc, c.json(), ctx);
      // a replay answers as the first call did: its status, and Idempotent-Replayed
      return written(r.board, r.created ? 201 : 200, false, ctx.replayed);
    } },
  { method: "POST", path: "/users", summary: "Register a user",
    handle: async (c) => {
      const ctx = c.op(201);
      const r = await (await load.users()).registerUser(c.svc, c.json(), ctx);
      // a replay answers as the first call did: its status, and Idempotent-Replayed
      return written(r.user, r.created ? 201 : 200, false, ctx.replayed);
    } },

  { method: "GET", path: "/cards", summary: "List cards",
    handle: (c) => {
      // a search on a server answers once the index has caught up: a promise then
      const run = (m: ServiceModule<typeof load.list>): ApiResponse | Promise<ApiResponse> => {
        const page = m.listCards(c.svc, c.query, c.viewer());
        return page instanceof Promise ? page.then((p) => ok(p)) : ok(page);
      };
      return load.list.loaded ? run(load.list.loaded) : load.list().then(run);
    } },
  { method: "POST", path: "/cards", summary: "Create a card",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(201);
      const card = await (await load.cards()).createCard(c.svc, body, ctx);
      return written(card, 201, isDryRun(body), ctx.replayed);
    } },
  { method: "GET", path: "/cards/:id", summary: "One card with links and comments",
    handle: (c) => { c.onlyQuery(); return withModule(load.reads, (m) => ok(m.getCard(c.svc, c.params.id!))); } },
  { method: "PATCH", path: "/cards/:id", summary: "Update a card (version required)",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(200);
      const card = await (await load.cards()).patchCard(c.svc, c.params.id!, body, ctx);
      return written(card, 200, isDryRun(body), ctx.replayed);
    } },
  { method: "DELETE", path: "/cards/:id", summary: "Delete a card (optional version guard)", writeQuery: ["version"],
    handle: async (c) => {
      const ctx = c.op(200);
      const card = await (await load.cards()).deleteCard(c.svc, c.params.id!, c.intQuery("version"), ctx);
      return written(card, 200, false, ctx.replayed);
    } },
  { method: "GET", path: "/cards/:id/events", summary: "The card's events in id order",
    handle: (c) => withModule(load.events, (m) => ok(m.cardEvents(c.svc, c.params.id!, c.query))) },
  { method: "GET", path: "/cards/:id/history", summary: "The card's history as readable lines",
    handle: (c) => withModule(load.history, (m) => ok(m.cardHistory(c.svc, c.params.id!, c.query))) },

  { method: "POST", path: "/cards/:id/upgrade-schema", summary: "Upgrade a card to its type's loaded schema_version",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(200);
      const { card, report } = await (await load.upgrade()).upgradeSchema(c.svc, c.params.id!, body, ctx);
      const res = written(card, 200, isDryRun(body), ctx.replayed);
      // a header value is Latin-1: non-ASCII in the report (a default like "café") goes as \u escapes
      res.headers = { ...res.headers, "upgrade-report": asciiJson(report) };
      return res;
    } },
  { method: "POST", path: "/cards/:id/artifacts/:field", summary: "Upload an artifact (raw bytes)", rawBody: true,
    handle: async (c) => write(c, 201, async (ctx) => (await load.artifacts()).attachArtifact(c.svc, c.params.id!, c.params.field!, c.req.stream ?? new Uint8Array(0), c.req.headers["content-type"], ctx)) },
  { method: "GET", path: "/artifacts/**:path", summary: "Download an artifact's bytes", rawResponse: true,
    handle: async (c) => {
      const m = await load.artifacts();
      const a = await m.openArtifact(c.svc, c.params.path!);
      // stored bytes are anyone's: served from the board's origin they must never run there
      // (an HTML or SVG artifact with a script), so no sniffing and a sandbox CSP; a
      // script or stylesheet goes as text/plain, so no page of the origin can load it
      return { status: 200, body: null, raw: a.body, headers: {
        "content-type": m.servedMime(a.mime), "content-length": String(a.size), "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff", "content-security-policy": "sandbox; default-src 'none'",
      } };
    } },

  { method: "POST", path: "/cards/take-next", summary: "Claim the oldest unowned card in scope",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(200);
      return written(await (await load.ownership()).takeNext(c.svc, body, ctx), 200, isDryRun(body), ctx.replayed);
    } },
  { method: "POST", path: "/cards/:id/claim", summary: "Claim a card (compare-and-set on version)",
    handle: async (c) => write(c, 200, async (ctx) => (await load.ownership()).claimCard(c.svc, c.params.id!, c.json(), ctx)) },
  { method: "POST", path: "/cards/:id/release", summary: "Release a card",
    handle: async (c) => write(c, 200, async (ctx) => (await load.ownership()).releaseCard(c.svc, c.params.id!, c.json(), ctx)) },
  { method: "POST", path: "/cards/:id/links", summary: "Add a link from this card",
    handle: async (c) => write(c, 201, async (ctx) => (await load.links()).addLink(c.svc, c.params.id!, c.json(), ctx)) },
  { method: "DELETE", path: "/cards/:id/links/:type_id/:target", summary: "Remove a link",
    handle: async (c) => write(c, 200, async (ctx) => (await load.links()).removeLink(c.svc, c.params.id!, c.params.type_id!, c.params.target!, ctx)) },
  { method: "POST", path: "/cards/:id/comments", summary: "Add a comment",
    handle: async (c) => write(c, 201, async (ctx) => (await load.comments()).addComment(c.svc, c.params.id!, c.json(), ctx)) },
  { method: "PATCH", path: "/cards/:id/comments/:comment_id", summary: "Edit a comment",
    handle: async (c) => write(c, 200, async (ctx) => (await load.comments()).editComment(c.svc, c.params.id!, c.params.comment_id!, c.json(), ctx)) },
  { method: "POST", path: "/cards/:id/fields/:field/append", summary: "Append an entry to a repeating field",
    handle: async (c) => write(c, 201, async (ctx) => (await load.entries()).appendEntry(c.svc, c.params.id!, c.params.field!, c.json(), ctx)) },
  { method: "PATCH", path: "/cards/:id/fields/:field/:entry_id", summary: "Update an entry (keys merged)",
    handle: async (c) => write(c, 200, async (ctx) => (await load.entries()).updateEntry(c.svc, c.params.id!, c.params.field!, c.params.entry_id!, c.json(), ctx)) },
  { method: "DELETE", path: "/cards/:id/fields/:field/:entry_id", summary: "Remove an entry", writeQuery: ["version"],
    handle: async (c) => write(c, 200, async (ctx) => (await load.entries()).removeEntry(c.svc, c.params.id!, c.params.field!, c.params.entry_id!, c.intQuery("version"), ctx)) },

  { method: "GET", path: "/events", summary: "The durable event feed",
    handle: (c) => withModule(load.events, (m) => ok(m.listEvents(c.svc, c.query, c.viewer()))) },
  { method: "GET", path: "/breaches", summary: "Conditions that hold now (WIP, lanes, blocked, timeouts, idle)",
    handle: (c) => {
      // a server reads them on its read thread: a promise then
      const run = (m: ServiceModule<typeof load.breaches>): ApiResponse | Promise<ApiResponse> => {
        const found = m.listBreaches(c.svc, c.query);
        return found instanceof Promise ? found.then((b) => ok(b)) : ok(found);
      };
      return load.breaches.loaded ? run(load.breaches.loaded) : load.breaches().then(run);
    } },
];

/** JSON with every non-ASCII character escaped (\uXXXX), for a header value. */
function asciiJson(v: unknown): string {
  return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
