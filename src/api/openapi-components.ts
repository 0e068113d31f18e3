/** Static OpenAPI component schemas: the envelope, cards, events and the other answers. */
import type { JsonSchema } from "../service/index.ts";

const s = (type: string, extra: JsonSchema = {}): JsonSchema => ({ type, ...extra });
const time = s("string", { format: "date-time" });
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items });
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({ type: "object", properties, ...(required.length ? { required } : {}) });

export const COMPONENTS: Record<string, JsonSchema> = {
  ErrorEnvelope: object({
    error: s("string", { description: "stable error code" }),
    message: s("string"),
    field: s("string"),
    value: {},
    valid_options: arr({}),
    hint: s("string"),
    card: ref("Card"),
    problems: arr(object({ file: s("string"), path: s("string"), line: s("integer", { description: "the line path starts on (YAML extensions file)" }), message: s("string"), valid_options: arr({}) }, ["file", "path", "message"])),
  }, ["error", "message"]),
  Link: object({ type_id: s("string"), target: s("string"), note: s("string"), created_by: s("string"), created_at: time }, ["type_id", "target", "created_by", "created_at"]),
  Comment: object({ id: s("string"), author: s("string"), body: s("string"), created_at: time, edited_at: time }, ["id", "author", "body", "created_at"]),
  Card: object({
    id: s("string", { pattern: "^card_[0-9a-f]{16}$" }), workspace_id: s("string"), type_id: s("string"), schema_version: s("integer"),
    title: s("string"), status: s("string"), fields: s("object"), owner: s("string"), tags: arr(s("string")),
    links: arr(ref("Link")), comments: arr(ref("Comment")), version: s("integer", { minimum: 1 }),
    created_at: time, updated_at: time, status_since: time, created_by: s("string"),
  }, ["id", "workspace_id", "type_id", "schema_version", "title", "status", "fields", "tags", "version", "created_at", "updated_at", "status_since", "created_by"]),
  CardPage: object({ items: arr(ref("Card")), next_cursor: { type: "string", description: "absent on the last page and with a custom sort" } }, ["items"]),
  Event: object({
    id: s("string"), type: s("string"), actor: s("string"), at: time, card_id: s("string"),
    scope: s("string", { enum: ["card", "board"] }), board_id: s("string"), diff: s("object"),
  }, ["type", "actor", "at", "scope", "diff"]),
  EventPage: object({ items: arr(ref("Event")), next_cursor: { type: "string", description: "the last item's id; absent once the feed is exhausted" } }, ["items"]),
  EventList: object({ items: arr(ref("Event")) }, ["items"]),
  History: object({ items: arr(object({ at: time, actor: s("string"), type: s("string"), summary: s("string") }, ["at", "actor", "type", "summary"])) }, ["items"]),
  User: object({ id: s("string"), display_name: s("string"), kind: s("string", { enum: ["human", "agent"] }), created_at: time }, ["id", "kind", "created_at"]),
  BoardCounts: object({
    board_id: s("string"),
    counts: { type: "object", additionalProperties: { type: "integer", minimum: 0 }, description: "every column of the board, 0 included" },
    total: { type: "integer", minimum: 0 },
  }, ["board_id", "counts", "total"]),
  Health: object({ version: s("string"), workspace_id: s("string") }, ["version", "workspace_id"]),
  Board: { ...object({ id: s("string"), name: s("string"), columns: arr(s("string")), card_type_ids: arr(s("string")) }, ["id", "name", "columns", "card_type_ids"]), additionalProperties: true },
  WorkspaceView: object({ workspace: s("object"), card_types: s("object"), boards: s("object"), current_schema_versions: s("object") }, ["workspace", "card_types", "boards", "current_schema_versions"]),
  TakeNextResult: object({ card: { oneOf: [ref("Card"), { type: "null" }] }, hint: s("string", { description: "with card null: why no card was taken although unowned cards match (none may move to status)" }) }, ["card"]),
  EntryResult: object({ entry_id: s("string"), card: ref("Card") }, ["entry_id", "card"]),
  ReloadResult: object({ fingerprint: s("string"), changed: s("boolean"), boards: arr(s("string")) }, ["fingerprint", "changed", "boards"]),
  Breaches: object({ as_of: time, items: arr({ type: "object", additionalProperties: true }), limit: s("integer"), truncated: s("boolean") }, ["as_of", "items"]),
  Empty: { type: "object", additionalProperties: false },
};
