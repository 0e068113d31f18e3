/**
 * In-lane order from the board's lane_sort (the list sort grammar: created_at, updated_at,
 * title or fields.<id>, optional leading "-"), matching the server's order: missing values
 * last, numbers before text, text by code point with ASCII case folded, ties by id in the same
 * direction. Without lane_sort: updated_at then id, both descending (the list default).
 */
import { compareCodePoints } from "../domain/codepoints.ts";
import type { Card } from "./types.ts";

export function laneComparator(spec: string | undefined): (a: Card, b: Card) => number {
  const raw = spec || "-updated_at";
  const desc = raw.startsWith("-");
  const key = desc ? raw.slice(1) : raw;
  const dir = desc ? -1 : 1;
  return (a, b) => {
    const va = sortValue(a, key);
    const vb = sortValue(b, key);
    if (va === undefined || vb === undefined) {
      if (va !== vb) return va === undefined ? 1 : -1;
    } else {
      const c = compareValues(va, vb);
      if (c !== 0) return c * dir;
    }
    return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * dir;
  };
}

/** A lane order in words: "newest first", "by title", "by priority, descending". */
export function describeSort(spec: string): string {
  const desc = spec.startsWith("-");
  const key = desc ? spec.slice(1) : spec;
  if (key === "created_at") return desc ? "newest first" : "oldest first";
  if (key === "updated_at") return desc ? "most recently changed first" : "least recently changed first";
  return `by ${key.replace(/^fields\./, "")}${desc ? ", descending" : ""}`;
}

function sortValue(card: Card, key: string): number | string | undefined {
  const v = key.startsWith("fields.") ? card.fields[key.slice(7)] : (card as unknown as Record<string, unknown>)[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "string") return v;
  return JSON.stringify(v);
}

const lower = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());

function compareValues(a: number | string, b: number | string): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  // by code point, as the server: JS `<` compares UTF-16 units, which put "ｆ" (U+FF46) after 🚀
  return compareCodePoints(lower(a), lower(b));
}
