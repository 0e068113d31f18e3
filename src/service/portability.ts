/**
 * Dump and restore (SPEC Portability, DECISIONS format): JSONL with a header line, then
 * users, cards with their comments and links embedded, then the full event log in id
 * order. The dump reads one consistent snapshot and streams (memory stays flat); the
 * restore runs in one transaction, so a bad line leaves nothing half-restored.
 */
import { clearLaneStates } from "./lanes.ts";
import { temporalOnceKey } from "./monitors.ts";
import { CardsError, isCardsError } from "../domain/errors.ts";
import { canonicalCard, nowIso } from "../domain/card.ts";
import { fieldsWithStoredDates } from "../domain/dates.ts";
import { isEntryList, validateFields, validateTags, validateTitle } from "../domain/fields.ts";
import { parsedLoneSurrogate } from "../domain/json.ts";
import { CARD_ID_RE, parseEventId, USER_ID_PATTERN, USER_ID_RULE } from "../domain/ids.ts";
import { ALL_EVENT_TYPES, type Card, type Comment, type Link, type StoredEvent, type User } from "../domain/types.ts";
import { registerUsersIn } from "./workspace.ts";
import type { Service } from "./service.ts";

export const DUMP_FORMAT = "cards-dump";
export const DUMP_FORMAT_VERSION = 1;

export interface PortCounts { users: number; cards: number; events: number }

/** A restored card the loaded definitions would refuse as a new write (restore keeps it: see restoreWorkspace). */
export interface RestoreNotice { card_id: string; error: string; field?: string; message: string }
export interface RestoreResult { restored: PortCounts; notices: RestoreNotice[]; notices_total: number }
/** notices listed in a restore's answer; the rest are counted */
const NOTICES_SHOWN = 20;

/**
 * One JSONL line. JSON.stringify leaves U+2028 and U+2029 raw, and line readers that
 * follow Unicode's line breaks (readline, many editors) would split a record there:
 * they are written escaped, which is the same JSON.
 */
export function jsonLine(value: unknown): string {
  const s = JSON.stringify(value);
  return /[\u2028\u2029]/.test(s) ? s.replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029") : s;
}

/**
 * The lines of a JSONL text stream, split at "\n" only (CRLF too): readers that follow
 * Unicode's line breaks would also split at U+2028 and U+2029, which another tool's dump
 * may hold raw. Each chunk is scanned once; a read error becomes `onError(e)`.
 */
export async function* jsonlLines(chunks: AsyncIterable<string>, onError: (e: unknown) => Error = (e) => e as Error): AsyncGenerator<string> {
  let pieces: string[] = [];
  const line = (last: string): string => {
    const text = pieces.length ? pieces.join("") + last : last;
    pieces = [];
    return text.endsWith("\r") ? text.slice(0, -1) : text;
  };
  try {
    for await (const chunk of chunks) {
      let start = 0;
      for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
        yield line(chunk.slice(start, nl));
        start = nl + 1;
      }
      if (start < chunk.length) pieces.push(chunk.slice(start));
    }
  } catch (e) {
    throw onError(e);
  }
  if (pieces.length) yield line("");
}

/**
 * Writes the workspace as JSONL lines to `write` (synchronously, one line at a time). The
 * header counts the records that follow, so a restore tells a dump cut short (or a record
 * taken out) from a whole one wherever it ends.
 */
export function dumpWorkspace(svc: Service, write: (line: string) => void, progress?: (c: PortCounts) => void): PortCounts {
  const n: PortCounts = { users: 0, cards: 0, events: 0 };
  return svc.store.snapshot((r) => {
    const counts: PortCounts = { users: r.listUsers().length, cards: r.cardCount(), events: r.eventCount() };
    write(jsonLine({ record: "header", format: DUMP_FORMAT, format_version: DUMP_FORMAT_VERSION, workspace_id: svc.defs.workspace.id, dumped_at: nowIso(), counts }));
    for (const user of r.iterateUsers()) { write(jsonLine({ record: "user", user })); n.users++; }
    for (const c of r.iterateCards()) {
      const card = canonicalCard({ ...c, links: r.listLinks(c.id), comments: r.listComments(c.id) });
      write(jsonLine({ record: "card", card }));
      if (++n.cards % 5000 === 0) progress?.(n);
    }
    for (const event of r.iterateEvents()) {
      write(jsonLine({ record: "event", event }));
      if (++n.events % 20000 === 0) progress?.(n);
    }
    progress?.(n);
    return n;
  });
}

