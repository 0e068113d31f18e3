/** Per-route OpenAPI details (operation id, tag, query parameters, body and response). */
import { ALL_EVENT_TYPES } from "../domain/types.ts";
import { BREACH_KINDS, type JsonSchema } from "../service/index.ts";

/** name, description, schema (default string), required (default not) */
type Query = [string, string, JsonSchema?, boolean?];

export interface OperationDoc {
  id: string;
  tag: string;
  description?: string;
  query?: Query[];
  /** component schema name, or "bytes" for raw uploads */
  body?: string;
  bodyRequired?: boolean;
  /** component schema name, "bytes" or "sse" */
  response: string;
  status?: number;
  okDescription?: string;
  /** other success statuses this route answers, with what they mean (same body) */
  also?: Record<number, string>;
  /** takes dry_run: a dry run answers with the Dry-Run header */
  dryRun?: boolean;
  /** success response headers (writes: beyond Idempotent-Replayed and Dry-Run) */
  headers?: Record<string, string>;
  /** request body examples (valid in any workspace: they name no type, column or field) */
  examples?: Record<string, { summary: string; value: unknown }>;
}

const int = { type: "integer", minimum: 1 };
/** what parseBool reads (service/list.ts) */
const bool = { type: "string", enum: ["true", "false", "1", "0"] };
const LIST: Query[] = [
  ["board_id", "scope to a board (its default filter applies)"],
  ["type_id", "card type id(s), comma-separated"],
  ["status", "status(es), comma-separated"],
  ["owner", "owner id (`me`: the X-Service-Actor)"],
  ["tag", "cards carrying this tag"],
  ["blocked", "true: only blocked cards; false: only unblocked", bool],
  ["has_link", "cards with an outgoing link of this type"],
  ["link_target", "cards with a link to this card id; with has_link, a link of that type to it"],
  ["q", "full-text search; also matches a full or short id"],
  ["filter", "name of a saved filter of board_id (presentation.filters); `me` is the viewing actor"],
  ["sort", "created_at, updated_at, title or fields.<id>, leading - for descending; not with cursor"],
  ["include", "links,comments"],
  ["cursor", "next_cursor of the previous page"],
  ["limit", "page size, default 50; larger values are answered with 200", int],
];
/** GET /boards/{id}/counts narrows as the list does, without the page, order and status */
const COUNTS = LIST.filter(([name]) => ["type_id", "owner", "tag", "blocked", "has_link", "link_target", "q", "filter"].includes(name));
/** comma-separated event types; the durable feed never holds the definition lifecycle ones (live only) */
const types = (list: readonly string[]): JsonSchema => ({ type: "array", items: { type: "string", enum: [...list] } });
const FEED_TYPES = types(ALL_EVENT_TYPES.filter((t) => !t.startsWith("definition_")));
const EVENTS: Query[] = [
  ["actor", "events by this actor (`me`: the X-Service-Actor)"], ["owner", "events of cards this user owns now (`me`: the X-Service-Actor)"],
  ["type", "event type(s), comma-separated", FEED_TYPES], ["types", "event types, comma-separated", FEED_TYPES],
  ["board_id", "events of this board's card types"], ["since", "events after this id"],
  ["cursor", "next_cursor of the previous page (overrides since)"], ["limit", "default 100; larger values are answered with 500", int],
];

