/** The card envelope in its canonical key order (every surface prints these bytes). */
import type { Card } from "./types.ts";

export function canonicalCard(c: Card): Card {
  const out = {
    id: c.id,
    workspace_id: c.workspace_id,
    type_id: c.type_id,
    schema_version: c.schema_version,
    title: c.title,
    status: c.status,
    fields: c.fields,
  } as Card;
  if (c.owner) out.owner = c.owner;
  out.tags = c.tags;
  if (c.links) out.links = c.links;
  if (c.comments) out.comments = c.comments;
  out.version = c.version;
  out.created_at = c.created_at;
  out.updated_at = c.updated_at;
  out.status_since = c.status_since;
  out.created_by = c.created_by;
  return out;
}

/** What a brief list shows of a card: enough to pick one and write to it, without its fields. */
export interface BriefCard { id: string; type_id: string; title: string; status: string; owner?: string; tags: string[]; version: number; updated_at: string }

/**
 * A card as a brief list shows it (`cards cards list --brief`, list_cards `brief`): a page
 * of 50 cards with long fields was ~77 KB, more than an agent wants in its context.
 */
export function briefCard(c: Card): BriefCard {
  const out: BriefCard = { id: c.id, type_id: c.type_id, title: c.title, status: c.status, tags: c.tags, version: c.version, updated_at: c.updated_at };
  if (c.owner) out.owner = c.owner;
  return out;
}

/** A list page with each card made brief (next_cursor and the rest kept). */
export function briefPage<P extends { items: Card[] }>(page: P): Omit<P, "items"> & { items: BriefCard[] } {
  return { ...page, items: page.items.map(briefCard) };
}

/** ISO-8601 UTC with milliseconds; the only timestamp format the service writes. */
export const nowIso = (): string => new Date().toISOString();

/** Code-point string order (never localeCompare: its collator costs milliseconds to load). */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
