/**
 * The route table of /v1: method, path, and a handler that parses, calls one service
 * function and picks the status. HTTP mounts it; the embedded CLI dispatches it.
 */
import {
  createCard, deleteCard, describeWorkspace, getCard, health, listCards, listEvents, cardEvents,
  patchCard, registerUser,
} from "../service/index.ts";
import type { ApiResponse } from "./types.ts";
import type { RouteCall } from "./call.ts";

export interface Route {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  path: string;
  summary: string;
  /** only in `cards serve` (reload, POST /boards) */
  serveOnly?: boolean;
  handle(c: RouteCall): ApiResponse | Promise<ApiResponse>;
}

export const VERSION = "0.1.0";

const ok = (body: unknown, status = 200, headers?: Record<string, string>): ApiResponse => ({ status, body, ...(headers ? { headers } : {}) });

/** A write answer; replays and dry runs are marked with headers. */
function written(c: RouteCall, body: unknown, status: number, dryRun: boolean, replayed?: boolean): ApiResponse {
  if (dryRun) return ok(body, 200, { "dry-run": "true" });
  return ok(body, status, replayed ? { "idempotent-replayed": "true" } : undefined);
}

const isDryRun = (body: unknown): boolean => (body as { dry_run?: unknown } | undefined)?.dry_run === true;

export const ROUTES: Route[] = [
  { method: "GET", path: "/health", summary: "Service version and workspace id",
    handle: (c) => { c.onlyQuery(); return ok(health(c.svc, VERSION)); } },
  { method: "GET", path: "/workspace", summary: "Workspace, card types, boards and current schema versions",
    handle: (c) => { c.onlyQuery(); return ok(describeWorkspace(c.svc)); } },
  { method: "GET", path: "/boards/:board_id", summary: "One board definition",
    handle: (c) => { c.onlyQuery(); return ok(c.svc.board(c.params.board_id!)); } },
  { method: "POST", path: "/users", summary: "Register a user",
    handle: async (c) => {
      const ctx = c.op(201);
      const r = await registerUser(c.svc, c.json(), ctx);
      return ok(r.user, ctx.replayed || !r.created ? 200 : 201);
    } },

  { method: "GET", path: "/cards", summary: "List cards",
    handle: (c) => ok(listCards(c.svc, c.query, c.viewer())) },
  { method: "POST", path: "/cards", summary: "Create a card",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(201);
      const card = await createCard(c.svc, body, ctx);
      return written(c, card, 201, isDryRun(body), ctx.replayed);
    } },
  { method: "GET", path: "/cards/:id", summary: "One card with links and comments",
    handle: (c) => { c.onlyQuery(); return ok(getCard(c.svc, c.params.id!)); } },
  { method: "PATCH", path: "/cards/:id", summary: "Update a card (version required)",
    handle: async (c) => {
      const body = c.json();
      const ctx = c.op(200);
      const card = await patchCard(c.svc, c.params.id!, body, ctx);
      return written(c, card, 200, isDryRun(body), ctx.replayed);
    } },
  { method: "DELETE", path: "/cards/:id", summary: "Delete a card (optional version guard)",
    handle: async (c) => {
      c.onlyQuery("version");
      const ctx = c.op(200);
      const card = await deleteCard(c.svc, c.params.id!, c.intQuery("version"), ctx);
      return written(c, card, 200, false, ctx.replayed);
    } },
  { method: "GET", path: "/cards/:id/events", summary: "The card's events in id order",
    handle: (c) => ok(cardEvents(c.svc, c.params.id!, c.query)) },

  { method: "GET", path: "/events", summary: "The durable event feed",
    handle: (c) => ok(listEvents(c.svc, c.query)) },
];
