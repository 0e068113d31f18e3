/**
 * Compile a filter AST (src/domain/filters.ts, docs/filters.md) to a SQLite WHERE
 * expression over the `cards` table. The result has exactly the semantics of
 * `matchesFilter`; tests/unit/filters.test.ts checks both on a real database.
 *
 * Table layout assumed (alias `c` by default): id, type_id, title, status, owner (NULL
 * when unowned), tags (JSON array text), fields (JSON object text), version,
 * schema_version, created_at, updated_at, status_since, created_by; and
 * `links(card_id, type_id, target)` for the `blocked` condition.
 *
 * Every value, and every `fields.<id>` JSON path, is a bound parameter. Each compiled
 * predicate evaluates to 0 or 1, never NULL, so NOT and the `$ne`/`$nin` negations are exact.
 */
import type { CmpOp, FilterNode, FilterScalar } from "../../domain/filters.ts";
import { BLOCKING_LINK_TYPES } from "../../domain/types.ts";

export type SqlParam = string | number | null;

export interface FilterSqlOptions {
  /** the column id a blocker must reach to stop blocking; default "done" (SPEC Link rules 5) */
  doneStatus?: string;
}

/**
 * @param alias the table alias of `cards` in the surrounding query
 * @returns `sql`, a boolean expression for a WHERE clause, and its positional `params`
 * @example
 *   const w = filterToSql(node, "c", { doneStatus: "done" });
 *   db.query(`SELECT c.* FROM cards c WHERE ${w.sql}`).all(...w.params);
 */
export function filterToSql(node: FilterNode, alias = "c", opts: FilterSqlOptions = {}): { sql: string; params: SqlParam[] } {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(alias)) throw new Error(`filterToSql: bad table alias ${JSON.stringify(alias)}`);
  const done = opts.doneStatus ?? "done";
  // filter nodes are immutable: compile each once (board scopes recur on every request)
  const key = `${alias}\0${done}`;
  const hit = _compiled.get(node)?.get(key);
  if (hit) return hit;
  const f = _node(node, alias, done);
  const out = { sql: f.sql, params: f.params };
  if (!_compiled.has(node)) _compiled.set(node, new Map());
  _compiled.get(node)!.set(key, out);
  return out;
}

const _compiled = new WeakMap<FilterNode, Map<string, { sql: string; params: SqlParam[] }>>();

// --- internal ---

interface _Frag { sql: string; params: SqlParam[] }
type _JsonType = "null" | "text" | "integer" | "real" | "true" | "false" | "array" | "object";

const _TRUE: _Frag = { sql: "1", params: [] };
const _FALSE: _Frag = { sql: "0", params: [] };
const _raw = (sql: string): _Frag => ({ sql, params: [] });

/** Tagged template: a `_Frag` is spliced in with its params, anything else becomes `?`. */
function _q(strings: TemplateStringsArray, ...vals: Array<_Frag | SqlParam>): _Frag {
  let sql = strings[0]!;
  const params: SqlParam[] = [];
  vals.forEach((v, i) => {
    if (v !== null && typeof v === "object") { sql += v.sql; params.push(...v.params); }
    else { sql += "?"; params.push(v); }
    sql += strings[i + 1]!;
  });
  return { sql, params };
}

function _join(frags: _Frag[], op: "AND" | "OR"): _Frag {
  const absorb = op === "AND" ? "0" : "1", neutral = op === "AND" ? "1" : "0";
  const kept = frags.filter((f) => f.sql !== neutral);
  if (kept.some((f) => f.sql === absorb)) return op === "AND" ? _FALSE : _TRUE;
  if (kept.length === 0) return op === "AND" ? _TRUE : _FALSE;
  if (kept.length === 1) return kept[0]!;
  return _balanced(kept, op);
}

/**
 * `(a OP b OP ...)`, nested as a balanced tree past 16 terms: SQLite parses a flat chain
 * as a left-deep tree, and an `$in` of 1,000 values (the documented limit) went past its
 * expression depth limit of 1,000 ("Expression tree is too large").
 */
