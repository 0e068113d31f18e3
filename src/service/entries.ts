/**
 * Repeating-field entries: append, update (keys merged), remove. Each entry carries a
 * stable server `entry_id`; each write bumps the version by one. `version` is required and
 * must match, as for every card write that DECISIONS.md gives a version (409 when it changed).
 */
import { CardsError, notFound } from "../domain/errors.ts";
import { newEntryId } from "../domain/ids.ts";
import { isEntryList, localArtifactRefs, validateEntry } from "../domain/fields.ts";
import type { Card, CardType } from "../domain/types.ts";
import { assertArtifactsStored, assertCardRefs, commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { EntryBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

type Entry = Record<string, unknown> & { entry_id: string };

export async function appendEntry(svc: Service, id: string, field: string, input: unknown, ctx: OpContext): Promise<{ entry_id: string; card: Card }> {
  const body = parseShape(EntryBody, input, "append entry");
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, body.version);
    const type = svc.cardType(cur.type_id);
    const { entry, refs } = validateEntry(type, field, body.entry, "append", undefined, opts(svc, ctx));
    assertEntryArtifactsStored(svc, type, field, entry);
    assertCardRefs(w.tx, refs.cards);
    const stored: Entry = { entry_id: newEntryId(), ...entry };
    const list = [...entries(cur, field), stored];
    const card = commitUpdate(w, cur, { ...cur, fields: { ...cur.fields, [field]: list } }, [
      { type: "item_appended", diff: { field, entry_id: stored.entry_id, entry: stored } },
    ]);
    return { entry_id: stored.entry_id, card: withParts(w.tx, card) };
  });
}

export async function updateEntry(svc: Service, id: string, field: string, entryId: string, input: unknown, ctx: OpContext): Promise<Card> {
  const body = parseShape(EntryBody, input, "update entry");
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, body.version);
    const type = svc.cardType(cur.type_id);
    // a field that is not repeating is refused by validateEntry, naming the field
    const list = type.fields.some((f) => f.id === field && f.type === "repeating") ? entries(cur, field) : [];
    const i = list.findIndex((e) => e.entry_id === entryId);
    const before = list[i];
    // validate the field first so a wrong field name says so, then the entry id
    const { entry, refs } = validateEntry(type, field, body.entry, "update", before ?? {}, opts(svc, ctx));
    if (!before) throw notFound("entry", entryId, list.map((e) => e.entry_id));
    assertEntryArtifactsStored(svc, type, field, body.entry as Record<string, unknown>, before);
    assertCardRefs(w.tx, refs.cards);
    const after: Entry = { entry_id: entryId, ...entry };
    if (JSON.stringify(after) === JSON.stringify(before)) return withParts(w.tx, cur);
    const next = list.slice();
    next[i] = after;
    const card = commitUpdate(w, cur, { ...cur, fields: { ...cur.fields, [field]: next } }, [
      { type: "item_updated", diff: { field, entry_id: entryId, before, after } },
    ]);
    return withParts(w.tx, card);
  });
}

export async function removeEntry(svc: Service, id: string, field: string, entryId: string, version: number | undefined, ctx: OpContext): Promise<Card> {
  if (version === undefined) {
    throw new CardsError("validation_failed", "version is required", {
      field: "version", hint: "pass the version of the card you read: ?version=N (CLI: --version N; 409 when the card changed since)",
    });
  }
  return svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, version);
    const type = svc.cardType(cur.type_id);
    const def = type.fields.find((f) => f.id === field);
    if (!def || def.type !== "repeating") {
      throw new CardsError("validation_failed", `${field} is not a repeating field of ${type.id}`, {
        field, value: field, valid_options: type.fields.filter((f) => f.type === "repeating").map((f) => f.id),
      });
    }
    const list = entries(cur, field);
    const removed = list.find((e) => e.entry_id === entryId);
    if (!removed) throw notFound("entry", entryId, list.map((e) => e.entry_id));
    const rest = list.filter((e) => e.entry_id !== entryId);
    const fields = { ...cur.fields };
    if (rest.length) fields[field] = rest;
    else delete fields[field];
    if (def.required && rest.length === 0) {
      throw new CardsError("validation_failed", `${field} is required: its last entry cannot be removed`, { field });
    }
    const card = commitUpdate(w, cur, { ...cur, fields }, [{ type: "item_removed", diff: { field, entry_id: entryId, entry: removed } }]);
    return withParts(w.tx, card);
  });
}

/**
 * The entries a card holds in `field`. A value stored before the field became repeating
 * (a reload changed its type) is refused, never overwritten: appending to it would drop it.
 */
function entries(card: Card, field: string): Entry[] {
  const v = card.fields[field];
  if (v === undefined) return [];
  if (isEntryList(v)) return v;
  throw new CardsError("validation_failed", `${field} holds a ${Array.isArray(v) ? "list" : typeof v} stored before it became a repeating field, not a list of entries`, {
    field, hint: `clear it first with PATCH {"fields": {"${field}": null}} (the update_${card.type_id} tool: the same fields; the card's events keep the old value), then add entries`,
  });
}

function opts(svc: Service, ctx: OpContext) {
  return { settings: svc.defs.workspace.settings, tagSet: svc.defs.workspace.tag_set, actor: ctx.actor };
}

/**
 * An entry's local artifact uris must name stored bytes (as a card's fields: cards.ts),
 * checked inside the write's transaction; on an update, a value sent back unchanged is not
 * checked again.
 */
function assertEntryArtifactsStored(svc: Service, type: CardType, field: string, entry: Record<string, unknown>, stored?: Entry): void {
  const def = type.fields.find((f) => f.id === field);
  if (def?.type !== "repeating" || !def.item_fields) return;
  const refs = localArtifactRefs(def.item_fields, entry, `${field}.`)
    .filter((r) => (stored?.[r.field.slice(field.length + 1)] as { uri?: unknown } | undefined)?.uri !== r.uri);
  assertArtifactsStored(svc, refs);
}
