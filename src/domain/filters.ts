/**
 * Filter expressions (SPEC "Filter expressions"; the full reference is docs/filters.md).
 * Used by board default_filter, saved board filters, the take-next `filter` and the
 * tool server list tool. Not a free-form parameter of GET /cards.
 *
 * Grammar (JSON):
 *
 *   filter     := { key: value, ... }              several keys = all must hold (AND); {} matches all
 *   key        := "$and" | "$or"                   value: non-empty array of filters
 *               | "blocked"                        value: true | false
 *               | path                             value: literal | { op: operand, ... }
 *   path       := id | type_id | title | status | owner | tags | created_by
 *               | created_at | updated_at | status_since | version | schema_version
 *               | "fields." <field id>
 *   literal    := string | number | boolean | null  shorthand for { "$eq": literal }
 *   op         := $eq | $ne                         operand: scalar or null
 *               | $in | $nin                       operand: array of scalars or null (may be empty)
 *               | $gt | $gte | $lt | $lte          operand: number or string
 *               | $contains                        operand: string
 *               | $has                             operand: scalar (not null)
 *               | $all | $any                      operand: non-empty array of scalars (tags, fields.*)
 *
 * Semantics, over the JSON value v at the path (absent when the key is missing):
 * - empty: v absent, null, "" or []. `$eq: null` matches empty; `$ne: null` matches non-empty.
 * - `$eq x` (x not null): a scalar v equal to x with the same JSON type, or an array v
 *   holding an element equal to x. `$has` is the same test (membership; equality for
 *   scalars). `$ne` / `$nin` are the exact negations of `$eq` / `$in`, so they match absent values.
 * - `$in xs`: some x in xs matches `$eq`. `$all xs` / `$any xs`: every / some x matches `$has`.
 * - `$gt` ... `$lte`: scalar v of the operand's type (number with number, string with
 *   string; strings by Unicode code point, as SQLite BINARY); arrays never match.
 *   Operands for created_at / updated_at / status_since, and string operands of date
 *   fields (FilterContext.datePaths), are RFC 3339 and normalised to the stored UTC form
 *   (2026-01-02T03:04:05.000Z) before comparing.
 * - `$contains s`: string v holding s as a substring, case-insensitive for ASCII letters
 *   (like SQLite lower()); array v holding an element equal to s.
 * - `blocked: true`: the card has an outgoing depends-on or blocked-by link to a card
 *   not in the done column.
 * - the value token "me" on owner, created_by (and user-typed fields the caller names)
 *   becomes the viewing actor through `resolveMe`.
 *
 * The SQL twin of `matchesFilter` is src/store/sqlite/filter-sql.ts; both must agree.
 */
import { compareCodePoints } from "./codepoints.ts";
import { CardsError } from "./errors.ts";
import { FIELD_KEY_PATTERN, ME } from "./ids.ts";
import { TIME_MAX_MS, TIME_MIN_MS, parseRfc3339 } from "./rfc3339.ts";
import { sameText, storedTag } from "./text.ts";
import type { Card } from "./types.ts";

export type FilterScalar = string | number | boolean | null;

export type CmpOp =
  | "$eq" | "$ne" | "$in" | "$nin" | "$gt" | "$gte" | "$lt" | "$lte"
  | "$contains" | "$has" | "$all" | "$any";

/** The normalised filter AST. `{kind: "and", nodes: []}` matches every card. */
export type FilterNode =
  | { kind: "and"; nodes: FilterNode[] }
  | { kind: "or"; nodes: FilterNode[] }
  | { kind: "cmp"; path: string; op: CmpOp; value: FilterScalar | FilterScalar[] }
  | { kind: "blocked"; value: boolean };