function _balanced(frags: _Frag[], op: "AND" | "OR"): _Frag {
  if (frags.length <= 16) return { sql: `(${frags.map((f) => f.sql).join(` ${op} `)})`, params: frags.flatMap((f) => f.params) };
  const mid = frags.length >> 1;
  const left = _balanced(frags.slice(0, mid), op), right = _balanced(frags.slice(mid), op);
  return { sql: `(${left.sql} ${op} ${right.sql})`, params: [...left.params, ...right.params] };
}
const _and = (...f: _Frag[]) => _join(f, "AND");
const _or = (...f: _Frag[]) => _join(f, "OR");
function _not(f: _Frag): _Frag {
  if (f.sql === "1") return _FALSE;
  if (f.sql === "0") return _TRUE;
  return _q`(NOT ${f})`;
}

/** Where a path's value lives and how to ask about its JSON type. */
interface _Src {
  /** 1 when the value's JSON type is one of `types` (absent counts as "null") */
  typeIn(types: _JsonType[]): _Frag;
  val(): _Frag;
  elems(): _Frag;
  len(): _Frag;
  /** appended to text comparisons on real columns */
  collate: string;
  /** lists up to this long are written out value by value; longer ones are bound as JSON */
  inline: number;
}

const _TEXT_COLUMNS = new Set(["id", "type_id", "title", "status", "owner", "created_by", "created_at", "updated_at", "status_since"]);
const _NUMBER_COLUMNS = new Set(["version", "schema_version"]);

function _src(path: string, a: string): _Src {
  if (path.startsWith("fields.")) {
    const jp = `$."${path.slice(7)}"`;
    return {
      typeIn: (ts) => _q`(IFNULL(json_type(${_raw(a)}.fields, ${jp}), 'null') IN (${_raw(ts.map((t) => `'${t}'`).join(", "))}))`,
      val: () => _q`json_extract(${_raw(a)}.fields, ${jp})`,
      elems: () => _q`json_each(${_raw(a)}.fields, ${jp})`,
      len: () => _q`json_array_length(${_raw(a)}.fields, ${jp})`,
      collate: "", inline: _JSON_LIST_INLINE,
    };
  }
  const col = _raw(`${a}.${path}`);
  if (path === "tags") {
    return {
      typeIn: (ts) => (ts.includes("array") ? _TRUE : _FALSE),
      val: () => col, elems: () => _q`json_each(${col})`, len: () => _q`json_array_length(${col})`, collate: "", inline: _JSON_LIST_INLINE,
    };
  }
  const scalarType: _JsonType[] = _NUMBER_COLUMNS.has(path) ? ["integer", "real"] : ["text"];
  if (!_TEXT_COLUMNS.has(path) && !_NUMBER_COLUMNS.has(path)) throw new Error(`filterToSql: unknown path ${path}`);
  return {
    // columns may only be NULL when unowned (owner); NULL reads as JSON null
    typeIn: (ts) => {
      const scalar = ts.some((t) => scalarType.includes(t)), isNull = ts.includes("null");
      if (scalar && isNull) return _TRUE;
      if (scalar) return _q`(${col} IS NOT NULL)`;
      if (isNull) return _q`(${col} IS NULL)`;
      return _FALSE;
    },
    val: () => col, elems: () => _FALSE, len: () => _FALSE, collate: " COLLATE BINARY", inline: _LIST_INLINE,
  };
}

function _node(n: FilterNode, a: string, done: string): _Frag {
  switch (n.kind) {
    case "and": return _and(..._mergeLists(n.nodes, "and").map((x) => _node(x, a, done)));
    case "or": return _or(..._mergeLists(n.nodes, "or").map((x) => _node(x, a, done)));
    case "blocked": {
      const types = _raw(BLOCKING_LINK_TYPES.map((t) => `'${t}'`).join(", "));
      const exists = _q`EXISTS (SELECT 1 FROM links _bl JOIN cards _bt ON _bt.id = _bl.target WHERE _bl.card_id = ${_raw(a)}.id AND _bl.type_id IN (${types}) AND _bt.status <> ${done})`;
      return n.value ? exists : _not(exists);
    }
    case "cmp": return _cmp(_src(n.path, a), n.op, n.value);
  }
}