/**
 * Restores a dump into a workspace that holds no cards. Any bad line aborts the whole
 * restore. A card is checked for what the store needs (its shape, its type, its column,
 * its schema version); field values, tags and titles the loaded definitions would refuse
 * as a new write are kept, as the workspace it came from kept them (definitions may
 * narrow under existing cards), and reported as notices.
 */
export async function restoreWorkspace(svc: Service, lines: AsyncIterable<string>, progress?: (c: PortCounts) => void): Promise<RestoreResult> {
  const n: PortCounts = { users: 0, cards: 0, events: 0 };
  const notices: RestoreNotice[] = [];
  let noticesTotal = 0;
  const notice = (x: RestoreNotice): void => { if (++noticesTotal <= NOTICES_SHOWN) notices.push(x); };
  const notEmpty = (r: { cardCount(): number; lastEventId(): string | null }): CardsError | undefined => {
    const what = r.cardCount() > 0 ? "already holds cards" : r.lastEventId() !== null ? "already has an event log (its cards were deleted)" : undefined;
    return what ? new CardsError("validation_failed", `this workspace ${what}; restore needs an empty workspace`, {
      hint: "restore into a fresh directory with the definitions the cards were written under: `mkdir DIR && cp -r WS/definitions DIR/`, then `cards --dir DIR restore --in dump.jsonl` (docs/backup.md)",
    }) : undefined;
  };
  const refused = notEmpty(svc.store);
  if (refused) throw refused;
  // an empty WAL first: a restore that fails for a full disk then leaves only its rolled-
  // back frames there, which are dropped at once (behind committed ones, they filled the
  // disk for good: copying those into the database needed the space they held)
  svc.store.compactLog();
  try {
    await restoreInTransaction(svc, lines, n, notEmpty, notice, progress);
  } catch (e) {
    svc.store.compactLog();
    throw e;
  }
  progress?.(n);
  return { restored: n, notices, notices_total: noticesTotal };
}

