/**
 * A filter expression (docs/filters.md) in words, one line per condition: what a board's
 * default_filter keeps, for people who do not read JSON. A part it cannot say in words
 * is shown as its JSON.
 */
import { cardType, columnName, fieldDef, state } from "./state.ts";

type Filter = Record<string, unknown>;

const OPS: Record<string, string> = {
  $eq: "is", $ne: "is not", $in: "is one of", $nin: "is none of", $gt: "is more than", $gte: "is at least",
  $lt: "is less than", $lte: "is at most", $contains: "contains", $has: "has", $all: "has all of", $any: "has any of",
};

const PATHS: Record<string, string> = {
  id: "Id", type_id: "Type", title: "Title", status: "Status", owner: "Owner", tags: "Tags", created_by: "Created by",
  created_at: "Created", updated_at: "Updated", status_since: "In its status since", version: "Version", schema_version: "Schema version",
};

/** The conditions of `filter` in words: every line must hold. */
export function filterWords(filter: Filter): string[] {
  return Object.entries(filter).map(([key, value]) => clause(key, value));
}

function clause(key: string, value: unknown): string {
  if (key === "$and" && Array.isArray(value)) return value.map((f) => `(${filterWords(f as Filter).join(" and ")})`).join(" and ");
  if (key === "$or" && Array.isArray(value)) return `either ${value.map((f) => `(${filterWords(f as Filter).join(" and ")})`).join(" or ")}`;
  if (key === "blocked" && typeof value === "boolean") return value ? "Blocked" : "Not blocked";
  if (key.startsWith("$")) return JSON.stringify({ [key]: value });
  const name = pathName(key);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return `${name} ${OPS.$eq} ${operand(key, "$eq", value)}`;
  return Object.entries(value as Filter).map(([op, arg]) => OPS[op] ? `${name} ${OPS[op]} ${operand(key, op, arg)}` : `${name} ${JSON.stringify({ [op]: arg })}`).join(" and ");
}

/** The definition of a `fields.` path's field on the board's card types. */
function field(path: string) {
  if (!path.startsWith("fields.")) return undefined;
  const id = path.slice("fields.".length);
  return state.board.card_type_ids.map((t) => fieldDef(t, id)).find((d) => d);
}

/** "Resolution" for fields.resolution (the label of the field on the board's card types). */
function pathName(path: string): string {
  if (!path.startsWith("fields.")) return PATHS[path] ?? path;
  return field(path)?.label || path.slice("fields.".length);
}

function operand(path: string, op: string, v: unknown): string {
  if (Array.isArray(v)) return v.map((x) => operand(path, op, x)).join(", ");
  if (v === null) return path === "owner" ? "unowned" : "empty";
  if (typeof v !== "string") return String(v);
  if (path === "status") return `“${columnName(v)}”`;
  if (path === "type_id") return `“${cardType(v)?.name ?? v}”`;
  // `me` is the acting user where a user is compared (docs/filters.md), text elsewhere
  const user = path === "owner" || field(path)?.type === "user";
  if (v === "me" && user && op !== "$contains") return "me (the person acting)";
  return `“${v}”`;
}
