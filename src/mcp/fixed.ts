/**
 * The fixed tools of SPEC "Tool server (stdio)", each a thin call into the service layer
 * with the session's actor. No tool takes an actor; there is no streaming, no user
 * registration, no idempotency forwarding and no general dry run.
 */
import { Buffer } from "node:buffer";
import { CardsError } from "../domain/errors.ts";
import { briefPage } from "../domain/card.ts";
import { storesBytes } from "../domain/fields.ts";
import type { Definitions } from "../domain/types.ts";
import { agentLoopColumns, agentLoopScope } from "../domain/transitions.ts";
import {
  addComment, addLink, appendEntry, cardHistory, claimCard, describeWorkspace, editComment, getCard,
  listBreaches, listCards, listEvents, releaseCard, removeEntry, removeLink, takeNext, updateEntry,
  upgradeSchema, attachArtifact, readArtifact, type OpContext, type Service,
} from "../service/index.ts";
import { anyObj, bool, closed, int, obj, str, type JsonSchema, type ToolSpec } from "./schemas.ts";

export type Args = Record<string, any>;

/** One call's context: the service and the session's actor (a fresh object per call). */
export interface ToolContext extends OpContext {
  svc: Service;
}

/** A call's context before the actor is known to be set: read-only tools run without one. */
export interface CallContext extends Omit<ToolContext, "actor"> {
  actor: string | undefined;
}

export interface Tool {
  spec: ToolSpec;
  /** without a session actor only read-only tools run, with `actor` "" (the registry refuses the rest) */
  run(args: Args, c: ToolContext): unknown;
}

/** Query-string parameters for the list-style service functions (they take strings). */
function params(args: Args, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (args[k] !== undefined && args[k] !== null) out[k] = String(args[k]);
  return out;
}

/** `type.field: item*, item` lines for every field of `kind`, so agents need not look them up. */
function fieldsOfKind(defs: Definitions, kind: "repeating" | "artifact"): string {
  const parts: string[] = [];
  for (const t of defs.cardTypes.values()) {
    for (const f of t.fields) {
      // a field that holds only URIs stores no bytes: attach_artifact refuses it
      if (f.type !== kind || (kind === "artifact" && !storesBytes(f))) continue;
      const items = kind === "repeating" ? ` (${(f.item_fields ?? []).map((i) => i.id + (i.required ? "*" : "")).join(", ")})` : "";
      parts.push(`${t.id}.${f.id}${items}`);
    }
  }
  return parts.join("; ");
}

const id = (): JsonSchema => str();
const version = (d = "the version you read"): JsonSchema => int(d);

