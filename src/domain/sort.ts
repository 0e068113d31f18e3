/**
 * The `sort` grammar of GET /cards (and board presentation `lane_sort`): one key,
 * `created_at`, `updated_at`, `title` or `fields.<field_id>`, with an optional leading
 * `-` for descending. Cards missing the key sort last in both directions; ties break by
 * card id in the same direction. Titles and text values compare case-insensitively for
 * ASCII letters (SQLite NOCASE). The SQL twin is src/store/sqlite/sort-sql.ts.
 */
import { CardsError } from "./errors.ts";
import { compareCodePoints } from "./codepoints.ts";
import { asciiLower } from "./filters.ts";
import type { Card } from "./types.ts";

export type SortKey = "created_at" | "updated_at" | "title" | `fields.${string}`;
export interface Sort { key: SortKey; desc: boolean }

/**
 * Parse a `sort` query value.
 * @throws CardsError validation_failed (field "sort", valid_options = the legal keys)
 * @example parseSort("-fields.priority", new Set(["priority"])) // {key: "fields.priority", desc: true}
 */
export function parseSort(raw: string, fieldIds: ReadonlySet<string>): Sort {
  const desc = raw.startsWith("-");
  const key = desc ? raw.slice(1) : raw;
  if (key === "created_at" || key === "updated_at" || key === "title") return { key, desc };
  if (key.startsWith("fields.") && fieldIds.has(key.slice(7))) return { key: key as SortKey, desc };
  const options = ["created_at", "updated_at", "title", ...[...fieldIds].sort().map((id) => `fields.${id}`)];
  throw new CardsError("validation_failed", `unsupported sort key ${JSON.stringify(raw)}`, {
    field: "sort", value: raw, valid_options: options, hint: "prefix a key with - for descending order",
  });
}

/**
 * An in-memory comparator with the same order as `sortToSql`: missing values last,
 * numbers before text, text by ASCII-case-folded code points, then id.
 */
export function compareCards(sort: Sort): (a: Card, b: Card) => number {
  const dir = sort.desc ? -1 : 1;
  return (a, b) => {
    const va = _sortValue(a, sort.key), vb = _sortValue(b, sort.key);
    if (va === undefined || vb === undefined) {
      if (va !== vb) return va === undefined ? 1 : -1;
    } else {
      const c = _compareValues(va, vb);
      if (c !== 0) return c * dir;
    }
    return compareCodePoints(a.id, b.id) * dir;
  };
}

// --- internal ---

/** number | string (text values, and JSON text for arrays and objects, as json_extract gives) | undefined */
function _sortValue(card: Card, key: SortKey): number | string | undefined {
  let v: unknown;
  if (key.startsWith("fields.")) {
    const id = key.slice(7);
    v = Object.hasOwn(card.fields, id) ? card.fields[id] : undefined;
  } else {
    v = card[key as "created_at" | "updated_at" | "title"];
  }
  if (v === undefined || v === null) return undefined;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v === "number" || typeof v === "string") return v;
  return JSON.stringify(v);
}

function _compareValues(a: number | string, b: number | string): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "number") return -1;
  if (typeof b === "number") return 1;
  return compareCodePoints(asciiLower(a), asciiLower(b));
}
