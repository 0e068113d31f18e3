/** Small commands that mirror one route each: workspace, boards, users, events, breaches, health, api. */
import { defineCommand } from "../define.ts";
import { callApi, callRaw, checkPath, envelopeError, type ApiCall, type CliGlobals } from "../client.ts";
import { intFlag, readBytes, readData } from "../input.ts";
import { outcome } from "../runner.ts";
import { CardsError } from "../../domain/errors.ts";
import { narrowingArgs, narrowingQuery } from "./narrowing.ts";
import { printOut } from "../write-all.ts";

const g = (data: unknown) => data as CliGlobals;

export const workspace = defineCommand({
  meta: { name: "workspace", description: "Workspace, card types, boards and schema versions (GET /workspace)" },
  subCommands: {
    reload: defineCommand({
      meta: { name: "reload", description: "Re-read the definitions on a running server (POST /workspace/reload; serve mode only)" },
      run: ({ data }) => callApi(g(data), { method: "POST", path: "/workspace/reload", body: {} }),
    }),
  },
  run: ({ data }) => callApi(g(data), { method: "GET", path: "/workspace" }),
});

export const health = defineCommand({
  meta: { name: "health", description: "Service version and workspace id (GET /health)" },
  run: ({ data }) => callApi(g(data), { method: "GET", path: "/health" }),
});

