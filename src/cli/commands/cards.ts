/**
 * `cards cards ...`: mirrors /v1/cards. Each command is built when the runner resolves it:
 * building every definition at load cost ~0.4M instructions of each call (docs/decisions.md).
 */
import { defineCommand } from "../define.ts";
import { callApi, callRaw, envelopeError, type CliGlobals } from "../client.ts";
import { assertInput, intFlag, jsonArg, jsonFlag, mergeFieldsFlag, tagsFlag, readBytes, readData, readDataObject } from "../input.ts";
import { narrowingArgs, narrowingQuery } from "./narrowing.ts";
import type { Card } from "../../domain/types.ts";

const g = (data: unknown) => data as CliGlobals;
const enc = encodeURIComponent;

const list = () => defineCommand({
  meta: { name: "list", description: "List cards (GET /cards)" },
  args: {
    board: { type: "string", description: "board id: scope to the board (its default filter applies)" },
    status: { type: "string", description: "status(es), comma-separated" },
    ...narrowingArgs,
    filter: { type: "string", description: "name of a saved filter of --board" },
    sort: { type: "string", description: "created_at | updated_at | title | fields.<id>, leading - for descending" },
    include: { type: "string", description: "links,comments (comma-separated)" },
    cursor: { type: "string", description: "next_cursor of the previous page" },
    limit: { type: "string", description: "page size (default 50, max 200)" },
    brief: { type: "boolean", description: "each card as id, type_id, title, status, owner (when set), tags, version, updated_at (no fields)" },
  },
  run: async ({ args, data }) => {
    const page = await callApi(g(data), {
      method: "GET", path: "/cards",
      query: {
        board_id: args.board, status: args.status, ...narrowingQuery(args), filter: args.filter, sort: args.sort,
        include: args.include, cursor: args.cursor, limit: args.limit,
      },
    });
    if (!args.brief) return page;
    const { briefPage } = await import("../../domain/card.ts");
    return briefPage(page as { items: Card[] });
  },
});

const get = () => defineCommand({
  meta: { name: "get", description: "One card with links and comments (GET /cards/{id})" },
  args: { id: { type: "positional", description: "card id", required: true } },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/cards/${enc(args.id)}` }),
});

const create = () => defineCommand({
  meta: { name: "create", description: "Create a card (POST /cards); flags are merged over --data" },
  args: {
    type: { type: "string", description: "card type id" },
    title: { type: "string", description: "title" },
    status: { type: "string", description: "initial status (default: first allowed column)" },
    fields: { type: "string", description: "fields as a JSON object" },
    tags: { type: "string", description: "tags, comma-separated (or a JSON array: '[\"a,b\"]')" },
    "dry-run": { type: "boolean", description: "validate and answer without storing" },
    data: { type: "string", description: "request body: JSON, @file or @- (stdin)" },
  },
  run: ({ args, data }) => {
    const body = readDataObject(args.data);
    if (args.type !== undefined) body.type_id = args.type;
    if (args.title !== undefined) body.title = args.title;
    if (args.status !== undefined) body.status = args.status;
    mergeFieldsFlag(body, args.fields);
    if (args.tags !== undefined) body.tags = tagsFlag(args.tags);
    if (args["dry-run"]) body.dry_run = true;
    assertInput(body, args.data, "cards create");
    return callApi(g(data), { method: "POST", path: "/cards", body });
  },
});

const patch = () => defineCommand({
  meta: { name: "patch", description: "Update a card (PATCH /cards/{id}); flags are merged over --data" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "the version you read (required)" },
    title: { type: "string", description: "new title" },
    status: { type: "string", description: "new status" },
    owner: { type: "string", description: "new owner (a registered user; empty string clears)" },
    fields: { type: "string", description: "fields to change as a JSON object (null removes a key)" },
    tags: { type: "string", description: "the full new tag list, comma-separated (or a JSON array: '[\"a,b\"]')" },
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
    mergeFieldsFlag(body, args.fields);
    if (args.tags !== undefined) body.tags = tagsFlag(args.tags);
    if (args.force) body.force = true;
    if (args["dry-run"]) body.dry_run = true;
    assertInput(body, args.data, "cards patch");
    return callApi(g(data), { method: "PATCH", path: `/cards/${enc(args.id)}`, body });
  },
});

const del = () => defineCommand({
  meta: { name: "delete", description: "Delete a card (DELETE /cards/{id})" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "only delete if the card is at this version" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "DELETE", path: `/cards/${enc(args.id)}`, query: { version: args.version } }),
});

const events = () => defineCommand({
  meta: { name: "events", description: "The card's events in id order (GET /cards/{id}/events)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    since: { type: "string", description: "only events after this id" },
    limit: { type: "string", description: "at most this many (default 100, max 500)" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/cards/${enc(args.id)}/events`, query: { since: args.since, limit: args.limit } }),
});

