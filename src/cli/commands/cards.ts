/** `cards cards ...`: mirrors /v1/cards. */
import { defineCommand } from "citty";
import { callApi, type CliGlobals } from "../client.ts";
import { intFlag, jsonFlag, listFlag, readDataObject } from "../input.ts";

const g = (data: unknown) => data as CliGlobals;
const enc = encodeURIComponent;

const list = defineCommand({
  meta: { name: "list", description: "List cards (GET /cards)" },
  args: {
    board: { type: "string", description: "board id: scope to the board (its default filter applies)" },
    type: { type: "string", description: "card type id(s), comma-separated" },
    status: { type: "string", description: "status(es), comma-separated" },
    owner: { type: "string", description: "owner id (`me` = the actor)" },
    blocked: { type: "string", description: "true: only blocked cards; false: only unblocked" },
    "has-link": { type: "string", description: "cards with an outgoing link of this type" },
    "link-target": { type: "string", description: "cards linking to this card id" },
    q: { type: "string", description: "full-text search; also matches a full or short id" },
    filter: { type: "string", description: "name of a saved filter of --board" },
    sort: { type: "string", description: "created_at | updated_at | title | fields.<id>, leading - for descending" },
    include: { type: "string", description: "links,comments" },
    cursor: { type: "string", description: "next_cursor of the previous page" },
    limit: { type: "string", description: "page size (default 50, max 200)" },
  },
  run: ({ args, data }) => callApi(g(data), {
    method: "GET", path: "/cards",
    query: {
      board_id: args.board, type_id: args.type, status: args.status, owner: args.owner, blocked: args.blocked,
      has_link: args["has-link"], link_target: args["link-target"], q: args.q, filter: args.filter, sort: args.sort,
      include: args.include, cursor: args.cursor, limit: args.limit,
    },
  }),
});

const get = defineCommand({
  meta: { name: "get", description: "One card with links and comments (GET /cards/{id})" },
  args: { id: { type: "positional", description: "card id", required: true } },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/cards/${enc(args.id)}` }),
});

const create = defineCommand({
  meta: { name: "create", description: "Create a card (POST /cards); flags are merged over --data" },
  args: {
    type: { type: "string", description: "card type id" },
    title: { type: "string", description: "title" },
    status: { type: "string", description: "initial status (default: first allowed column)" },
    fields: { type: "string", description: "fields as a JSON object" },
    tags: { type: "string", description: "tags, comma-separated" },
    "dry-run": { type: "boolean", description: "validate and answer without storing" },
    data: { type: "string", description: "request body: JSON, @file or @- (stdin)" },
  },
  run: ({ args, data }) => {
    const body = readDataObject(args.data);
    if (args.type !== undefined) body.type_id = args.type;
    if (args.title !== undefined) body.title = args.title;
    if (args.status !== undefined) body.status = args.status;
    if (args.fields !== undefined) body.fields = jsonFlag("fields", args.fields);
    if (args.tags !== undefined) body.tags = listFlag(args.tags);
    if (args["dry-run"]) body.dry_run = true;
    return callApi(g(data), { method: "POST", path: "/cards", body });
  },
});

const patch = defineCommand({
  meta: { name: "patch", description: "Update a card (PATCH /cards/{id}); flags are merged over --data" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "the version you read (required)" },
    title: { type: "string", description: "new title" },
    status: { type: "string", description: "new status" },
    owner: { type: "string", description: "new owner (a registered user; empty string clears)" },
    fields: { type: "string", description: "fields to change as a JSON object (null removes a key)" },
    tags: { type: "string", description: "the full new tag list, comma-separated" },
    force: { type: "boolean", description: "skip the transition graph check" },
    "dry-run": { type: "boolean", description: "validate and answer without storing" },
    data: { type: "string", description: "request body: JSON, @file or @- (stdin)" },
  },
  run: ({ args, data }) => {
    const body = readDataObject(args.data);
    if (args.version !== undefined) body.version = intFlag("version", args.version);
    if (args.title !== undefined) body.title = args.title;
    if (args.status !== undefined) body.status = args.status;
    if (args.owner !== undefined) body.owner = args.owner;
    if (args.fields !== undefined) body.fields = jsonFlag("fields", args.fields);
    if (args.tags !== undefined) body.tags = listFlag(args.tags);
    if (args.force) body.force = true;
    if (args["dry-run"]) body.dry_run = true;
    return callApi(g(data), { method: "PATCH", path: `/cards/${enc(args.id)}`, body });
  },
});

const del = defineCommand({
  meta: { name: "delete", description: "Delete a card (DELETE /cards/{id})" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "only delete if the card is at this version" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "DELETE", path: `/cards/${enc(args.id)}`, query: { version: args.version } }),
});

const events = defineCommand({
  meta: { name: "events", description: "The card's events in id order (GET /cards/{id}/events)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    since: { type: "string", description: "only events after this id" },
    limit: { type: "string", description: "at most this many (default 100, max 500)" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/cards/${enc(args.id)}/events`, query: { since: args.since, limit: args.limit } }),
});

export default defineCommand({
  meta: { name: "cards", description: "Work with cards" },
  subCommands: { list, get, create, patch, delete: del, events },
});
