/** GET /cards/{id}/history: the card's events as `{at, actor, type, summary}` lines a person can read. */
import { leading } from "../domain/codepoints.ts";
import type { StoredEvent } from "../domain/types.ts";
import { cardEvents } from "./events.ts";
import type { ListParams } from "./list.ts";
import type { Service } from "./service.ts";

export interface HistoryItem { at: string; actor: string; type: string; summary: string }

/**
 * Without `since`, the card's last `limit` events (an agent resuming wants the latest),
 * still oldest first; with `since`, the first `limit` after it.
 */
export function cardHistory(svc: Service, id: string, p: ListParams): { items: HistoryItem[] } {
  return { items: cardEvents(svc, id, p, { newest: true }).items.map((e) => ({ at: e.at, actor: e.actor, type: e.type, summary: safeSummary(e) })) };
}

/** A line for any stored event: a restored log may hold diffs of other shapes (a hand-written dump). */
function safeSummary(e: StoredEvent): string {
  try {
    return summarize(e);
  } catch {
    return e.type.replace(/_/g, " ");
  }
}

/** A value in a summary, cut after about 60 characters (never inside a surrogate pair: see domain/codepoints.ts). */
const show = (v: unknown): string => {
  if (v === null || v === undefined) return "nothing";
  if (typeof v === "string") return v.length > 60 ? JSON.stringify(leading(v, 57) + "...") : JSON.stringify(v);
  const s = JSON.stringify(v);
  return s.length > 60 ? leading(s, 57) + "..." : s;
};

/** The keys each summary reads from the diff: an event restored from a hand-written dump may lack them. */
const NEEDS: Partial<Record<string, string[]>> = {
  field_updated: ["field"], status_changed: ["before", "after"], item_appended: ["field"], item_updated: ["entry_id", "field"],
  item_removed: ["entry_id", "field"], link_added: ["type_id", "target"], link_removed: ["type_id", "target"], comment_edited: ["comment_id"],
  schema_upgraded: ["from", "to"], artifact_added: ["field"],
};

export function summarize(e: StoredEvent): string {
  const d = (typeof e.diff === "object" && e.diff !== null ? e.diff : {}) as Record<string, any>;
  if (NEEDS[e.type]?.some((k) => d[k] === undefined || d[k] === null)) return e.type.replace(/_/g, " ");
  if (e.type === "owner_changed" && d.before == null && d.after == null) return "owner changed";
  switch (e.type) {
    case "card_created": return typeof d.card === "object" && d.card !== null
      ? `created ${d.card.type_id ?? "card"} ${show(d.card.title)}${d.card.status ? ` in ${d.card.status}` : ""}`
      : "created the card";
    case "card_deleted": return `deleted the card`;
    case "field_updated": return d.field === "title" ? `renamed to ${show(d.after)}` : `set ${d.field} from ${show(d.before)} to ${show(d.after)}`;
    case "status_changed": return `moved from ${d.before} to ${d.after}`;
    case "owner_changed": return ownerSummary(e.actor, d.before, d.after);
    case "tags_changed": return `tags ${show(d.before)} -> ${show(d.after)}`;
    case "item_appended": return `added an entry to ${d.field}`;
    case "item_updated": return `edited entry ${d.entry_id} of ${d.field}`;
    case "item_removed": return `removed entry ${d.entry_id} from ${d.field}`;
    case "link_added": return `linked ${d.type_id} ${d.target}${d.note ? ` (${d.note})` : ""}`;
    case "link_removed": return `unlinked ${d.type_id} ${d.target}`;
    case "comment_added": return `commented: ${show(d.body)}`;
    case "comment_edited": return `edited comment ${d.comment_id}`;
    case "schema_upgraded": return `upgraded schema ${d.from} -> ${d.to}${d.fields_dropped?.length ? `, dropped ${d.fields_dropped.join(", ")}` : ""}`;
    case "artifact_added": return `attached ${d.mime ?? "a file"} to ${d.field}`;
    case "card_blocked": return `blocked by ${(d.blockers ?? []).join(", ")}`;
    case "card_unblocked": return `no longer blocked`;
    default: return e.type.replace(/_/g, " ");
  }
}

/** Worded from the owner's side: the line's actor may have assigned or released someone else. */
function ownerSummary(actor: string, before: string | null, after: string | null): string {
  if (after && before) return `handed from ${before} to ${after}`;
  if (after) return after === actor ? `claimed by ${after}` : `assigned to ${after}`;
  return before === actor ? `released by ${before}` : `released ${before}'s claim`;
}