export interface FilterContext {
  /** when given, `fields.<id>` must name one of these ids */
  fieldIds?: ReadonlySet<string>;
  /**
   * when given, the values a path may be compared with for equality (`status`: the
   * workspace's columns, `type_id`: its card types, `tags` under a locked tag policy,
   * `fields.<id>` of enum fields): a typo is refused with the valid options instead of
   * matching nothing
   */
  knownValues?: Readonly<Record<string, readonly string[]>>;
  /**
   * asked before a value outside knownValues is refused: true when cards still hold it
   * (the definitions dropped it, a card was not moved yet), so those cards can be found.
   * `refuse` builds the error the parser throws on false (for a caller that looks later).
   */
  held?: (path: string, value: string | number | boolean, refuse: () => Error) => boolean;
  /**
   * `fields.<id>` paths of date fields (a date in every type in scope that has it): their
   * string operands are timestamps, converted to the stored UTC form as for created_at
   */
  datePaths?: ReadonlySet<string>;
  /**
   * `fields.<id>` paths that are a date in some types in scope and not in others, with
   * the types where they are: a condition there is tested per type, its string operand
   * converted for the date types and as written for the others
   */
  mixedDates?: ReadonlyMap<string, readonly string[]>;
  /** the workspace's tag_set: a tag operand is read in its spelling when it is one of them in another Unicode form */
  tagSet?: readonly string[];
  /** `fields.<id>` paths of `tags` fields (in every type in scope): their operands are read as tags are */
  tagPaths?: ReadonlySet<string>;
}

export const FILTER_ENVELOPE_PATHS = [
  "id", "type_id", "title", "status", "owner", "tags", "created_by",
  "created_at", "updated_at", "status_since", "version", "schema_version",
] as const;

export const FILTER_OPERATORS: readonly CmpOp[] = [
  "$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$contains", "$has", "$all", "$any",
];

export const MAX_FILTER_DEPTH = 16;
export const MAX_FILTER_NODES = 200;
/** most elements one `$in` / `$nin` / `$all` / `$any` list may hold */
export const MAX_FILTER_LIST = 1000;
/**
 * `$contains` conditions per filter, and their operands' characters together: each one
 * scans every candidate's value (lower() + a naive substring search), so 20 conditions of
 * 4,000 characters over 100 cards of 200 KB held the server for 20 s (docs/limits.md)
 */
export const MAX_CONTAINS = 10;
export const MAX_CONTAINS_CHARS = 500;

/**
 * Validate an untrusted filter and return its normalised AST.
 * @param where the JSON path of the filter in the request, used in error `field`s
 * @throws CardsError validation_failed with `field` = the path inside the filter
 *   (e.g. `filter.$and[1].status.$in`) and `valid_options` where a finite set exists
 * @example parseFilter({ status: { $in: ["todo", "doing"] }, blocked: false })
 */
export function parseFilter(raw: unknown, ctx: FilterContext = {}, where = "filter"): FilterNode {
  return _parseObject(raw, where, 1, { nodes: 0, ctx, contains: 0, containsChars: 0 });
}

/**
 * Replace the value token "me" by `actor` on `owner`, `created_by` and the extra
 * `userPaths` (e.g. `fields.reviewer`). Returns a new AST.
 * @throws CardsError validation_failed when "me" is used and no actor is known
 */
export function resolveMe(node: FilterNode, actor: string | undefined, userPaths: Iterable<string> = []): FilterNode {
  const paths = new Set<string>(["owner", "created_by", ...userPaths]);
  const swap = (v: FilterScalar, path: string): FilterScalar => {
    if (v !== ME) return v;
    if (!actor) {
      throw new CardsError("validation_failed", "the filter token \"me\" needs an actor", {
        field: path, value: v, hint: "name the actor: --actor or CARDS_ACTOR (CLI), the X-Service-Actor header (HTTP)",
      });
    }
    return actor;
  };
  const walk = (n: FilterNode): FilterNode => {
    if (n.kind === "and" || n.kind === "or") return { kind: n.kind, nodes: n.nodes.map(walk) };
    // only where "me" names a user: `{"owner": {"$contains": "me"}}` is a substring search
    if (n.kind !== "cmp" || !paths.has(n.path) || n.op === "$contains" || n.op.startsWith("$gt") || n.op.startsWith("$lt")) return n;
    const value = Array.isArray(n.value) ? n.value.map((v) => swap(v, n.path)) : swap(n.value, n.path);
    return { ...n, value };
  };
  return walk(node);
}

