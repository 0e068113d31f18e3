/** Row <-> resource mapping for the SQLite driver. Key order here is the wire order. */
import type { Card, Comment, Link, StoredEvent, User } from "../../domain/types.ts";
import { EVENT_ID_WIDTH } from "../../domain/ids.ts";
import { CardsError } from "../../domain/errors.ts";
import { searchPhrases, searchText } from "../../domain/search-text.ts";

type Row = Record<string, unknown>;

/**
 * Stored cards, built in canonicalCard's key order (one object per row). One function
 * maps the whole page: a one-shot CLI call that called a mapper once per row of a
 * 50-card page had JSC compile that mapper (~0.45 ms of a ~7 ms `cards list`).
 */
export function rowsToCards(rows: Row[], workspaceId: string): Card[] {
  const out: Card[] = [];
  let i = 0;
  try {
    for (; i < rows.length; i++) {
      const r = rows[i]!;
      const card = {
        id: r.id as string,
        workspace_id: workspaceId,
        type_id: r.type_id as string,
        schema_version: r.schema_version as number,
        title: r.title as string,
        status: r.status as string,
        fields: JSON.parse(r.fields as string),
      } as Card;
      if (r.owner) card.owner = r.owner as string;
      card.tags = JSON.parse(r.tags as string);
      card.version = r.version as number;
      card.created_at = r.created_at as string;
      card.updated_at = r.updated_at as string;
      card.status_since = r.status_since as string;
      card.created_by = r.created_by as string;
      out.push(card);
    }
  } catch (e) {
    throw damagedRow("card", rows[i]?.id, e);
  }
  return out;
}

/**
 * A stored row whose JSON does not parse: the database file was damaged (SQLite's own
 * checks pass when only the bytes of a value changed). `unavailable`, naming the row.
 */
function damagedRow(what: string, id: unknown, e: unknown): unknown {
  if (!(e instanceof SyntaxError)) return e;
  return new CardsError("unavailable", `stored ${what} ${String(id)} is damaged: ${e.message}`, {
    hint: "the workspace database was damaged on disk: stop the processes using it and restore from a backup or dump (docs/backup.md)",
  });
}

/** One stored card (see rowsToCards). */
export const rowToCard = (r: Row, workspaceId: string): Card => rowsToCards([r], workspaceId)[0]!;

export function cardParams(c: Card): (string | number | null)[] {
  return [
    c.id, c.type_id, c.schema_version, c.title, c.status, JSON.stringify(c.fields),
    c.owner ?? null, JSON.stringify(c.tags), c.version, c.created_at, c.updated_at, c.status_since, c.created_by,
  ];
}

export function rowToLink(r: Row): Link {
  const l: Link = { type_id: r.type_id as string, target: r.target as string } as Link;
  if (r.note != null) l.note = r.note as string;
  l.created_by = r.created_by as string;
  l.created_at = r.created_at as string;
  return l;
}

export function rowToComment(r: Row): Comment {
  const c: Comment = {
    id: r.id as string, author: r.author as string, body: r.body as string, created_at: r.created_at as string,
  };
  if (r.edited_at != null) c.edited_at = r.edited_at as string;
  return c;
}

/** Stored events in wire order; one function per page, like rowsToCards. */
export function rowsToEvents(rows: Row[]): StoredEvent[] {
  const out: StoredEvent[] = [];
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    // wire order: id, type, actor, at, card_id, scope, board_id, diff
    // formatEventId, inlined: a small function called per row gets JIT-compiled in a one-shot call
    const e: Record<string, unknown> = { id: String(r.seq).padStart(EVENT_ID_WIDTH, "0"), type: r.type, actor: r.actor, at: r.at };
    if (r.card_id != null) e.card_id = r.card_id;
    e.scope = r.scope;
    if (r.board_id != null) e.board_id = r.board_id;
    try {
      e.diff = JSON.parse(r.diff as string);
    } catch (err) {
      throw damagedRow("event", e.id, err);
    }
    out.push(e as unknown as StoredEvent);
  }
  return out;
}

/** One stored event (see rowsToEvents). */
export const rowToEvent = (r: Row): StoredEvent => rowsToEvents([r])[0]!;

export function rowToUser(r: Row): User {
  const u: User = { id: r.id as string } as User;
  if (r.display_name != null) u.display_name = r.display_name as string;
  u.kind = r.kind as User["kind"];
  u.created_at = r.created_at as string;
  return u;
}

/** The text indexed for `q`: the chosen field values, flattened (domain/search-text.ts searchText). */
export function searchBody(fields: Record<string, unknown>, only: string[] | undefined): string {
  const parts: string[] = [];
  const walk = (v: unknown): void => {
    if (v == null) return;
    if (typeof v === "string") parts.push(v);
    else if (typeof v === "number" || typeof v === "boolean") parts.push(String(v));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (typeof v === "object") for (const [k, x] of Object.entries(v)) if (k !== "entry_id") walk(x);
  };
  if (only) for (const id of only) walk(fields[id]);
  else walk(fields);
  return searchText(parts.join(" "));
}

/**
 * Turns free text into an FTS5 query: every word must match, the last as a prefix. A word
 * is a phrase of the terms the index holds for it (domain/search-text.ts searchPhrases):
 * one for a word of a spaced script, its characters in a row for a run of Chinese. Terms
 * are what the index's tokenizer keeps (search-index.ts): letters, marks, digits, private
 * use and other symbols (emoji), so `q=🚀` finds the cards that say 🚀.
 */
export function toFtsQuery(q: string): string | null {
  const phrases = searchPhrases(q);
  if (phrases.length === 0) return null;
  return phrases.map((terms, i) => `"${terms.join(" ")}"${i === phrases.length - 1 ? "*" : ""}`).join(" ");
}

/**
 * PRAGMA quick_check's rows as one finding a line: a row may hold several lines, headed
 * by "*** in database main ***" (which file it is, the caller says). ["ok"] when whole.
 */
export function checkVerdicts(rows: Record<string, unknown>[]): string[] {
  return rows.flatMap((r) => String(Object.values(r)[0]).split("\n")).filter((l) => l.trim() !== "" && !/^\*\*\* in database /.test(l));
}
