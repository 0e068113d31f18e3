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
 * field that is a date in one type and text in another is compared per type (mixedDatePaths).
 */
export function datePaths(typeFields: Iterable<readonly FilterValueField[]>): Set<string> {
  return pathsOfType(typeFields, "date");
}

/**
 * The `fields.<id>` paths of `tags` fields (in every type in scope that has them): a
 * filter reads their operands as a write stores a tag (tag_set's spelling, else NFC).
 */
export function tagPaths(typeFields: Iterable<readonly FilterValueField[]>): Set<string> {
  return pathsOfType(typeFields, "tags");
}

/** The `fields.<id>` paths whose field is of `type` in every type in scope that has it. */
function pathsOfType(typeFields: Iterable<readonly FilterValueField[]>, type: string): Set<string> {
  const all = new Map<string, boolean>();
  for (const fields of typeFields) {
    for (const f of fields) {
      const path = `fields.${f.id}`;
      all.set(path, f.type === type && all.get(path) !== false);
    }
  }
  return new Set([...all].filter(([, every]) => every).map(([path]) => path));
}

/**
 * The `fields.<id>` paths that are a date in some types in scope and another type in
 * others, each with the types where it is a date: a filter compares such a path per type
 * (domain/filters.ts), its operand converted to the stored UTC form for the date types
 * and as written for the rest.
 */
export function mixedDatePaths(types: Iterable<{ id: string; fields: readonly FilterValueField[] }>): Map<string, string[]> {
  const dateTypes = new Map<string, string[]>();
  const other = new Set<string>();
  for (const t of types) {
    for (const f of t.fields) {
      const path = `fields.${f.id}`;
      if (f.type !== "date") other.add(path);
      else dateTypes.set(path, [...(dateTypes.get(path) ?? []), t.id]);
    }
  }
  return new Map([...dateTypes].filter(([path]) => other.has(path)));
}