/** AND several filters (undefined ones are skipped; nested ANDs are flattened). */
export function andFilters(...nodes: Array<FilterNode | undefined | null>): FilterNode {
  const out: FilterNode[] = [];
  for (const n of nodes) {
    if (!n) continue;
    if (n.kind === "and") out.push(...n.nodes);
    else out.push(n);
  }
  return out.length === 1 ? out[0]! : { kind: "and", nodes: out };
}

/**
 * Evaluate a filter against a card in memory (event filters, tests). Same semantics as
 * the SQL compiler. `isBlocked` answers the `blocked` condition.
 */
export function matchesFilter(node: FilterNode, card: Card, isBlocked: (card: Card) => boolean): boolean {
  switch (node.kind) {
    case "and": return node.nodes.every((n) => matchesFilter(n, card, isBlocked));
    case "or": return node.nodes.some((n) => matchesFilter(n, card, isBlocked));
    case "blocked": return isBlocked(card) === node.value;
    case "cmp": return _matchCmp(getFilterPathValue(card, node.path), node.op, node.value);
  }
}

/** The value a filter path reads from a card; undefined when absent. */
export function getFilterPathValue(card: Card, path: string): unknown {
  if (path.startsWith("fields.")) {
    const id = path.slice(7);
    return Object.hasOwn(card.fields, id) ? card.fields[id] : undefined;
  }
  return (card as unknown as Record<string, unknown>)[path];
}

