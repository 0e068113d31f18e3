/**
 * The fields each card type had when a schema_version first came into use on this
 * workspace, so `cards check` can tell a type whose fields were changed in place (the
 * version kept): its cards keep their old values, and an upgrade has nothing to apply
 * (it goes from a version to the same one). Recorded with the set (schema-floor.ts).
 */
import type { CardType, Definitions, FieldDef } from "../domain/types.ts";
import type { StoreReads, StoreTx } from "../store/port.ts";

/** Meta key: `{type: {version: {field id: shape}}}`, the first set seen at each version. */
export const FIELDS_LOADED_KEY = "schema_fields_loaded";

type Shapes = Record<string, Record<string, Record<string, string>>>;

/** A field as far as stored values care: its type, whether it holds a list, its options, its items. */
interface Shape { type: string; options?: string[]; items?: Record<string, Shape> }

function shapeOf(f: FieldDef): Shape {
  return {
    type: f.type + (f.multiple ? "[]" : ""),
    ...(f.options ? { options: [...f.options] } : {}),
    ...(f.item_fields ? { items: Object.fromEntries(f.item_fields.map((i) => [i.id, shapeOf(i)])) } : {}),
  };
}

/** Recorded as JSON text; a record from before (`enum[]:a|b{item=...}`) is compared as that text. */
function shapesOf(t: CardType): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of t.fields) out[f.id] = JSON.stringify(shapeOf(f));
  return out;
}

/** The text format of the first records: an option holding `|` or `{` cannot be read back from it. */
function legacyShape(f: FieldDef): string {
  let s = f.type + (f.multiple ? "[]" : "");
  if (f.options) s += `:${f.options.join("|")}`;
  if (f.item_fields) s += `{${f.item_fields.map((i) => `${i.id}=${legacyShape(i)}`).join(",")}}`;
  return s;
}

/** A recorded shape as shapeOf writes it (a row edited by hand reads as the first format: its text is compared). */
function isShape(v: unknown): v is Shape {
  if (!isMap(v) || typeof v.type !== "string") return false;
  if (v.options !== undefined && !(Array.isArray(v.options) && v.options.every((o) => typeof o === "string"))) return false;
  return v.items === undefined || (isMap(v.items) && Object.values(v.items).every(isShape));
}

const readShape = (text: string): Shape | undefined => {
  if (!text.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isShape(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The recorded shapes; a row that is not what recordFields writes counts as nothing recorded (a reload never fails on it). */
function recorded(r: StoreReads): Shapes {
  try {
    const v = JSON.parse(r.getMeta(FIELDS_LOADED_KEY) ?? "{}") as unknown;
    if (!isMap(v)) return {};
    const out: Shapes = {};
    for (const [type, byVersion] of Object.entries(v)) {
      if (!isMap(byVersion)) continue;
      out[type] = {};
      for (const [version, fields] of Object.entries(byVersion)) {
        if (isMap(fields) && Object.values(fields).every((x) => typeof x === "string")) out[type][version] = fields as Record<string, string>;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/** True when a type's current version has no recorded fields yet. */
export function fieldsUnrecorded(r: StoreReads, defs: Definitions): boolean {
  const seen = recorded(r);
  return [...defs.cardTypes.values()].some((t) => seen[t.id]?.[String(t.schema_version)] === undefined);
}

/** Records the fields of each type's version not recorded yet (inside the write that brings the set into use). */
export function recordFields(tx: StoreTx, defs: Definitions): void {
  const seen = recorded(tx);
  let changed = false;
  for (const t of defs.cardTypes.values()) {
    const byVersion = (seen[t.id] ??= {});
    if (byVersion[String(t.schema_version)] !== undefined) continue;
    byVersion[String(t.schema_version)] = shapesOf(t);
    changed = true;
  }
  if (changed) tx.setMeta(FIELDS_LOADED_KEY, JSON.stringify(seen));
}

/** A field's change that can leave stored values behind; `options`: the options taken away. */
export interface FieldChange { field: string; text: string; options?: string[] }

/**
 * Per type, what changed in its fields since its current version was first loaded, as
 * far as stored values are concerned: a field removed, its type or list-ness changed,
 * options or entry items taken away (or an item retyped). Added fields and options, and a
 * new order, are not listed: old values still fit.
 */
export function fieldsChangedInPlace(r: StoreReads, defs: Definitions): Array<{ type: string; version: number; changes: FieldChange[] }> {
  const seen = recorded(r);
  const out: Array<{ type: string; version: number; changes: FieldChange[] }> = [];
  for (const t of defs.cardTypes.values()) {
    const was = seen[t.id]?.[String(t.schema_version)];
    if (!was) continue;
    const changes: FieldChange[] = [];
    for (const [id, before] of Object.entries(was)) {
      const f = t.fields.find((x) => x.id === id);
      if (f === undefined) { changes.push({ field: id, text: `${id} removed` }); continue; }
      const b = readShape(before);
      if (!b) {
        // a record in the first format: the whole text is compared
        const after = legacyShape(f);
        if (after !== before) changes.push({ field: id, text: `${id}: ${describe(before)} -> ${describe(after)}` });
        continue;
      }
      const a = shapeOf(f);
      if (a.type !== b.type) { changes.push({ field: id, text: `${id}: ${b.type} -> ${a.type}` }); continue; }
      const gone = (b.options ?? []).filter((o) => !(a.options ?? []).includes(o));
      if (gone.length) changes.push({ field: id, text: `${id}: option(s) ${gone.join(", ")} removed`, options: gone });
      const items = Object.entries(b.items ?? {}).filter(([item, shape]) => itemChanged(shape, a.items?.[item])).map(([item]) => item);
      if (items.length) changes.push({ field: id, text: `${id}: entry item(s) ${items.join(", ")} removed or changed` });
    }
    if (changes.length) out.push({ type: t.id, version: t.schema_version, changes });
  }
  return out;
}

/** An entry item's old values may not fit: it is gone, retyped, or lost options. */
function itemChanged(before: Shape, after: Shape | undefined): boolean {
  return after === undefined || after.type !== before.type || (before.options ?? []).some((o) => !(after.options ?? []).includes(o));
}

/** `enum[]:a|b` -> `enum[] (a, b)`; items are named, not expanded. */
function describe(s: string): string {
  const m = /^([a-z_]+(?:\[\])?)(?::([^{]*))?(\{.*\})?$/s.exec(s);
  if (!m) return s;
  return `${m[1]}${m[2] !== undefined ? ` (${m[2].split("|").join(", ")})` : ""}${m[3] ? " with other entry items" : ""}`;
}