export const OPERATIONS: Record<string, OperationDoc> = {
  "GET /health": { id: "getHealth", tag: "workspace", response: "Health" },
  "GET /workspace": { id: "getWorkspace", tag: "workspace", response: "WorkspaceView" },
  "GET /boards/:board_id": { id: "getBoard", tag: "workspace", response: "Board" },
  "GET /boards/:board_id/counts": { id: "countBoardCards", tag: "workspace", query: COUNTS, response: "BoardCounts" },
  "POST /workspace/reload": { id: "reloadWorkspace", tag: "workspace", body: "Empty", bodyRequired: false, response: "ReloadResult" },
  "POST /boards": { id: "writeBoard", tag: "workspace", body: "Board", response: "Board", status: 201, okDescription: "Created", also: { 200: "Replaced the existing board's file" } },
  "POST /users": { id: "registerUser", tag: "users", body: "RegisterUserBody", response: "User", status: 201, okDescription: "Registered", also: { 200: "Already registered with the same kind" } },
  "GET /cards": { id: "listCards", tag: "cards", query: LIST, response: "CardPage" },
  "POST /cards": { id: "createCard", tag: "cards", body: "CreateCardBody", response: "Card", status: 201, okDescription: "Created", also: { 200: "dry_run: the card as it would be, nothing stored (Dry-Run: true)" }, dryRun: true },
  "GET /cards/:id": { id: "getCard", tag: "cards", response: "Card" },
  "PATCH /cards/:id": { id: "patchCard", tag: "cards", body: "PatchCardBody", response: "Card", dryRun: true,
    examples: { retitle: { summary: "change the title at the version last read", value: { version: 3, title: "Fix the login redirect" } } } },
  "DELETE /cards/:id": { id: "deleteCard", tag: "cards", query: [["version", "only delete at this version", int]], response: "Card" },
  "GET /cards/:id/events": { id: "listCardEvents", tag: "events", query: [["limit", "default 100, max 500", int], ["since", "events after this id"]], response: "EventList" },
  "GET /cards/:id/history": { id: "getCardHistory", tag: "events", query: [["limit", "default 100, max 500", int], ["since", "events after this id"]], response: "History" },
  "POST /cards/:id/upgrade-schema": { id: "upgradeSchema", tag: "cards", body: "UpgradeBody", bodyRequired: false, response: "Card", okDescription: "The upgraded card; the report is in the Upgrade-Report header", dryRun: true,
    headers: { "Upgrade-Report": "JSON {from, to, defaults_applied, fields_dropped} (non-ASCII characters as \\u escapes)" } },
  "POST /cards/:id/artifacts/:field": { id: "uploadArtifact", tag: "artifacts", body: "bytes", response: "Card", status: 201,
    description: "Stores the raw body as the artifact of `field` (artifact_policy local). A media type in Content-Type (e.g. `image/png`, `text/plain; charset=utf-8`) is recorded as the artifact's type; with none or application/octet-stream the type is sniffed from the bytes; anything else is 422 validation_failed." },
  "GET /artifacts/**:path": { id: "getArtifact", tag: "artifacts", response: "bytes",
    description: "`path` is the field's `uri` without its leading `artifacts/` and spans several segments: sha256/<2 hex>/<64 hex>, sent as they are (not as one escaped segment).",
    headers: { "Cache-Control": "public, max-age=31536000, immutable (the bytes of a path never change)", "Content-Security-Policy": "sandbox; default-src 'none': stored bytes never run as a page of this origin", "X-Content-Type-Options": "nosniff" } },
  "POST /cards/take-next": { id: "takeNext", tag: "ownership", body: "TakeNextBody", bodyRequired: false, response: "TakeNextResult", dryRun: true,
    examples: {
      ready: { summary: "the oldest unowned card that nothing blocks (docs/filters.md)", value: { filter: { blocked: false } } },
      look: { summary: "which card it would hand out, claiming nothing", value: { filter: { blocked: false }, dry_run: true } },
    } },
  "POST /cards/:id/claim": { id: "claimCard", tag: "ownership", body: "ClaimBody", response: "Card",
    examples: { claim: { summary: "claim at the version last read (a stale one is 409 with the current card)", value: { version: 3 } } } },
  "POST /cards/:id/release": { id: "releaseCard", tag: "ownership", body: "ReleaseBody", bodyRequired: false, response: "Card" },
  "POST /cards/:id/links": { id: "addLink", tag: "links", body: "LinkBody", response: "Card", status: 201 },
  "DELETE /cards/:id/links/:type_id/:target": { id: "removeLink", tag: "links", response: "Card" },
  "POST /cards/:id/comments": { id: "addComment", tag: "comments", body: "CommentBody", response: "Card", status: 201 },
  "PATCH /cards/:id/comments/:comment_id": { id: "editComment", tag: "comments", body: "CommentBody", response: "Card" },
  "POST /cards/:id/fields/:field/append": { id: "appendEntry", tag: "entries", body: "EntryBody", response: "EntryResult", status: 201 },
  "PATCH /cards/:id/fields/:field/:entry_id": { id: "updateEntry", tag: "entries", body: "EntryBody", response: "Card" },
  "DELETE /cards/:id/fields/:field/:entry_id": { id: "removeEntry", tag: "entries", query: [["version", "the version you read (409 when the card changed since)", int, true]], response: "Card" },
  "GET /events": { id: "listEvents", tag: "events", query: EVENTS, response: "EventPage" },
  "GET /events/stream": {
    id: "streamEvents", tag: "events", response: "sse",
    query: [["card_id", "one card"], ["board_id", "one board"], ["types", "event types, comma-separated", types(ALL_EVENT_TYPES)], ["actor", "one actor (`me`: the X-Service-Actor)"], ["owner", "current owner of the event's card (`me`: the X-Service-Actor)"], ["since", "replay after this id (or send Last-Event-ID)"]],
  },
  "GET /breaches": { id: "listBreaches", tag: "conditions", query: [["board_id", "one board"], ["type", "one kind", { type: "string", enum: [...BREACH_KINDS] }]], response: "Breaches" },
};