/** Lowercase ASCII letters only, exactly like SQLite's built-in lower(). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}


// --- internal ---

type _Kind = "string" | "time" | "number" | "tags" | "field" | "date";
interface _State { nodes: number; ctx: FilterContext; contains: number; containsChars: number }

const _KIND: Record<string, _Kind> = {
  id: "string", type_id: "string", title: "string", status: "string", owner: "string", created_by: "string",
  created_at: "time", updated_at: "time", status_since: "time",
  version: "number", schema_version: "number", tags: "tags",
};
const _CMP: CmpOp[] = ["$gt", "$gte", "$lt", "$lte"];
const _OPS: Record<_Kind, readonly CmpOp[]> = {
  string: ["$eq", "$ne", "$in", "$nin", ..._CMP, "$contains", "$has"],
  time: ["$eq", "$ne", "$in", "$nin", ..._CMP, "$contains", "$has"],
  number: ["$eq", "$ne", "$in", "$nin", ..._CMP, "$has"],
  tags: ["$eq", "$ne", "$in", "$nin", "$contains", "$has", "$all", "$any"],
  field: FILTER_OPERATORS,
  date: FILTER_OPERATORS,
};

function _fail(field: string, message: string, value?: unknown, validOptions?: readonly unknown[], hint?: string, code: "validation_failed" | "unknown_enum" | "unknown_tag" | "unknown_user" = "validation_failed"): CardsError {
  const extra: ConstructorParameters<typeof CardsError>[2] = { field };
  if (value !== undefined) extra.value = value;
  if (validOptions !== undefined) extra.valid_options = [...validOptions];
  if (hint !== undefined) extra.hint = hint;
  return new CardsError(code, message, extra);
}

function _isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function _count<T extends FilterNode>(st: _State, at: string, node: T): T {
  if (++st.nodes > MAX_FILTER_NODES) throw _fail(at, `a filter may hold at most ${MAX_FILTER_NODES} nodes (conditions, $and and $or each count as one)`);
  return node;
}

function _countContains(st: _State, at: string, operand: string): void {
  st.containsChars += operand.length;
  if (++st.contains > MAX_CONTAINS || st.containsChars > MAX_CONTAINS_CHARS) {
    throw _fail(at, `a filter may hold at most ${MAX_CONTAINS} $contains conditions, of ${MAX_CONTAINS_CHARS} characters together`, undefined, undefined,
      "each $contains scans every candidate's text: look for the few words that matter, or search with q (full-text, indexed)");
  }
}

function _validPaths(ctx: FilterContext): string[] {
  const fields = ctx.fieldIds ? [...ctx.fieldIds].sort().map((id) => `fields.${id}`) : ["fields.<id>"];
  return [...FILTER_ENVELOPE_PATHS, ...fields, "blocked", "$and", "$or"];
}

function _parseObject(raw: unknown, at: string, depth: number, st: _State): FilterNode {
  if (!_isPlainObject(raw)) {
    throw _fail(at, "a filter is a JSON object", raw, undefined, 'for example {"status": "todo", "blocked": false}');
  }
  if (depth > MAX_FILTER_DEPTH) throw _fail(at, `filters nest at most ${MAX_FILTER_DEPTH} levels deep`);
  const nodes: FilterNode[] = [];
  for (const [key, val] of Object.entries(raw)) {
    const kat = `${at}.${key}`;
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(val) || val.length === 0) throw _fail(kat, `${key} takes a non-empty array of filters`, val);
      const subs = val.map((f, i) => _parseObject(f, `${kat}[${i}]`, depth + 1, st));
      nodes.push(_count(st, kat, { kind: key === "$and" ? "and" : "or", nodes: subs }));
    } else if (key.startsWith("$")) {
      throw _fail(kat, `unknown logical operator ${key}`, key, ["$and", "$or"], "negate a condition with $ne or $nin");
    } else if (key === "blocked") {
      if (typeof val !== "boolean") throw _fail(kat, "blocked takes true or false", val, [true, false]);
      nodes.push(_count(st, kat, { kind: "blocked", value: val }));
    } else {
      nodes.push(..._parseCondition(key, _pathKind(key, kat, st.ctx), val, kat, st));
    }
  }
  if (nodes.length === 1) return nodes[0]!;
  return nodes.length === 0 ? { kind: "and", nodes } : _count(st, at, { kind: "and", nodes });
}

function _pathKind(key: string, at: string, ctx: FilterContext): _Kind {
  // own keys only: "constructor" or "__proto__" must read as unknown, not as Object.prototype's
  const k = Object.hasOwn(_KIND, key) ? _KIND[key] : undefined;
  if (k) return k;
  if (key.startsWith("fields.")) {
    const id = key.slice(7);
    if (ctx.fieldIds ? ctx.fieldIds.has(id) : FIELD_KEY_PATTERN.test(id)) return ctx.datePaths?.has(key) ? "date" : "field";
    if (ctx.fieldIds) {
      throw _fail(at, `${JSON.stringify(id)} is not a field of the card types in scope`, key, _validPaths(ctx).filter((p) => p.startsWith("fields.")));
    }
  }
  throw _fail(at, `unknown filter key ${JSON.stringify(key)}`, key, _validPaths(ctx));
}

function _parseCondition(path: string, kind: _Kind, val: unknown, at: string, st: _State): FilterNode[] {
  if (Array.isArray(val)) {
    throw _fail(at, "an array is not a literal", val, ["$in", "$all", "$any"].filter((o) => _OPS[kind].includes(o as CmpOp)),
      `use {"$in": [...]} for "any of"${kind === "tags" || kind === "field" || kind === "date" ? ' or {"$all": [...]} for "has every"' : ""}`);
  }
  if (!_isPlainObject(val)) return [_perDateType(path, "$eq", val, at, st, _count(st, at, { kind: "cmp", path, op: "$eq", value: _known(path, "$eq", _operand(kind, "$eq", val, at, st.ctx, path), at, st.ctx) }))];
  const ops = Object.keys(val);
  if (ops.length === 0) throw _fail(at, "an operator object needs at least one operator", val, _OPS[kind]);
  const out: FilterNode[] = [];
  for (const op of ops) {
    const oat = `${at}.${op}`;
    if (!_OPS[kind].includes(op as CmpOp)) {
      const msg = op.startsWith("$") ? `${op} is not an operator for ${path}` : `operator objects hold only operators; ${JSON.stringify(op)} is not one`;
      throw _fail(oat, msg, op, _OPS[kind]);
    }
    const value = _operand(kind, op as CmpOp, val[op], oat, st.ctx, path);
    if (op === "$contains") _countContains(st, oat, value as string);
    out.push(_perDateType(path, op as CmpOp, val[op], oat, st, _count(st, oat, { kind: "cmp", path, op: op as CmpOp, value: _known(path, op as CmpOp, value, oat, st.ctx) })));
  }
  return out;
}

/**
 * On a path that is a date in some types in scope only (FilterContext.mixedDates): the
 * condition for the date types with the operand in the stored UTC form, OR for the
 * others as written. The types part the cards, so a negation ($ne, $nin) holds too. An
 * operand that converts to itself, or to no time (text a date field cannot hold), needs
 * no split. The added nodes are the parser's own: they do not count toward the caller's limit.
 */