const history = () => defineCommand({
  meta: { name: "history", description: "The card's history as readable lines (GET /cards/{id}/history)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    since: { type: "string", description: "only events after this event id (ids: cards cards events ID)" },
    limit: { type: "string", description: "at most this many (default 100, max 500; without --since the latest)" },
  },
  run: ({ args, data }) => callApi(g(data), { method: "GET", path: `/cards/${enc(args.id)}/history`, query: { since: args.since, limit: args.limit } }),
});

const takeNext = () => defineCommand({
  meta: { name: "take-next", description: "Claim the oldest unowned card in scope (POST /cards/take-next)" },
  args: {
    board: { type: "string", description: "board id (default: the workspace default board)" },
    type: { type: "string", description: "card type id (its own scope, not board-limited)" },
    status: { type: "string", description: "move the card to this status as it is claimed" },
    "assign-to": { type: "string", description: "owner to assign (default: the actor)" },
    filter: { type: "string", description: 'filter as JSON, e.g. {"blocked": false}' },
    "dry-run": { type: "boolean", description: "answer with the card that would be claimed; claim nothing" },
    data: { type: "string", description: "request body: JSON, @file or @- (stdin)" },
  },
  run: ({ args, data }) => {
    const body = readDataObject(args.data);
    if (args.board !== undefined) body.board_id = args.board;
    if (args.type !== undefined) body.type_id = args.type;
    if (args.status !== undefined) body.status = args.status;
    if (args["assign-to"] !== undefined) body.assign_to = args["assign-to"];
    if (args.filter !== undefined) body.filter = jsonFlag("filter", args.filter);
    if (args["dry-run"]) body.dry_run = true;
    return callApi(g(data), { method: "POST", path: "/cards/take-next", body });
  },
});

const claim = () => defineCommand({
  meta: { name: "claim", description: "Claim a card: compare-and-set on version (POST /cards/{id}/claim)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "the version you read (required)" },
    status: { type: "string", description: "move to this status as it is claimed" },
  },
  run: ({ args, data }) => callApi(g(data), {
    method: "POST", path: `/cards/${enc(args.id)}/claim`,
    body: { ...(args.version !== undefined ? { version: intFlag("version", args.version) } : {}), ...(args.status !== undefined ? { status: args.status } : {}) },
  }),
});

const release = () => defineCommand({
  meta: { name: "release", description: "Release a card (POST /cards/{id}/release)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    version: { type: "string", description: "only if the card is at this version" },
    status: { type: "string", description: "move to this status as it is released" },
    force: { type: "boolean", description: "release a card another actor owns; skip the transition check" },
  },
  run: ({ args, data }) => callApi(g(data), {
    method: "POST", path: `/cards/${enc(args.id)}/release`,
    body: {
      ...(args.version !== undefined ? { version: intFlag("version", args.version) } : {}),
      ...(args.status !== undefined ? { status: args.status } : {}),
      ...(args.force ? { force: true } : {}),
    },
  }),
});

const links = () => defineCommand({
  meta: { name: "links", description: "Links from a card" },
  subCommands: {
    add: () => defineCommand({
      meta: { name: "add", description: "Add a link (POST /cards/{id}/links)" },
      args: {
        id: { type: "positional", description: "source card id", required: true },
        type: { type: "positional", description: "link type id, e.g. depends-on", required: true },
        target: { type: "positional", description: "target card id", required: true },
        note: { type: "string", description: "a note on the link" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "POST", path: `/cards/${enc(args.id)}/links`,
        body: { type_id: args.type, target: args.target, ...(args.note !== undefined ? { note: args.note } : {}) },
      }),
    }),
    remove: () => defineCommand({
      meta: { name: "remove", description: "Remove a link (DELETE /cards/{id}/links/{type_id}/{target})" },
      args: {
        id: { type: "positional", description: "source card id", required: true },
        type: { type: "positional", description: "link type id", required: true },
        target: { type: "positional", description: "target card id", required: true },
      },
      run: ({ args, data }) => callApi(g(data), { method: "DELETE", path: `/cards/${enc(args.id)}/links/${enc(args.type)}/${enc(args.target)}` }),
    }),
  },
});

const comments = () => defineCommand({
  meta: { name: "comments", description: "Comments on a card" },
  subCommands: {
    add: () => defineCommand({
      meta: { name: "add", description: "Add a comment (POST /cards/{id}/comments); BODY '-' reads stdin" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        body: { type: "positional", description: "comment text (markdown), or - for stdin", required: true },
      },
      run: ({ args, data }) => callApi(g(data), { method: "POST", path: `/cards/${enc(args.id)}/comments`, body: { body: textArg(args.body) } }),
    }),
    edit: () => defineCommand({
      meta: { name: "edit", description: "Edit a comment (PATCH /cards/{id}/comments/{comment_id})" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        comment: { type: "positional", description: "comment id", required: true },
        body: { type: "positional", description: "new text, or - for stdin", required: true },
      },
      run: ({ args, data }) => callApi(g(data), { method: "PATCH", path: `/cards/${enc(args.id)}/comments/${enc(args.comment)}`, body: { body: textArg(args.body) } }),
    }),
  },
});