async function restoreInTransaction(
  svc: Service, lines: AsyncIterable<string>, n: PortCounts,
  notEmpty: (r: { cardCount(): number; lastEventId(): string | null }) => CardsError | undefined,
  notice: (x: RestoreNotice) => void,
  progress?: (c: PortCounts) => void,
): Promise<void> {
  await svc.store.write(async (tx) => {
    const late = notEmpty(tx);
    if (late) throw late;
    let lineNo = 0;
    let sawHeader = false;
    let declared: PortCounts | undefined;
    let lastEvent = 0;
    const seenCards = new Set<string>();
    const seenComments = new Set<string>();
    const seenUsers = new Set<string>();
    /** cards the log deleted: an event of a card the dump lacks must name one of these */
    const deleted = new Set<string>();
    /**
     * The cards whose last change (ms) no event in the dump has reached yet: an event at or
     * after it takes the card off (cards come before events in a dump, so this shrinks as
     * the events are read). `eventsFirst` holds the newest event time of cards not read
     * yet, for a dump in another order.
     */
    const unmatched = new Map<string, number>();
    const eventsFirst = new Map<string, number>();
    for await (const raw of lines) {
      lineNo++;
      if (raw.trim() === "") continue;
      const bad = (msg: string) => new CardsError("validation_failed", `line ${lineNo}: ${msg}`, { field: `line ${lineNo}` });
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(raw);
      } catch (e) {
        throw bad(`not valid JSON (${(e as Error).message})`);
      }
      if (!rec || typeof rec !== "object" || Array.isArray(rec)) throw bad("not a JSON object");
      // SQLite would store U+FFFD in the card while the log kept the escape, which strict
      // JSON readers refuse on every read for good: refused as HTTP and --data refuse it
      const odd = parsedLoneSurrogate(raw, rec);
      if (odd !== undefined) {
        throw new CardsError("bad_request", `line ${lineNo}: ${odd} holds an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair); nothing was restored`, {
          field: `line ${lineNo}`, hint: "write the character itself in UTF-8, or both halves of its surrogate pair; text cut inside a pair by the tool that wrote the dump loses half a character",
        });
      }
      if (!sawHeader) {
        if (rec.record !== "header" || rec.format !== DUMP_FORMAT || rec.format_version !== DUMP_FORMAT_VERSION) {
          throw bad(`the first line must be a ${DUMP_FORMAT} header with format_version ${DUMP_FORMAT_VERSION}`);
        }
        // dumps written before the header counted their records have no counts: the checks below still hold for them
        if (rec.counts !== undefined) {
          const c = rec.counts as Record<string, unknown>;
          if (!isObject(c) || !(["users", "cards", "events"] as const).every((k) => Number.isSafeInteger(c[k]) && (c[k] as number) >= 0)) {
            throw bad("the header's counts must be an object of users, cards and events (whole numbers)");
          }
          declared = { users: c.users as number, cards: c.cards as number, events: c.events as number };
        }
        sawHeader = true;
        continue;
      }
      // whatever slips past the checks below and the database still refuses is this line's fault
      const store = (what: string, fn: () => void): void => {
        try {
          fn();
        } catch (e) {
          // a record the database refuses is the line's fault; a full disk or an I/O error is not
          const code = String((e as { code?: unknown })?.code ?? "");
          if (!code.startsWith("SQLITE_CONSTRAINT") && code !== "SQLITE_MISMATCH") throw e;
          throw bad(`${what} cannot be stored (${(e as Error)?.message ?? String(e)})`);
        }
      };
      switch (rec.record) {
        case "user": {
          const u = rec.user as User;
          // a user declared in workspace.json keeps the created_at written there (any date Date.parse reads)
          if (!isObject(u) || !isText(u.id) || (u.kind !== "human" && u.kind !== "agent") || typeof u.created_at !== "string" || Number.isNaN(Date.parse(u.created_at))) throw bad("a user needs id, kind (human or agent) and created_at (a date)");
          // the id rule POST /users and workspace.json share (a display name is kept as dumped:
          // workspace.json takes longer ones than POST /users)
          if (!USER_ID_PATTERN.test(u.id)) throw bad(`user ${JSON.stringify(u.id)}: ${USER_ID_RULE}`);
          if (u.display_name !== undefined && typeof u.display_name !== "string") throw bad(`user ${u.id}: display_name must be a string`);
          if (seenUsers.has(u.id)) throw bad(`duplicate user id ${u.id}`);
          seenUsers.add(u.id);
          store(`user ${u.id}`, () => tx.upsertUser(u));
          n.users++;
          break;
        }
        case "card": {
          const c = checkCard(rec.card, svc, bad);
          if (seenCards.has(c.id)) throw bad(`duplicate card id ${c.id}`);
          seenCards.add(c.id);
          if (!((eventsFirst.get(c.id) ?? -Infinity) >= Date.parse(c.updated_at))) unmatched.set(c.id, Date.parse(c.updated_at));
          const { links, comments, ...dumped } = c;
          // date values in the stored form (a dump written before it): the same instants
          const card = { ...dumped, fields: fieldsWithStoredDates(svc.defs.cardTypes.get(c.type_id)!, dumped.fields) ?? dumped.fields };
          const refused = wouldRefuse(svc, card as Card);
          if (refused) notice(refused);
          if (links !== undefined && !Array.isArray(links)) throw bad(`card ${c.id}: links must be an array`);
          if (comments !== undefined && !Array.isArray(comments)) throw bad(`card ${c.id}: comments must be an array`);
          store(`card ${c.id}`, () => tx.insertCard(canonicalCard(card as Card)));
          for (const l of links ?? []) {
            const link = checkLink(l, bad);
            store(`a link of card ${c.id}`, () => tx.addLink(c.id, link));
          }
          for (const cm of comments ?? []) {
            const comment = checkComment(cm, bad);
            if (seenComments.has(comment.id)) throw bad(`duplicate comment id ${comment.id}`);
            seenComments.add(comment.id);
            store(`comment ${comment.id}`, () => tx.addComment(c.id, comment));
          }
          if (++n.cards % 5000 === 0) progress?.(n);
          break;
        }
        case "event": {
          const e = rec.event as StoredEvent;
          const id = isObject(e) && typeof e.id === "string" ? parseEventId(e.id) : null;
          if (id === null || !(ALL_EVENT_TYPES as readonly string[]).includes(e.type) || !isText(e.actor) || !isTime(e.at) || (e.scope !== "card" && e.scope !== "board") || !isObject(e.diff)) {
            throw bad("an event needs id, type, actor, at (an ISO time), scope (card or board) and a diff object");
          }
          for (const k of ["card_id", "board_id"] as const) {
            if (e[k] !== undefined && e[k] !== null && typeof e[k] !== "string") throw bad(`event ${e.id}: ${k} must be a string`);
          }
          if (id <= lastEvent) throw bad(`event ids must ascend (${e.id} after ${String(lastEvent)})`);
          lastEvent = id;
          // by time, not by id: a clock stepped back gives a later event an earlier time
          if (typeof e.card_id === "string") {
            const at = Date.parse(e.at);
            const due = unmatched.get(e.card_id);
            if (due !== undefined) { if (at >= due) unmatched.delete(e.card_id); }
            else if (!seenCards.has(e.card_id) && !((eventsFirst.get(e.card_id) ?? -Infinity) >= at)) eventsFirst.set(e.card_id, at);
            if (e.type === "card_deleted" && !seenCards.has(e.card_id)) deleted.add(e.card_id);
          }
          store(`event ${e.id}`, () => tx.insertEventWithId(e));
          // a condition the log already holds has fired: a server on the restored workspace
          // must not fire it again (its once-key is not part of the dump)
          if ((e.type === "status_timeout" || e.type === "card_idle") && typeof e.card_id === "string") {
            const { board_id: board, since } = e.diff as { board_id?: unknown; since?: unknown };
            if (typeof board === "string" && typeof since === "string") tx.claimOnce(temporalOnceKey(e.type, board, e.card_id, since), e.at);
          }
          if (++n.events % 20000 === 0) progress?.(n);
          break;
        }
        case "header":
          throw bad("a second header");
        default:
          throw bad(`unknown record kind ${JSON.stringify(rec.record)}; expected user, card or event`);
      }
    }
    if (!sawHeader) throw new CardsError("validation_failed", "empty input: no cards-dump header", { field: "line 1" });
    assertWhole(unmatched, declared, n);
    // every card an event names is in the dump, or was deleted (its card_deleted is in the log)
    for (const id of eventsFirst.keys()) {
      if (!seenCards.has(id) && !deleted.has(id)) {
        throw new CardsError("validation_failed", `the dump's events name card ${id}, which it neither holds nor deletes: a dump cut short or edited; nothing was restored`, {
          value: id, hint: "make the dump again and restore the whole file",
        });
      }
    }

    // users declared in this workspace.json are as it says, whatever the dump held of them
    registerUsersIn(tx, svc.defs.workspace.users ?? []);
    // the cards came with their log, not through it: full-text search indexes them anew
    tx.markSearchStale();
    // the restored log is history: a server serving this workspace publishes none of it live
    // (hooks and streams would take it for new writes); replay and GET /events still read it
    if (lastEvent > 0) tx.markHistoryThrough(lastEvent);
    // what lanes signalled before (a reload in the empty workspace) says nothing of these cards
    clearLaneStates(tx);
  });
}