function _perDateType(path: string, op: CmpOp, raw: unknown, at: string, st: _State, asWritten: Extract<FilterNode, { kind: "cmp" }>): FilterNode {
  const dateTypes = st.ctx.mixedDates?.get(path);
  if (!dateTypes || op === "$contains") return asWritten;
  // each value of a list on its own: one that is no time stays as written for every type
  const convert = (v: unknown, written: FilterScalar | FilterScalar[], o: CmpOp): FilterScalar | FilterScalar[] => {
    try {
      return _operand("date", o, v, at);
    } catch {
      return written;
    }
  };
  const written = asWritten.value;
  const notDates: FilterNode = { kind: "cmp", path: "type_id", op: "$nin", value: [...dateTypes] };
  // a range bound that is no time ("tomorrow") bounds only text: a date type's values are
  // times, which the same bound on a date-only path refuses to compare with
  if (_CMP.includes(op) && typeof raw === "string" && raw !== "") {
    try {
      _operand("date", op, raw, at);
    } catch {
      return { kind: "and", nodes: [notDates, asWritten] };
    }
  }
  const converted = Array.isArray(raw) && Array.isArray(written)
    ? raw.map((v, i) => convert(v, written[i] as FilterScalar, "$eq") as FilterScalar)
    : convert(raw, written, op);
  if (JSON.stringify(converted) === JSON.stringify(written)) return asWritten;
  return {
    kind: "or",
    nodes: [
      { kind: "and", nodes: [{ kind: "cmp", path: "type_id", op: "$in", value: [...dateTypes] }, { ...asWritten, value: converted }] },
      { kind: "and", nodes: [notDates, asWritten] },
    ],
  };
}

/**
 * Checks an equality operand against the values the path can hold (FilterContext.knownValues).
 * A known value given in another Unicode form (a decomposed "é") is read as that value, as
 * a write stores it (domain/fields.ts), for every operator.
 */
function _known(path: string, op: CmpOp, given: FilterScalar | FilterScalar[], at: string, ctx: FilterContext): FilterScalar | FilterScalar[] {
  const known = ctx.knownValues && Object.hasOwn(ctx.knownValues, path) ? ctx.knownValues[path] : undefined;
  // (owners are user ids, ASCII: no other form to look for among thousands of users)
  const v = known && path !== "owner" ? _knownForm(known, given) : given;
  // only what must match: excluding a value the workspace lacks ($ne, $nin) is harmless
  if (!known || op === "$ne" || op === "$nin" || op === "$contains" || op.startsWith("$gt") || op.startsWith("$lt")) return v;
  for (const [i, x] of (Array.isArray(v) ? v : [v]).entries()) {
    // the code a write gives for the same value (unknown_tag, unknown_enum; a number or a
    // boolean is of the wrong type there: validation_failed); the member's index in a list operand
    const code = typeof x !== "string" ? "validation_failed" : path === "tags" ? "unknown_tag" : path === "owner" ? "unknown_user" : path.startsWith("fields.") ? "unknown_enum" : "validation_failed";
    // (the registered users, for an owner: as many as ?owner= names)
    const refuse = () => _fail(Array.isArray(v) ? `${at}[${i}]` : at, `${JSON.stringify(x)} is not ${_knownWhat(path)}`, x, path === "owner" ? known.slice(0, 200) : [...known], undefined, code);
    // null matches an unset value; anything else outside the known values (a number or a
    // boolean on an enum too) must be held by a card (a field that was a number before)
    if (x === null || (typeof x === "string" && known.includes(x)) || ctx.held?.(path, x, refuse)) continue;
    throw refuse();
  }
  return v;
}