const entries = () => defineCommand({
  meta: { name: "entries", description: "Entries of a repeating field" },
  subCommands: {
    append: () => defineCommand({
      meta: { name: "append", description: "Append an entry (POST /cards/{id}/fields/{field}/append)" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        field: { type: "positional", description: "repeating field id", required: true },
        entry: { type: "positional", description: "the entry as a JSON object, or - for stdin", required: true },
        version: { type: "string", description: "the version you read (required)" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "POST", path: `/cards/${enc(args.id)}/fields/${enc(args.field)}/append`,
        body: { ...(args.version !== undefined ? { version: intFlag("version", args.version) } : {}), entry: jsonArg("entry", textArg(args.entry)) },
      }),
    }),
    update: () => defineCommand({
      meta: { name: "update", description: "Update an entry, keys merged (PATCH /cards/{id}/fields/{field}/{entry_id})" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        field: { type: "positional", description: "repeating field id", required: true },
        entry_id: { type: "positional", description: "entry id", required: true },
        entry: { type: "positional", description: "the changed keys as a JSON object, or - for stdin", required: true },
        version: { type: "string", description: "the version you read (required)" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "PATCH", path: `/cards/${enc(args.id)}/fields/${enc(args.field)}/${enc(args.entry_id)}`,
        body: { ...(args.version !== undefined ? { version: intFlag("version", args.version) } : {}), entry: jsonArg("entry", textArg(args.entry)) },
      }),
    }),
    remove: () => defineCommand({
      meta: { name: "remove", description: "Remove an entry (DELETE /cards/{id}/fields/{field}/{entry_id})" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        field: { type: "positional", description: "repeating field id", required: true },
        entry_id: { type: "positional", description: "entry id", required: true },
        version: { type: "string", description: "the version you read (required)" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "DELETE", path: `/cards/${enc(args.id)}/fields/${enc(args.field)}/${enc(args.entry_id)}`, query: { version: args.version },
      }),
    }),
  },
});

const upgrade = () => defineCommand({
  meta: { name: "upgrade-schema", description: "Upgrade a card to its type's loaded schema version (POST /cards/{id}/upgrade-schema)" },
  args: {
    id: { type: "positional", description: "card id", required: true },
    "target-version": { type: "string", description: "must be the loaded version (the default)" },
    "dry-run": { type: "boolean", description: "answer with the card as it would be; change nothing" },
  },
  // prints {applied, report, card}, as the upgrade_schema tool answers: the report (defaults
  // applied, fields dropped) travels in HTTP's upgrade-report header, and a dry run is
  // mostly read for it (SPEC: "the dry run reports what would be lost")
  run: async ({ args, data }) => {
    const dryRun = args["dry-run"] === true;
    const res = await callRaw(g(data), {
      method: "POST", path: `/cards/${enc(args.id)}/upgrade-schema`,
      body: {
        ...(args["target-version"] !== undefined ? { target_version: intFlag("target-version", args["target-version"]) } : {}),
        ...(dryRun ? { dry_run: true } : {}),
      },
    });
    const card = res.body !== undefined ? res.body : JSON.parse(res.text);
    if (res.status >= 400) throw envelopeError(card);
    const header = res.headers?.["upgrade-report"];
    const report = header ? (JSON.parse(header) as { from: number; to: number }) : null;
    // applied: something changed (a card already at the target version is left as it is)
    return { applied: !dryRun && report !== null && report.from !== report.to, report, card };
  },
});

const artifacts = () => defineCommand({
  meta: { name: "artifacts", description: "Artifacts of a card" },
  subCommands: {
    put: () => defineCommand({
      meta: { name: "put", description: "Upload a file into an artifact field (POST /cards/{id}/artifacts/{field}); FILE '-' reads stdin" },
      args: {
        id: { type: "positional", description: "card id", required: true },
        field: { type: "positional", description: "artifact field id", required: true },
        file: { type: "positional", description: "file to upload, or - for stdin", required: true },
        type: { type: "string", description: "content type (sniffed from the bytes when absent)" },
      },
      run: ({ args, data }) => callApi(g(data), {
        method: "POST", path: `/cards/${enc(args.id)}/artifacts/${enc(args.field)}`, bytes: readBytes(args.file), contentType: args.type,
      }),
    }),
  },
});

/** A positional text argument; `-` reads standard input. */
/** A positional's text, or stdin for `-` (also `@-`, as --data takes it). */
function textArg(v: string): string {
  return v === "-" || v === "@-" ? (readData("@-") ?? "") : v;
}

export default defineCommand({
  meta: { name: "cards", description: "Work with cards" },
  subCommands: {
    list, get, create, patch, delete: del, events, history, "take-next": takeNext, claim, release, links, comments, entries,
    "upgrade-schema": upgrade, artifacts,
  },
});
