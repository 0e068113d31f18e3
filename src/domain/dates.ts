/**
 * Date field values in their stored form: UTC with exactly three fractional digits
 * (`2026-01-02T03:04:05.000Z`). Every value a write gives is stored so (domain/fields.ts),
 * so dates order by time as text in filters and sorts. Values stored before that rule,
 * or left by a field that became a date, are brought to it by service/date-values.ts.
 */
import { parseRfc3339, storedTime } from "./rfc3339.ts";
import type { CardType, FieldDef } from "./types.ts";

/** A date value in the stored form; the value itself when it is no timestamp (a type change left it). */
function storedDate(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const ms = parseRfc3339(v);
  return ms === undefined ? v : (storedTime(ms) ?? v);
}

/**
 * `fields` with each date value of `type` in the stored form, item fields of repeating
 * entries included; undefined when every one is already (nothing to write).
 */
export function fieldsWithStoredDates(type: CardType, fields: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const def of type.fields) {
    if (!Object.hasOwn(fields, def.id)) continue;
    const v = fields[def.id];
    const next = def.type === "date" ? storedDate(v) : def.type === "repeating" ? entriesWithStoredDates(def, v) : v;
    if (next !== v) (out ??= { ...fields })[def.id] = next;
  }
  return out;
}

/** True when `type` has a date field, at the top or among a repeating field's item fields. */
export function hasDateFields(type: CardType): boolean {
  return type.fields.some((f) => f.type === "date" || (f.type === "repeating" && (f.item_fields ?? []).some((i) => i.type === "date")));
}

/**
 * Names the date fields of these types (`type.field`, `type.field.item`): the stored form
 * is checked again when the set changes (a field became a date).
 */
export function dateFieldsStamp(types: Iterable<CardType>): string {
  const names: string[] = [];
  for (const t of types) {
    for (const f of t.fields) {
      if (f.type === "date") names.push(`${t.id}.${f.id}`);
      for (const i of f.type === "repeating" ? f.item_fields ?? [] : []) if (i.type === "date") names.push(`${t.id}.${f.id}.${i.id}`);
    }
  }
  return `${DATE_FORM_VERSION}:${names.sort().join(",")}`;
}

/** The stored form's version: bumped if the form ever changes, so every workspace is brought to it. */
const DATE_FORM_VERSION = 1;

function entriesWithStoredDates(def: FieldDef, v: unknown): unknown {
  const dates = (def.item_fields ?? []).filter((i) => i.type === "date");
  if (!dates.length || !Array.isArray(v)) return v;
  let out: unknown[] | undefined;
  v.forEach((entry: unknown, n) => {
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return;
    const e = entry as Record<string, unknown>;
    let next: Record<string, unknown> | undefined;
    for (const item of dates) {
      if (!Object.hasOwn(e, item.id)) continue;
      const s = storedDate(e[item.id]);
      if (s !== e[item.id]) (next ??= { ...e })[item.id] = s;
    }
    if (next) (out ??= [...v])[n] = next;
  });
  return out ?? v;
}
