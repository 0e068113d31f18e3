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

/** The stored form's version: bumped if the form ever changes, so every workspace is brought to it once. */
export const DATE_FORM_VERSION = 1;

/**
 * True when a database's record (meta) says its date values were brought to the current
 * form. Builds of 2026-11-25 recorded `1:<date fields>`: the same version.
 */
export function dateFormRecorded(record: string | undefined): boolean {
  return record !== undefined && record.split(":")[0] === String(DATE_FORM_VERSION);
}

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
