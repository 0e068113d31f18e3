/** Static OpenAPI component schemas: the envelope, events and the other answers (cards are per type: openapi-types.ts). */
import { HTTP_STATUS } from "../domain/errors.ts";
import { ALL_EVENT_TYPES } from "../domain/types.ts";
import type { JsonSchema } from "../service/index.ts";

const s = (type: string, extra: JsonSchema = {}): JsonSchema => ({ type, ...extra });
const time = s("string", { format: "date-time" });
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items });
const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({ type: "object", properties, ...(required.length ? { required } : {}) });
/** an object whose other keys are data the document does not enumerate */
const open = (properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema =>
  ({ ...object(properties, required), additionalProperties: true, ...(description ? { description } : {}) });
const map = (values: JsonSchema, description?: string): JsonSchema => ({ type: "object", additionalProperties: values, ...(description ? { description } : {}) });

/** What every card answer holds; each card type's schema (Card<Type>) adds its typed `fields`. */
export const CARD_PROPERTIES: Record<string, JsonSchema> = {
  id: s("string", { pattern: "^card_[0-9a-f]{16}$" }), workspace_id: s("string"), type_id: s("string"), schema_version: s("integer"),
  title: s("string"), status: s("string"), fields: { type: "object", additionalProperties: true }, owner: s("string"), tags: arr(s("string")),
  links: arr(ref("Link")), comments: arr(ref("Comment")), version: s("integer", { minimum: 1 }),
  created_at: time, updated_at: time, status_since: time, created_by: s("string"),
};
export const CARD_REQUIRED = ["id", "workspace_id", "type_id", "schema_version", "title", "status", "fields", "tags", "version", "created_at", "updated_at", "status_since", "created_by"];

/** what `diff` holds, by event type (SPEC Events) */
const DIFF = "card_created, card_deleted: {card}; field_updated, status_changed, owner_changed, tags_changed, comment_edited: {before, after} (field_updated: field; comment_edited: comment_id); "
  + "item_appended, item_removed: {field, entry_id, entry}; item_updated: {field, entry_id, before, after}; link_added: {type_id, target, note}; link_removed: {type_id, target}; comment_added: {comment_id, body}; "
  + "schema_upgraded: the upgrade report; artifact_added: {field, uri, mime, size, sha256}; card_blocked, card_unblocked: {blockers}; wip_exceeded, wip_cleared: {column, count, limit}; lane_drained, lane_refilled: {column, count}; "
  + "transition_rejected: {board_id, before, after, valid_options}; status_timeout: {board_id, status, since, max}; card_idle: {board_id, since, threshold}; "
  + "definition_reloaded: {fingerprint}; definition_reload_failed: {problems}";

/** the `kind` of each /breaches item, with what else it holds (service/breaches.ts) */
const breach = (kinds: string[], properties: Record<string, JsonSchema>, description: string): JsonSchema => ({
  ...object({ kind: s("string", { enum: kinds }), board_id: s("string"), ...properties }, ["kind", "board_id", ...Object.keys(properties)]),
  description,
});

export const COMPONENTS: Record<string, JsonSchema> = {
  ErrorEnvelope: object({
    error: s("string", { enum: Object.keys(HTTP_STATUS), description: "stable error code" }),
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
  CardPage: object({ items: arr(ref("Card")), next_cursor: { type: "string", description: "absent on the last page and with a custom sort" } }, ["items"]),
  Event: object({
    id: s("string", { description: "durable events only; condition signals on the stream have none" }), type: s("string", { enum: [...ALL_EVENT_TYPES] }), actor: s("string"), at: time, card_id: s("string"),
    scope: s("string", { enum: ["card", "board"] }), board_id: s("string"),
    diff: open({
      card: open({}, [], "the card as created or as it was deleted"), field: s("string"), entry_id: s("string", { pattern: "^ent_" }), entry: open({}),
      before: {}, after: {}, comment_id: s("string"), type_id: s("string"), target: s("string"), column: s("string"), count: s("integer"),
    }, [], `what changed, by type: ${DIFF}`),
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
  WorkspaceView: object({
    workspace: open({
      id: s("string"), name: s("string"), columns: arr(object({ id: s("string"), name: s("string") }, ["id", "name"])), tag_set: arr(s("string")),
      link_types: arr(open({ id: s("string"), name: s("string"), type: s("string", { enum: ["directional", "bidirectional"] }), source_types: arr(s("string")), target_types: arr(s("string")) }, ["id", "name", "type"])),
      users: arr(ref("User")),
      settings: open({ enforce_transitions: s("boolean"), strict_fields: s("boolean"), tag_policy: s("string", { enum: ["open", "locked"] }), default_user: s("string"), default_board: s("string") }),
    }, ["id", "name", "columns", "users", "settings"], "workspace.json as loaded, with the registered users"),
    card_types: map(open({
      id: s("string"), name: s("string"), description: s("string"), schema_version: s("integer", { minimum: 1 }),
      fields: arr(open({ id: s("string"), type: s("string"), required: s("boolean"), default: {}, options: arr(s("string")), multiple: s("boolean"), item_fields: arr(open({ id: s("string"), type: s("string") }, ["id", "type"])) }, ["id", "type"])),
      allowed_columns: arr(s("string")),
    }, ["id", "name", "schema_version", "fields"]), "card type definitions by id"),
    boards: map(ref("Board"), "board definitions by id"),
    current_schema_versions: map(s("integer", { minimum: 1 }), "each card type's schema_version"),
  }, ["workspace", "card_types", "boards", "current_schema_versions"]),
  TakeNextResult: object({ card: { oneOf: [ref("Card"), { type: "null" }] }, hint: s("string", { description: "with card null: why no card was taken although unowned cards match (none may move to status)" }) }, ["card"]),
  EntryResult: object({ entry_id: s("string", { pattern: "^ent_" }), card: ref("Card") }, ["entry_id", "card"]),
  ReloadResult: object({ fingerprint: s("string"), changed: s("boolean"), boards: arr(s("string")) }, ["fingerprint", "changed", "boards"]),
  Breaches: object({
    as_of: time,
    items: arr({
      oneOf: [ref("BreachCount"), ref("BreachBlocked"), ref("BreachStatusTimeout"), ref("BreachIdle")],
      discriminator: { propertyName: "kind", mapping: { wip_exceeded: "#/components/schemas/BreachCount", lane_limit: "#/components/schemas/BreachCount", card_blocked: "#/components/schemas/BreachBlocked", status_timeout: "#/components/schemas/BreachStatusTimeout", card_idle: "#/components/schemas/BreachIdle" } },
    }),
    limit: s("integer", { description: "with truncated: the most cards each scan covers" }), truncated: s("boolean"),
  }, ["as_of", "items"]),
  BreachCount: breach(["wip_exceeded", "lane_limit"], { column: s("string"), count: s("integer", { minimum: 0 }), limit: s("integer", { minimum: 0 }) }, "a column over its WIP limit, or a watched lane that drained (lane_limit: count 0, limit 0)"),
  BreachBlocked: {
    ...object({ kind: s("string", { enum: ["card_blocked"] }), board_id: s("string", { description: "absent for a card in no board's scope (listed when no board_id is asked)" }), card_id: s("string"), blockers: arr(s("string")) }, ["kind", "card_id", "blockers"]),
    description: "a card with open blockers (the ids of the cards that block it), once per board whose scope holds it",
  },
  BreachStatusTimeout: breach(["status_timeout"], { card_id: s("string"), status: s("string"), since: time, max: s("string") }, "a card longer in its status than the board's max_time_in_status (`max`) allows"),
  BreachIdle: breach(["card_idle"], { card_id: s("string"), since: time, threshold: s("string") }, "a card not updated for the board's idle_after (`threshold`)"),
  Empty: { type: "object", additionalProperties: false },
};
