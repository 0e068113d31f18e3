/**
 * Which values an equality test in a filter may name, for the card types in scope: the
 * same rule for a caller's filter (service/list.ts) and a board's default_filter and
 * saved filters (definitions/crossrefs.ts), so a value refused in one is refused in both.
 */

/** A field as far as filter values go (a definition file's field may still be malformed). */
export interface FilterValueField { id: string; type: unknown; options?: unknown }

/**
 * The options of each `fields.<id>` that is an enum in every type in scope that has it.
 * A field that is an enum in one type and text in another may hold anything: no entry.
 */
export function enumOptionsByPath(typeFields: Iterable<readonly FilterValueField[]>): Record<string, string[]> {
  const enums = new Map<string, Set<string> | null>();
  for (const fields of typeFields) {
    for (const f of fields) {
      const path = `fields.${f.id}`;
      const seen = enums.get(path);
      if (seen === null) continue;
      const options = f.type === "enum" && Array.isArray(f.options) ? f.options.filter((o): o is string => typeof o === "string") : undefined;
      enums.set(path, options ? new Set([...(seen ?? []), ...options]) : null);
    }
  }
  const out: Record<string, string[]> = {};
  for (const [path, options] of enums) if (options) out[path] = [...options];
  return out;
}

/**
 * The `fields.<id>` paths of date fields: a date in every type in scope that has it. A
 * filter converts their string operands to the stored UTC form (domain/filters.ts); a
 * field that is a date in one type and text in another is compared as written.
 */
export function datePaths(typeFields: Iterable<readonly FilterValueField[]>): Set<string> {
  const dates = new Map<string, boolean>();
  for (const fields of typeFields) {
    for (const f of fields) {
      const path = `fields.${f.id}`;
      dates.set(path, f.type === "date" && dates.get(path) !== false);
    }
  }
  return new Set([...dates].filter(([, date]) => date).map(([path]) => path));
}