/** Every fixed tool, with descriptions that name the live repeating and artifact fields. */
export function fixedTools(defs: Definitions): Tool[] {
  const repeating = fieldsOfKind(defs, "repeating");
  const artifacts = fieldsOfKind(defs, "artifact");
  const entryField = str(repeating ? `repeating field: ${repeating}` : "repeating field id");
  const entry = anyObj("keys of the field's item_fields (* required)");
  const filter = anyObj('filter object, e.g. {"blocked":false,"fields.priority":{"$in":["high","urgent"]}}');
  const linkTypes = defs.workspace.link_types.map((l) => l.id);
  // the queue and working columns of this workspace (a workspace may call them ready, wip, ...)
  const scope = agentLoopScope(defs.workspace, defs.boards, defs.cardTypes);
  const loop = agentLoopColumns(defs.workspace, scope.board, scope.type);
  const tool = (name: string, description: string, properties: Record<string, JsonSchema>, required: string[], run: Tool["run"]): Tool =>
    ({ spec: { name, description, inputSchema: closed(obj(properties, required)) }, run });

  /** tools that change nothing */
  const READ_ONLY = new Set(["workspace", "get_card", "list_cards", "search_cards", "get_artifact", "history", "breaches", "events"]);
  const tools = [
    tool("workspace", "Columns, card types with fields, boards with transitions, link types, users. Call first.", {}, [],
      (_a, c) => describeWorkspace(c.svc)),
    tool("get_card", "One card with links and comments.", { card_id: id() }, ["card_id"],
      (a, c) => getCard(c.svc, a.card_id)),
    tool("list_cards", "List cards, most recently updated first.", {
      board_id: str(), type_id: str("one or comma-separated"), status: str("one or comma-separated"),
      owner: str('"me" is you'), q: str("full-text search"), blocked: bool(), limit: int("default 50, max 200"), cursor: str("next_cursor of the last page"), filter,
      brief: bool("id, type_id, title, status, owner (when set), tags, version, updated_at only (no fields)"),
    }, [], async (a, c) => {
      const page = await listCards(c.svc, params(a, ["board_id", "type_id", "status", "owner", "q", "blocked", "limit", "cursor"]), c.actor || undefined, a.filter === undefined ? {} : { filter: a.filter });
      return a.brief === true ? briefPage(page) : page;
    }),
    tool("search_cards", "Full-text search over titles and fields; also matches a card id or short id.", { q: { ...str(), minLength: 1 }, limit: int(), cursor: str("next_cursor of the last page (same q)") }, ["q"],
      (a, c) => {
        // an empty q lists every card: that is list_cards, not a search
        if (typeof a.q === "string" && a.q.trim() === "") throw new CardsError("validation_failed", "q is empty: give the words to search for", { field: "q", hint: "list_cards lists without searching" });
        // the page answers next_cursor: the next page is asked here too (it was refused)
        return listCards(c.svc, params(a, ["q", "limit", "cursor"]), c.actor || undefined);
      }),
    tool("claim", "Become the owner of a card (compare-and-set on version); optionally move it.", { card_id: id(), version: version(), status: str() }, ["card_id", "version"],
      (a, c) => claimCard(c.svc, a.card_id, pick(a, ["version", "status"]), c)),
    tool("release", "Give up ownership; optionally move the card.", { card_id: id(), version: version(), status: str(), force: bool("release a card another actor owns; also skips the transition check") }, ["card_id"],
      (a, c) => releaseCard(c.svc, a.card_id, pick(a, ["version", "status", "force"]), c)),
    tool("take_next", `Atomically claim the oldest unowned card in scope; {"card":null} when none. Ready work: filter {"blocked":false,"status":"${loop.ready}"}, status "${loop.doing}".`, {
      type_id: str(), board_id: str(), assign_to: str("owner (default: you)"), status: str("move it here as it is claimed: only cards the board lets move there are candidates"), filter,
    }, [], (a, c) => takeNext(c.svc, pick(a, ["type_id", "board_id", "assign_to", "status", "filter"]), c)),
    tool("append_entry", "Append an entry to a repeating field (e.g. evidence). Returns entry_id and the card.", {
      card_id: id(), field: entryField, version: version(), entry,
    }, ["card_id", "field", "version", "entry"], (a, c) => appendEntry(c.svc, a.card_id, a.field, pick(a, ["version", "entry"]), c)),
    tool("update_entry", "Merge keys into a repeating entry.", {
      card_id: id(), field: str(), entry_id: str(), version: version(), entry: anyObj(),
    }, ["card_id", "field", "entry_id", "version", "entry"], (a, c) => updateEntry(c.svc, a.card_id, a.field, a.entry_id, pick(a, ["version", "entry"]), c)),
    tool("remove_entry", "Remove a repeating entry.", { card_id: id(), field: str(), entry_id: str(), version: version() }, ["card_id", "field", "entry_id", "version"],
      (a, c) => removeEntry(c.svc, a.card_id, a.field, a.entry_id, a.version, c)),
    tool("add_link", "Link this card to target. depends-on and blocked-by keep it blocked until the target is done.", {
      card_id: id(), type_id: str(linkTypes.join(", ")), target: str("card id"), note: str(),
    }, ["card_id", "type_id", "target"], (a, c) => addLink(c.svc, a.card_id, pick(a, ["type_id", "target", "note"]), c)),
    tool("remove_link", "Remove a link.", { card_id: id(), type_id: str(), target: str() }, ["card_id", "type_id", "target"],
      (a, c) => removeLink(c.svc, a.card_id, a.type_id, a.target, c)),
    tool("add_comment", "Comment on a card: handoff notes, questions, decisions (markdown).", { card_id: id(), body: str() }, ["card_id", "body"],
      (a, c) => addComment(c.svc, a.card_id, { body: a.body }, c)),
    tool("edit_comment", "Replace the text of a comment.", { card_id: id(), comment_id: str(), body: str() }, ["card_id", "comment_id", "body"],
      (a, c) => editComment(c.svc, a.card_id, a.comment_id, { body: a.body }, c)),
    tool("upgrade_schema", "Move a card to its type's current schema_version. Only previews unless confirm is true.", {
      card_id: id(), target_version: int("default: current"), confirm: bool(),
    }, ["card_id"], async (a, c) => {
      const input = { ...(a.target_version !== undefined ? { target_version: a.target_version } : {}), dry_run: a.confirm !== true };
      const r = await upgradeSchema(c.svc, a.card_id, input, c);
      // applied: something changed (a card already at the target version is left as it is)
      return { applied: a.confirm === true && r.report.from !== r.report.to, report: r.report, card: r.card };
    }),
    tool("attach_artifact", `Store a file in an artifact field${artifacts ? ` (${artifacts})` : ""}; returns the card.`, {
      card_id: id(), field: str(), content_base64: str(),
    }, ["card_id", "field", "content_base64"], (a, c) => attachArtifact(c.svc, a.card_id, a.field, decodeBase64(a.content_base64), undefined, c)),
    tool("get_artifact", "Read a stored artifact by uri: text, or content_base64 for binary.", { uri: str() }, ["uri"],
      async (a, c) => artifactResult(a.uri, await readArtifact(c.svc, a.uri))),
    tool("history", "A card's latest 100 events as {at, actor, type, summary}, oldest first; read it to resume work.", { card_id: id() }, ["card_id"],
      (a, c) => cardHistory(c.svc, a.card_id, {})),
    tool("breaches", "Conditions that hold now: WIP over limit, drained lanes, blocked cards, status timeouts, idle cards.", {
      board_id: str(), type: str("wip_exceeded, lane_limit, card_blocked, status_timeout or card_idle"),
    }, [], (a, c) => listBreaches(c.svc, params(a, ["board_id", "type"]))),
    tool("events", "Durable events in id order; page with since = next_cursor.", {
      types: str("comma-separated"), board_id: str(), since: str("event id"), limit: int("default 100, max 500"),
    }, [], (a, c) => listEvents(c.svc, params(a, ["types", "board_id", "since", "limit"]))),
  ];
  const ADDITIVE = new Set(["append_entry", "add_link", "add_comment"]);
  for (const t of tools) {
    const name = t.spec.name;
    t.spec.annotations = READ_ONLY.has(name) ? { readOnlyHint: true, openWorldHint: false } : ADDITIVE.has(name) ? { destructiveHint: false, openWorldHint: false } : { openWorldHint: false };
  }
  return tools;
}

function pick(a: Args, keys: readonly string[]): Args {
  const out: Args = {};
  for (const k of keys) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

function decodeBase64(text: string): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) {
    throw new CardsError("validation_failed", "content_base64 is not base64", { field: "content_base64" });
  }
  return new Uint8Array(Buffer.from(clean, "base64"));
}

const TEXTUAL = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|x-ndjson)|image\/svg\+xml)/;

function artifactResult(uri: string, a: { bytes: Uint8Array; mime: string; size: number }): Record<string, unknown> {
  const out: Record<string, unknown> = { uri, mime: a.mime, size: a.size };
  if (TEXTUAL.test(a.mime)) {
    try {
      out.text = new TextDecoder("utf-8", { fatal: true }).decode(a.bytes);
      return out;
    } catch { /* not UTF-8 after all: fall through to base64 */ }
  }
  out.content_base64 = Buffer.from(a.bytes).toString("base64");
  return out;
}
