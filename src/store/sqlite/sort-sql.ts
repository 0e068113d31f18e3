/**
 * ORDER BY terms for a parsed sort (src/domain/sort.ts), over the `cards` table. Cards
 * whose value is missing (absent or null) sort last in both directions; ties break by
 * id in the same direction. Text compares with NOCASE (ASCII case-insensitive),
 * matching `compareCards`.
 *
 * NOTE: the result is plain SQL without parameters, so it can sit anywhere in a query.
 * The `fields.<id>` JSON path is inlined as a string literal; the id is checked against
 * FIELD_KEY_PATTERN (letters, digits, `_`, `-`) first, so it cannot carry quotes.
 */
import { FIELD_KEY_PATTERN } from "../../domain/ids.ts";
import type { Sort } from "../../domain/sort.ts";

/**
 * @returns the terms that follow `ORDER BY` (the keyword is not included)
 * @example
 *   db.query(`SELECT * FROM cards c WHERE ... ORDER BY ${sortToSql(parseSort("-title", ids))} LIMIT ?`)
 */
export function sortToSql(sort: Sort, alias = "c"): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias)) throw new Error(`sortToSql: bad table alias ${JSON.stringify(alias)}`);
  const dir = sort.desc ? "DESC" : "ASC";
  const tie = `${alias}.id ${dir}`;
  if (sort.key === "created_at" || sort.key === "updated_at") return `${alias}.${sort.key} ${dir}, ${tie}`;
  if (sort.key === "title") return `${alias}.title COLLATE NOCASE ${dir}, ${tie}`;
  const id = sort.key.slice(7);
  if (!FIELD_KEY_PATTERN.test(id)) throw new Error(`sortToSql: bad field id ${JSON.stringify(id)}`);
  const v = `json_extract(${alias}.fields, '$."${id}"')`;
  return `(${v} IS NULL) ASC, ${v} COLLATE NOCASE ${dir}, ${tie}`;
}