export const boards = defineCommand({
  meta: { name: "boards", description: "Boards" },
  subCommands: {
    get: defineCommand({
      meta: { name: "get", description: "One board definition (GET /boards/{id})" },
      args: { id: { type: "positional", description: "board id", required: true } },
      run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/boards/${encodeURIComponent(args.id)}` }),
    }),
    counts: defineCommand({
      meta: { name: "counts", description: "How many cards the board holds per column (GET /boards/{id}/counts)" },
      args: {
        id: { type: "positional", description: "board id", required: true },
        ...narrowingArgs,
        filter: { type: "string", description: "name of a saved filter of the board" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "GET", path: `/boards/${encodeURIComponent(args.id)}/counts`,
        query: { ...narrowingQuery(args), filter: args.filter },
      }),
    }),
    create: defineCommand({
      meta: { name: "create", description: "Write a board definition and reload (POST /boards; serve mode only)" },
      args: { data: { type: "string", description: "the board definition: JSON, @file or @- (stdin)", required: true } },
      run: ({ args, data }) => callApi(g(data), { method: "POST", path: "/boards", body: readData(args.data) }),
    }),
  },
});

export const users = defineCommand({
  meta: { name: "users", description: "The user registry" },
  subCommands: {
    add: defineCommand({
      meta: { name: "add", description: "Register a user (POST /users)" },
      args: {
        id: { type: "positional", description: "user id", required: true },
        kind: { type: "string", description: "human | agent", required: true },
        "display-name": { type: "string", description: "display name" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "POST", path: "/users",
        body: { id: args.id, kind: args.kind, ...(args["display-name"] !== undefined ? { display_name: args["display-name"] } : {}) },
      }),
    }),
  },
});

export const events = defineCommand({
  meta: { name: "events", description: "The durable event feed (GET /events)" },
  args: {
    since: { type: "string", description: "events after this id" },
    cursor: { type: "string", description: "next_cursor of the previous page (overrides --since)" },
    types: { type: "string", description: "event types, comma-separated" },
    actor: { type: "string", description: "only events by this actor (here --actor filters; the caller is CARDS_ACTOR)" },
    owner: { type: "string", description: "only events of cards this user owns now" },
    board: { type: "string", description: "only events of this board's card types" },
    limit: { type: "string", description: "page size (default 100, max 500)" },
    card: { type: "string", description: "with --follow: only events of this card" },
    follow: { type: "boolean", description: "stay and print live events as JSON Lines (one per line; condition signals too), after --since's replay of at most 500" },
    "reconnect-for": { type: "string", description: "with --follow through a server: seconds to keep reconnecting to a lost server before exiting 7 (default 60)" },
    jsonl: { type: "boolean", description: "JSON Lines: one event per line instead of {items, next_cursor} (--follow always prints them)" },
  },
  run: async ({ args, data }) => {
    if (args.follow) {
      if (args.cursor !== undefined || args.limit !== undefined) throw new CardsError("usage", "--follow takes --since, not --cursor or --limit", { hint: "the stream replays at most 500 events after --since, then stays live" });
      const { followEvents } = await import("../follow.ts");
      const reconnectFor = intFlag("reconnect-for", args["reconnect-for"]);
      if (reconnectFor !== undefined && reconnectFor < 0) throw new CardsError("usage", "--reconnect-for takes seconds, 0 or more", { field: "--reconnect-for", value: args["reconnect-for"] });
      return followEvents(g(data), { since: args.since, types: args.types, card_id: args.card, board_id: args.board, actor: args.actor, owner: args.owner }, reconnectFor);
    }
    if (args.card !== undefined) throw new CardsError("usage", "--card goes with --follow; a card's events: `cards cards events <id>`", { field: "--card" });
    if (args["reconnect-for"] !== undefined) throw new CardsError("usage", "--reconnect-for goes with --follow", { field: "--reconnect-for" });
    const page = await callApi(g(data), {
      method: "GET", path: "/events",
      query: { since: args.since, cursor: args.cursor, types: args.types, actor: args.actor, owner: args.owner, board_id: args.board, limit: args.limit },
    });
    if (!args.jsonl) return page;
    const items = (page as { items: unknown[] }).items;
    return outcome({ text: items.map((e) => JSON.stringify(e)).join("\n") || undefined });
  },
});

export const breaches = defineCommand({
  meta: { name: "breaches", description: "The conditions that hold now (GET /breaches): WIP over limit, drained lanes, blocked, timed-out and idle cards" },
  args: {
    board: { type: "string", description: "only this board" },
    type: { type: "string", description: "only this kind: wip_exceeded, lane_limit (a drained watched lane: count 0), card_blocked, status_timeout, card_idle" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: "/breaches", query: { board_id: args.board, type: args.type } }),
});

export const api = defineCommand({
  meta: { name: "api", description: "Call any route: cards api METHOD PATH [--data JSON|@file|@-] (PATH relative to /v1)" },
  args: {
    method: { type: "positional", description: "GET | POST | PATCH | DELETE", required: true },
    path: { type: "positional", description: "path relative to /v1, query string allowed", required: true },
    data: { type: "string", description: "request body: JSON, @file or @- (stdin)" },
  },
  run: async ({ args, data }) => {
    const method = args.method.toUpperCase();
    if (!["GET", "POST", "PATCH", "DELETE"].includes(method)) {
      throw new CardsError("usage", `unknown method ${args.method}`, { value: args.method, valid_options: ["GET", "POST", "PATCH", "DELETE"] });
    }
    checkPath(args.path); // before the URL below resolves `..` into another route
    const url = new URL(args.path.replace(/^\/?(v1\/)?/, "/"), "http://x");
    const path = url.pathname;
    const { queryParams } = await import("../../api/query.ts");
    const query = queryParams(url.search, path);
    if (method === "GET" && path === "/events/stream") {
      throw new CardsError("usage", "GET /events/stream is a Server-Sent Events stream, not one answer", {
        hint: "follow events with `cards events --follow` (one JSON event per line)",
      });
    }
    if (method === "GET" && args.data !== undefined) {
      throw new CardsError("usage", "GET takes no request body", {
        field: "--data", hint: `put the parameters in the query string: cards api GET '${path}?key=value'`,
      });
    }
    const { isRawRoute, answersRaw } = await import("../../api/dispatch.ts");
    const call: ApiCall = { method, path, query };
    // artifact routes carry bytes both ways: --data is sent as is, the answer printed as is
    if (isRawRoute(method, path)) call.bytes = args.data === undefined ? new Uint8Array(0) : args.data.startsWith("@") ? readBytes(args.data.slice(1)) : new TextEncoder().encode(args.data);
    else call.body = readData(args.data);
    const raw = answersRaw(method, path);
    if (raw) call.wantBytes = true;
    const res = await callRaw(g(data), call);
    if (res.status >= 400) throw envelopeError(JSON.parse(res.text));
    if (raw && res.bytes) {
      const bytes = res.bytes;
      await printOut(bytes);
      return undefined;
    }
    return outcome({ text: res.text });
  },
});
