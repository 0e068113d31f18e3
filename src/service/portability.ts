/**
 * Dump and restore (SPEC Portability, DECISIONS format): JSONL with a header line, then
 * users, cards with their comments and links embedded, then the full event log in id
 * order. The dump reads one consistent snapshot and streams (memory stays flat); the
 * restore runs in one transaction, so a bad line leaves nothing half-restored.
 */
import { CardsError } from "../domain/errors.ts";
import { canonicalCard, nowIso } from "../domain/card.ts";
import { CARD_ID_RE, parseEventId } from "../domain/ids.ts";
import { ALL_EVENT_TYPES, type Card, type Comment, type Link, type StoredEvent, type User } from "../domain/types.ts";
import type { Service } from "./service.ts";

export const DUMP_FORMAT = "cards-dump";
export const DUMP_FORMAT_VERSION = 1;

export interface PortCounts { users: number; cards: number; events: number }

/** Writes the workspace as JSONL lines to `write` (synchronously, one line at a time). */
export function dumpWorkspace(svc: Service, write: (line: string) => void, progress?: (c: PortCounts) => void): PortCounts {
  const n: PortCounts = { users: 0, cards: 0, events: 0 };
  return svc.store.snapshot((r) => {
    write(JSON.stringify({ record: "header", format: DUMP_FORMAT, format_version: DUMP_FORMAT_VERSION, workspace_id: svc.defs.workspace.id, dumped_at: nowIso() }));
    for (const user of r.iterateUsers()) { write(JSON.stringify({ record: "user", user })); n.users++; }
    for (const c of r.iterateCards()) {
      const card = canonicalCard({ ...c, links: r.listLinks(c.id), comments: r.listComments(c.id) });
      write(JSON.stringify({ record: "card", card }));
      if (++n.cards % 5000 === 0) progress?.(n);
    }
    for (const event of r.iterateEvents()) {
      write(JSON.stringify({ record: "event", event }));
      if (++n.events % 20000 === 0) progress?.(n);
    }
    progress?.(n);
    return n;
  });
}

/** Restores a dump into a workspace that holds no cards. Any bad line aborts the whole restore. */
export async function restoreWorkspace(svc: Service, lines: AsyncIterable<string>, progress?: (c: PortCounts) => void): Promise<PortCounts> {
  const n: PortCounts = { users: 0, cards: 0, events: 0 };
  const notEmpty = (r: { cardCount(): number; lastEventId(): string | null }): CardsError | undefined => {
    const what = r.cardCount() > 0 ? "already holds cards" : r.lastEventId() !== null ? "already has an event log (its cards were deleted)" : undefined;
    return what ? new CardsError("validation_failed", `this workspace ${what}; restore needs an empty workspace`, {
      hint: "restore into a fresh directory: `cards init DIR` then `cards --dir DIR restore --in dump.jsonl`",
    }) : undefined;
  };
  const refused = notEmpty(svc.store);
  if (refused) throw refused;
  await svc.store.write(async (tx) => {
    const late = notEmpty(tx);
    if (late) throw late;
    let lineNo = 0;
    let sawHeader = false;
    let lastEvent = 0;
    const seenCards = new Set<string>();
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
      if (!sawHeader) {
        if (rec.record !== "header" || rec.format !== DUMP_FORMAT || rec.format_version !== DUMP_FORMAT_VERSION) {
          throw bad(`the first line must be a ${DUMP_FORMAT} header with format_version ${DUMP_FORMAT_VERSION}`);
        }
        sawHeader = true;
        continue;
      }
      switch (rec.record) {
        case "user": {
          const u = rec.user as User;
          if (!u || typeof u.id !== "string" || (u.kind !== "human" && u.kind !== "agent") || typeof u.created_at !== "string") throw bad("a user needs id, kind and created_at");
          tx.upsertUser(u);
          n.users++;
          break;
        }
        case "card": {
          const c = checkCard(rec.card, svc, bad);
          if (seenCards.has(c.id)) throw bad(`duplicate card id ${c.id}`);
          seenCards.add(c.id);
          const { links, comments, ...card } = c;
          tx.insertCard(canonicalCard(card as Card));
          for (const l of links ?? []) tx.addLink(c.id, checkLink(l, bad));
          for (const cm of comments ?? []) tx.addComment(c.id, checkComment(cm, bad));
          if (++n.cards % 5000 === 0) progress?.(n);
          break;
        }
        case "event": {
          const e = rec.event as StoredEvent;
          const id = e && typeof e.id === "string" ? parseEventId(e.id) : null;
          if (id === null || !(ALL_EVENT_TYPES as readonly string[]).includes(e.type) || typeof e.actor !== "string" || typeof e.at !== "string" || (e.scope !== "card" && e.scope !== "board") || typeof e.diff !== "object") {
            throw bad("an event needs id, type, actor, at, scope and diff");
          }
          if (id <= lastEvent) throw bad(`event ids must ascend (${e.id} after ${String(lastEvent)})`);
          lastEvent = id;
          tx.insertEventWithId(e);
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
    // the cards came with their log, not through it: full-text search indexes them anew
    tx.markSearchStale();
    // the restored log is history: a server serving this workspace publishes none of it live
    // (hooks and streams would take it for new writes); replay and GET /events still read it
    if (lastEvent > 0) tx.markHistoryThrough(lastEvent);
  });
  progress?.(n);
  return n;
}

const CARD_KEYS = ["id", "type_id", "schema_version", "title", "status", "fields", "tags", "version", "created_at", "updated_at", "status_since", "created_by"];

function checkCard(raw: unknown, svc: Service, bad: (m: string) => CardsError): Card {
  const c = raw as Card;
  if (!c || typeof c !== "object") throw bad("a card record needs a card object");
  for (const k of CARD_KEYS) if ((c as unknown as Record<string, unknown>)[k] === undefined) throw bad(`card is missing ${k}`);
  if (!CARD_ID_RE.test(c.id)) throw bad(`card id ${JSON.stringify(c.id)} is not card_<16 hex>`);
  if (!svc.defs.cardTypes.has(c.type_id)) throw bad(`card ${c.id} has type ${JSON.stringify(c.type_id)}, which this workspace does not define`);
  if (!Number.isInteger(c.version) || c.version < 1 || !Number.isInteger(c.schema_version)) throw bad(`card ${c.id} needs integer version and schema_version`);
  // schema versions only go up: a card above its type's version could never be upgraded
  const loaded = svc.defs.cardTypes.get(c.type_id)!.schema_version;
  if (c.schema_version > loaded) throw bad(`card ${c.id} has schema_version ${c.schema_version}, above ${loaded}, the version of type ${c.type_id} here; raise the type's schema_version (with a migration) before restoring`);
  if (typeof c.fields !== "object" || Array.isArray(c.fields) || !Array.isArray(c.tags)) throw bad(`card ${c.id} needs a fields object and a tags array`);
  return { ...c, workspace_id: svc.defs.workspace.id };
}

function checkLink(l: Link, bad: (m: string) => CardsError): Link {
  if (!l || typeof l.type_id !== "string" || typeof l.target !== "string" || typeof l.created_by !== "string" || typeof l.created_at !== "string") throw bad("a link needs type_id, target, created_by and created_at");
  return l;
}

function checkComment(c: Comment, bad: (m: string) => CardsError): Comment {
  if (!c || typeof c.id !== "string" || typeof c.author !== "string" || typeof c.body !== "string" || typeof c.created_at !== "string") throw bad("a comment needs id, author, body and created_at");
  return c;
}