/** Operators that hold when the value equals one of theirs (`$eq`/`$has` of one, `$in`/`$any` of a list). */
const _ANY_OF = new Set<CmpOp>(["$eq", "$has", "$in", "$any"]);
/** ... and those that hold when it equals none of them. */
const _NONE_OF = new Set<CmpOp>(["$ne", "$nin"]);

/**
 * Under an `$or`, the equality tests of one path become one `$in` of all their values;
 * under an `$and`, its `$ne`/`$nin` tests one `$nin` (the same truth: `$in` is the `$or` of
 * `$eq` per value). A generated `$or` of 200 `{path: {$in: [8 values]}}` compiled to 1,600
 * JSON reads per card (take-next: 4.8 s at 100,000 cards); merged, to one list test (117 ms).
 */
function _mergeLists(nodes: FilterNode[], kind: "and" | "or"): FilterNode[] {
  const ops = kind === "or" ? _ANY_OF : _NONE_OF;
  const byPath = new Map<string, FilterScalar[]>();
  const count = new Map<string, number>();
  for (const n of nodes) if (n.kind === "cmp" && ops.has(n.op)) count.set(n.path, (count.get(n.path) ?? 0) + 1);
  const out: FilterNode[] = [];
  for (const n of nodes) {
    if (n.kind !== "cmp" || !ops.has(n.op) || count.get(n.path)! < 2) { out.push(n); continue; }
    const values = byPath.get(n.path);
    const mine = Array.isArray(n.value) ? n.value : [n.value];
    if (values) { values.push(...mine); continue; }
    const merged = [...mine];
    byPath.set(n.path, merged);
    out.push({ kind: "cmp", path: n.path, op: kind === "or" ? "$in" : "$nin", value: merged });
  }
  return out;
}