/**
 * A dump cut short (a killed `cards dump`, a full disk) ends at a line like any other:
 * the events come last, so it lacks the newest ones, or all of them. Every change of a
 * card is logged in its transaction at the card's `updated_at`, and the log is never
 * trimmed, so a whole dump holds an event at or after each card's last change.
 */
function assertWhole(unmatched: Map<string, number>, declared: PortCounts | undefined, read: PortCounts): void {
  if (declared) {
    for (const k of ["users", "cards", "events"] as const) {
      if (declared[k] !== read[k]) {
        throw new CardsError("validation_failed", `the dump ${read[k] < declared[k] ? "ends early" : "was edited"}: its header counts ${declared[k]} ${k}, it holds ${read[k]}; nothing was restored`, {
          field: "counts", value: read[k], hint: "make the dump again and restore the whole file (`cards dump --out F` puts F in place only once it is whole)",
        });
      }
    }
  }
  if (unmatched.size > 0 && read.events === 0) {
    // a dump written by hand (an import from another tracker) rather than one cut short
    throw new CardsError("validation_failed", `the dump holds cards but no events: each card needs an event at or after its updated_at (its card_created, at updated_at, will do); nothing was restored`, {
      hint: "a dump made by cards dump always has them; for a dump written by an import script, see docs/migrating.md",
    });
  }
  for (const [id, at] of unmatched) {
    throw new CardsError("validation_failed", `the dump ends early: card ${id} was last changed at ${new Date(at).toISOString()}, but the dump holds no event of it from then on; a dump cut short would restore as a smaller workspace, so nothing was restored`, {
      hint: "make the dump again and restore the whole file (`cards dump --out F` puts F in place only once it is whole)",
    });
  }
}

const CARD_KEYS = ["id", "type_id", "schema_version", "title", "status", "fields", "tags", "version", "created_at", "updated_at", "status_since", "created_by"];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";
/**
 * the times this service writes: ISO 8601 in UTC with milliseconds, as Date.toISOString
 * gives them, and a real instant (they order cards and filter as text: "2025-02-30",
 * "T24:00" or a missing fraction would misorder)
 */
const isTime = (v: unknown): v is string => typeof v === "string" && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v) && !Number.isNaN(Date.parse(v)) && new Date(v).toISOString() === v;