/** Each string of `v` that is not in `known` but is one of them in composed form (NFC): that one. */
function _knownForm(known: readonly string[], v: FilterScalar | FilterScalar[]): FilterScalar | FilterScalar[] {
  const one = (x: FilterScalar): FilterScalar => typeof x === "string" ? sameText(known, x) ?? x : x;
  return Array.isArray(v) ? v.map(one) : one(v);
}

function _knownWhat(path: string): string {
  if (path === "status") return "a column of this workspace";
  if (path === "type_id") return "a card type of this workspace";
  if (path === "tags") return "in the workspace tag_set (tag_policy is locked)";
  if (path === "owner") return "a registered user and owns no card";
  return `an option of ${path}`;
}

function _operand(kind: _Kind, op: CmpOp, v: unknown, at: string, ctx: FilterContext = {}, path = ""): FilterScalar | FilterScalar[] {
  const x = _operandAsGiven(kind, op, v, at);
  // a tag (of `tags` or a tags field) is looked for in the form a write stores it:
  // tag_set's spelling, else composed (NFC)
  if (kind !== "tags" && !ctx.tagPaths?.has(path)) return x;
  const tagSet = ctx.tagSet ?? [];
  return Array.isArray(x) ? x.map((e) => typeof e === "string" ? storedTag(e, tagSet) : e) : typeof x === "string" ? storedTag(x, tagSet) : x;
}

function _operandAsGiven(kind: _Kind, op: CmpOp, v: unknown, at: string): FilterScalar | FilterScalar[] {
  switch (op) {
    case "$eq": case "$ne": return _scalar(kind, v, at, true);
    case "$has": return _scalar(kind, v, at, false);
    case "$in": case "$nin": case "$all": case "$any": {
      if (!Array.isArray(v)) throw _fail(at, `${op} takes an array`, v);
      if (v.length === 0 && (op === "$all" || op === "$any")) throw _fail(at, `${op} takes a non-empty array`, v);
      if (v.length > MAX_FILTER_LIST) throw _fail(at, `${op} takes at most ${MAX_FILTER_LIST} values`);
      const nullable = op === "$in" || op === "$nin";
      return v.map((e, i) => _scalar(kind, e, `${at}[${i}]`, nullable));
    }
    case "$contains":
      if (typeof v !== "string") throw _fail(at, "$contains takes a string", v);
      return v;
    case "$gt": case "$gte": case "$lt": case "$lte":
      // stored times are whole milliseconds: t >= 410.9 ms is t >= 411, t < 410.9 is t < 411
      if (kind === "time" || (kind === "date" && typeof v === "string" && v !== "")) return _time(v, at, op === "$gte" || op === "$lt" ? Math.ceil : Math.floor);
      if (kind === "field" || kind === "date") {
        if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) return v;
        throw _fail(at, `${op} takes a number or a string`, v);
      }
      return _scalar(kind, v, at, false);
  }
}

/**
 * A timestamp operand in the stored UTC form, rounded to whole milliseconds by `round`.
 * RFC 3339 lets a space stand for the `T`. Anything else that is not a full timestamp
 * (`"2026-01"`) stays a plain string: a prefix bound.
 */