function _cmp(s: _Src, op: CmpOp, value: FilterScalar | FilterScalar[]): _Frag {
  const xs = Array.isArray(value) ? value : [value];
  const one = xs[0] ?? null;
  switch (op) {
    case "$eq": case "$has": return _eq(s, one);
    case "$ne": return _not(_eq(s, one));
    case "$in": case "$any": return xs.length > s.inline ? _inList(s, xs) : _or(...xs.map((x) => _eq(s, x)));
    case "$nin": return _not(xs.length > s.inline ? _inList(s, xs) : _or(...xs.map((x) => _eq(s, x))));
    case "$all": return xs.length > s.inline ? _allList(s, xs) : _and(...xs.map((x) => _eq(s, x)));
    case "$contains":
      return _or(
        _and(s.typeIn(["text"]), _q`(instr(lower(${s.val()}), lower(${one as string})) > 0)`),
        _elemEq(s, one),
      );
    case "$gt": case "$gte": case "$lt": case "$lte": {
      const sym = _raw({ $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" }[op]);
      if (typeof one === "number") return _and(s.typeIn(["integer", "real"]), _q`(${s.val()} ${sym} ${one})`);
      if (typeof one === "string") return _and(s.typeIn(["text"]), _q`(${s.val()} ${sym} ${one}${_raw(s.collate)})`);
      return _FALSE;
    }
  }
}

/**
 * Lists longer than this are bound as one JSON parameter each (strings, numbers) and
 * read with json_each: written out, each value cost ~125 characters of SQL, and
 * SQLite's prepare time grows faster than the text (ten `$nin` of 1,000 values: 5 s).
 */
const _LIST_INLINE = 8;
/**
 * ... and for a value inside JSON (fields, tags), past two: each value written out reads
 * the JSON again (its type, its value, its elements), a bound list once per kind of value
 * (a 3-value `$in` on a field over 100,000 cards: 330 -> 237 ms; an `$or` of 199 `$nin`
 * lists of 8: 39 -> 17 s, docs/limits.md).
 */
const _JSON_LIST_INLINE = 2;

const _NUM_TYPES: _JsonType[] = ["integer", "real"];

/**
 * A long list's parts: one per boolean, one for null, and for the strings and for the
 * numbers, `perKind(json, typeIn, valueCollate, elemTypes)` with the values as one JSON
 * parameter (each set once).
 */
function _listParts(s: _Src, xs: FilterScalar[], perKind: (json: string, types: _JsonType[], collate: string, elemTypes: string) => _Frag): _Frag[] {
  const parts: _Frag[] = [...new Set(xs.filter((x): x is boolean => typeof x === "boolean"))].map((b) => _eq(s, b));
  if (xs.includes(null)) parts.push(_isEmpty(s));
  const strs = [...new Set(xs.filter((x): x is string => typeof x === "string"))];
  const nums = [...new Set(xs.filter((x): x is number => typeof x === "number"))];
  if (strs.length) parts.push(perKind(JSON.stringify(strs), ["text"], s.collate, "'text'"));
  if (nums.length) parts.push(perKind(JSON.stringify(nums), _NUM_TYPES, "", "'integer', 'real'"));
  return parts;
}

/** `$in` of a long list: equal to one of them (as a scalar, or as an element of an array). */
function _inList(s: _Src, xs: FilterScalar[]): _Frag {
  return _or(..._listParts(s, xs, (json, types, collate, elemTypes) => {
    const scalar = _and(s.typeIn(types), _q`(${s.val()}${_raw(collate)} IN (SELECT value FROM json_each(${json})))`);
    const isArray = s.typeIn(["array"]);
    if (isArray.sql === "0") return scalar;
    return _or(scalar, _and(isArray, _q`EXISTS (SELECT 1 FROM ${s.elems()} AS _e WHERE _e.type IN (${_raw(elemTypes)}) AND _e.value IN (SELECT value FROM json_each(${json})))`));
  }));
}

/** `$all` of a long list: every one of them is equal to the value (scalar) or one of its elements. */
function _allList(s: _Src, xs: FilterScalar[]): _Frag {
  return _and(..._listParts(s, xs, (json, types, collate, elemTypes) => {
    const scalar = _and(s.typeIn(types), _q`(${s.val()}${_raw(collate)} = _w.value)`);
    const isArray = s.typeIn(["array"]);
    const elem = isArray.sql === "0" ? _FALSE : _and(isArray, _q`EXISTS (SELECT 1 FROM ${s.elems()} AS _e WHERE _e.type IN (${_raw(elemTypes)}) AND _e.value = _w.value)`);
    return _q`(NOT EXISTS (SELECT 1 FROM json_each(${json}) AS _w WHERE NOT ${_or(scalar, elem)}))`;
  }));
}

function _isEmpty(s: _Src): _Frag {
  return _or(
    s.typeIn(["null"]),
    _and(s.typeIn(["text"]), _q`(${s.val()} = '')`),
    _and(s.typeIn(["array"]), _q`(${s.len()} = 0)`),
  );
}

function _eq(s: _Src, x: FilterScalar): _Frag {
  if (x === null) return _isEmpty(s);
  return _or(_scalarEq(s, x), _elemEq(s, x));
}

function _scalarEq(s: _Src, x: Exclude<FilterScalar, null>): _Frag {
  if (typeof x === "boolean") return s.typeIn([x ? "true" : "false"]);
  if (typeof x === "number") return _and(s.typeIn(["integer", "real"]), _q`(${s.val()} = ${x})`);
  return _and(s.typeIn(["text"]), _q`(${s.val()} = ${x}${_raw(s.collate)})`);
}

/** 1 when the value is an array holding an element equal to x (same JSON type). */
function _elemEq(s: _Src, x: FilterScalar): _Frag {
  const isArray = s.typeIn(["array"]);
  if (isArray.sql === "0" || x === null) return _FALSE;
  let match: _Frag;
  if (typeof x === "boolean") match = _raw(`_e.type = '${x ? "true" : "false"}'`);
  else if (typeof x === "number") match = _q`_e.type IN ('integer', 'real') AND _e.value = ${x}`;
  else match = _q`_e.type = 'text' AND _e.value = ${x}`;
  return _and(isArray, _q`EXISTS (SELECT 1 FROM ${s.elems()} AS _e WHERE ${match})`);
}