function checkCard(raw: unknown, svc: Service, bad: (m: string) => CardsError): Card {
  if (!isObject(raw)) throw bad("a card record needs a card object");
  const c = raw as unknown as Card;
  for (const k of CARD_KEYS) if ((c as unknown as Record<string, unknown>)[k] === undefined) throw bad(`card is missing ${k}`);
  if (typeof c.id !== "string" || !CARD_ID_RE.test(c.id)) throw bad(`card id ${JSON.stringify(c.id)} is not card_<16 hex>`);
  if (typeof c.type_id !== "string" || !svc.defs.cardTypes.has(c.type_id)) throw bad(`card ${c.id} has type ${JSON.stringify(c.type_id)}, which this workspace does not define`);
  if (!Number.isInteger(c.version) || c.version < 1 || !Number.isInteger(c.schema_version)) throw bad(`card ${c.id} needs integer version and schema_version`);
  // schema versions only go up: a card above its type's version could never be upgraded
  const loaded = svc.defs.cardTypes.get(c.type_id)!.schema_version;
  if (c.schema_version > loaded) throw bad(`card ${c.id} has schema_version ${c.schema_version}, above ${loaded}, the version of type ${c.type_id} here; raise the type's schema_version (with a migration) before restoring`);
  if (!isObject(c.fields) || !Array.isArray(c.tags) || !c.tags.every((t) => typeof t === "string")) throw bad(`card ${c.id} needs a fields object and a tags array of strings`);
  if (!isText(c.title)) throw bad(`card ${c.id} needs a non-empty string title`);
  if (!isText(c.status)) throw bad(`card ${c.id} needs a status`);
  // as for card types: a card in a column the workspace lacks could not be moved, and the
  // definitions would be refused at the next change (docs/decisions.md, stranded cards)
  if (!svc.defs.workspace.columns.some((col) => col.id === c.status)) {
    throw bad(`card ${c.id} is in status ${JSON.stringify(c.status)}, which this workspace has no column for; add the column to definitions/workspace.json before restoring`);
  }
  if (c.owner !== undefined && c.owner !== null && !isText(c.owner)) throw bad(`card ${c.id}: owner must be a user id or null`);
  if (!isText(c.created_by)) throw bad(`card ${c.id} needs created_by`);
  for (const k of ["created_at", "updated_at", "status_since"] as const) if (!isTime(c[k])) throw bad(`card ${c.id}: ${k} must be a UTC time with milliseconds that exists, as cards writes them (2026-01-31T12:00:00.000Z); ${JSON.stringify(c[k])} is not`);
  return { ...c, workspace_id: svc.defs.workspace.id };
}

/**
 * What the loaded definitions would say of this card as a new write (its title, tags and
 * field values, and entries without an entry_id), for a card at its type's schema
 * version (one behind is for an upgrade to check); undefined when they take it.
 */
function wouldRefuse(svc: Service, card: Card): RestoreNotice | undefined {
  const type = svc.defs.cardTypes.get(card.type_id)!;
  if (card.schema_version !== type.schema_version) return undefined;
  const { workspace } = svc.defs;
  try {
    validateTitle(card.title);
    validateTags(card.tags, workspace.settings, workspace.tag_set);
    validateFields({ type, settings: workspace.settings, tagSet: workspace.tag_set, fields: card.fields, mode: "create", makeEntryId: () => "ent_0" });
    for (const def of type.fields) {
      const v = card.fields[def.id];
      if (def.type === "repeating" && v !== undefined && !isEntryList(v)) {
        return { card_id: card.id, error: "validation_failed", field: def.id, message: `${def.id} holds entries without an entry_id: the entry endpoints will not touch them (a PATCH of ${def.id} to null clears it)` };
      }
    }
  } catch (e) {
    if (!isCardsError(e)) throw e;
    return { card_id: card.id, error: e.code, ...(typeof e.extra.field === "string" ? { field: e.extra.field } : {}), message: e.message };
  }
  return undefined;
}

/** A link's type and target are kept as dumped: a removed link type or a deleted target card is history too. */
function checkLink(l: Link, bad: (m: string) => CardsError): Link {
  if (!isObject(l) || !isText(l.type_id) || !isText(l.target) || !isText(l.created_by) || !isTime(l.created_at)) throw bad("a link needs type_id, target, created_by and created_at (an ISO time)");
  if (l.note !== undefined && l.note !== null && typeof l.note !== "string") throw bad("a link's note must be a string");
  return l;
}

function checkComment(c: Comment, bad: (m: string) => CardsError): Comment {
  if (!isObject(c) || !isText(c.id) || !isText(c.author) || typeof c.body !== "string" || !isTime(c.created_at)) throw bad("a comment needs id, author, body and created_at (an ISO time)");
  if (c.edited_at !== undefined && c.edited_at !== null && !isTime(c.edited_at)) throw bad(`comment ${c.id}: edited_at must be an ISO time`);
  return c;
}