function _time(v: unknown, at: string, round: (x: number) => number): FilterScalar {
  if (typeof v !== "string") throw _fail(at, "this path compares to RFC 3339 timestamps (strings)", v);
  const t = /^\d{4}-\d{2}-\d{2} \d/.test(v) ? `${v.slice(0, 10)}T${v.slice(11)}` : v;
  const ms = parseRfc3339(t);
  if (ms !== undefined) {
    // an offset may take the instant past the years stored times have (toISOString would
    // write "+010000-...", which sorts below every one of them): a string that sorts
    // outside every stored time instead ("-" < "0", "9" < ":"), so no stored time equals
    // it and each compares to it as to that instant (the last one stored is below it)
    const t = round(ms);
    return t < TIME_MIN_MS ? BEFORE_STORED_TIMES : t > TIME_MAX_MS ? AFTER_STORED_TIMES : new Date(t).toISOString();
  }
  // "yesterday" or "2026-13-01" compared as text matched by accident (a take-next filter
  // handed out a done card): only the leading part of a stored timestamp is a prefix bound
  if (!_TIME_PREFIX.test(t)) {
    throw _fail(at, "not a timestamp: give an RFC 3339 timestamp or its leading part", v, undefined, 'for example "2026-01-02T03:04:05Z", "2026-01-02" or "2026-01"; null for "no value"');
  }
  return t;
}

/** Operands for instants before / after every time that can be stored (four-digit years). */
const BEFORE_STORED_TIMES = "-";
const AFTER_STORED_TIMES = ":";

/** The leading parts of a stored timestamp `2026-01-02T03:04:05.000Z`: year, month, day, hour, minute, second. */
const _TIME_PREFIX = /^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01])(T([01]\d|2[0-3])(:[0-5]\d(:[0-5]\d(\.\d{1,3})?)?)?)?)?)?$/;

function _scalar(kind: _Kind, v: unknown, at: string, nullable: boolean): FilterScalar {
  if (v === null) {
    if (nullable) return null;
    throw _fail(at, "null is only allowed with $eq, $ne, $in and $nin", v);
  }
  switch (kind) {
    case "number":
      if (typeof v === "number" && Number.isFinite(v)) return v;
      throw _fail(at, "this path compares to numbers", v);
    case "date":
      // a date field holds timestamps; another value only where a type change left one
      // ("" tests for the empty string, as on any field: {"$ne": ""})
      if (typeof v === "string" && v !== "") return _time(v, at, Math.floor);
      return _scalar("field", v, at, nullable);
    case "field":
      if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) return v;
      throw _fail(at, "values are strings, numbers, booleans or null", v);
    case "time": return _time(v, at, Math.floor);
    default:
      if (typeof v === "string") return v;
      throw _fail(at, "this path compares to strings", v);
  }
}

function _isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === "" || (Array.isArray(v) && v.length === 0);
}

function _scalarEq(v: unknown, x: FilterScalar): boolean {
  return v === x && typeof v === typeof x;
}

function _eq(v: unknown, x: FilterScalar): boolean {
  if (x === null) return _isEmpty(v);
  return _scalarEq(v, x) || (Array.isArray(v) && v.some((e) => _scalarEq(e, x)));
}

function _matchCmp(v: unknown, op: CmpOp, x: FilterScalar | FilterScalar[]): boolean {
  const xs = Array.isArray(x) ? x : [x];
  const one = xs[0] ?? null;
  switch (op) {
    case "$eq": case "$has": return _eq(v, one);
    case "$ne": return !_eq(v, one);
    case "$in": case "$any": return xs.some((e) => _eq(v, e));
    case "$nin": return !xs.some((e) => _eq(v, e));
    case "$all": return xs.every((e) => _eq(v, e));
    case "$contains":
      if (typeof v === "string") return asciiLower(v).includes(asciiLower(one as string));
      return Array.isArray(v) && v.some((e) => _scalarEq(e, one));
    case "$gt": case "$gte": case "$lt": case "$lte": {
      let c: number;
      if (typeof v === "number" && typeof one === "number") c = v - one;
      else if (typeof v === "string" && typeof one === "string") c = compareCodePoints(v, one);
      else return false;
      return op === "$gt" ? c > 0 : op === "$gte" ? c >= 0 : op === "$lt" ? c < 0 : c <= 0;
    }
  }
}
