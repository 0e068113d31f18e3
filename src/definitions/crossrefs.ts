/**
 * Rules across definition files: file names match ids, ids are unique, and every
 * reference (columns, card types, fields, link types, boards) names something
 * that exists. Values may have failed their shape check, so every access is
 * guarded. A file that could not be parsed at all still counts as existing, so
 * references to it are not reported a second time.
 */
import type { CardsError } from "../domain/errors.ts";
import { parseSort } from "../domain/sort.ts";
import { parseFilter, resolveMe, type FilterNode } from "../domain/filters.ts";
import { datePaths, enumOptionsByPath, type FilterValueField } from "../domain/filter-values.ts";
import { checkFieldDefs, checkFieldValue, checkRef, sameInAnotherForm, type FieldContext } from "./fielddefs.ts";
import type { PathKey, Problems, Report } from "./problems.ts";
import { isPlainObject } from "./schemas.ts";

/** One definition file after parsing: `value` is undefined when it could not be parsed. */
export interface Parsed { file: string; nameId: string; value: unknown }

export interface ParsedSet {
  workspace?: Parsed;
  cardTypes: Parsed[];
  boards: Parsed[];
  views: Parsed[];
  extensions?: Parsed;
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj => (isPlainObject(x) ? x : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const strs = (x: unknown): string[] => arr(x).filter((s): s is string => typeof s === "string");
const ids = (x: unknown): string[] => arr(x).map((o) => obj(o).id).filter((s): s is string => typeof s === "string");
const q = (x: unknown): string => JSON.stringify(x) ?? String(x);
const idOf = (p: Parsed): string => (typeof obj(p.value).id === "string" ? (obj(p.value).id as string) : p.nameId);
const uniq = (xs: string[]): string[] => [...new Set(xs)];

/** Field ids, types and (enum) options of a card type. */
type FieldsOf = Map<string, FilterValueField[]>;

interface Ctx {
  problems: Problems;
  /** undefined when workspace.json is missing or unreadable: column checks are skipped */
  columns?: string[];
  typeIds: string[];
  boardIds: string[];
  /** each readable board's card types (known ones only) */
  boardTypes: Map<string, string[]>;
  fieldsOf: FieldsOf;
  field: FieldContext;
}

function checkNameMatchesId(p: Parsed, report: Report): void {
  const id = obj(p.value).id;
  if (typeof id === "string" && id !== p.nameId) {
    report(["id"], `id ${q(id)} does not match the file name ${q(`${p.nameId}.json`)}; rename the file or change the id`);
  }
}

/** Reports every repeat of a value in `values` (ids of a list of objects or plain strings). */
function checkUnique(list: unknown, at: PathKey[], what: string, report: Report, byId: boolean): void {
  const seen = new Map<string, string>();
  arr(list).forEach((item, i) => {
    const val = byId ? obj(item).id : item;
    if (typeof val !== "string") return;
    const first = seen.get(val.normalize("NFC"));
    if (first !== undefined) report(byId ? [...at, i, "id"] : [...at, i], `duplicate ${what} ${q(val)}${first === val ? "" : sameInAnotherForm(first)}`);
    else seen.set(val.normalize("NFC"), val);
  });
}

/** Every string of a list must be in `known` (skipped when known is undefined). */
function checkAll(list: unknown, known: readonly string[] | undefined, what: string, at: PathKey[], report: Report): void {
  arr(list).forEach((x, i) => checkRef(x, known, what, [...at, i], report));
}

function checkWorkspace(p: Parsed, ctx: Ctx): void {
  const report = ctx.problems.for(p.file);
  const ws = obj(p.value);
  checkUnique(ws.columns, ["columns"], "column id", report, true);
  checkUnique(ws.tag_set, ["tag_set"], "tag", report, false);
  checkUnique(ws.link_types, ["link_types"], "link type id", report, true);
  checkUnique(ws.users, ["users"], "user id", report, true);
  arr(ws.link_types).forEach((lt, i) => {
    checkAll(obj(lt).source_types, ctx.typeIds, "card type", ["link_types", i, "source_types"], report);
    checkAll(obj(lt).target_types, ctx.typeIds, "card type", ["link_types", i, "target_types"], report);
  });
  const settings = obj(ws.settings);
  if (typeof settings.default_board === "string" && !ctx.boardIds.includes(settings.default_board)) {
    report(["settings", "default_board"], `default_board ${q(settings.default_board)} names no board in definitions/boards/`, ctx.boardIds);
  }
}

function checkCardType(p: Parsed, ctx: Ctx): void {
  const report = ctx.problems.for(p.file);
  const t = obj(p.value);
  checkNameMatchesId(p, report);
  checkFieldDefs(t.fields, ["fields"], report, ctx.field);
  checkAll(t.allowed_columns, ctx.columns, "workspace column", ["allowed_columns"], report);
  checkUnique(t.allowed_columns, ["allowed_columns"], "column", report, false);
  const fieldIds = ids(t.fields);
  checkAll(t.searchable_fields, fieldIds, `field of card type ${q(idOf(p))}`, ["searchable_fields"], report);
  checkUnique(t.searchable_fields, ["searchable_fields"], "field", report, false);
  if (!isPlainObject(t.migrations)) return;
  const version = typeof t.schema_version === "number" ? t.schema_version : 1;
  for (const [key, m] of Object.entries(t.migrations)) {
    const at: PathKey[] = ["migrations", key];
    // canonical digits only: "02" would pass as 2 but be looked up as "2" and never apply
    const n = /^[1-9][0-9]*$/.test(key) ? Number(key) : NaN;
    if (!(n >= 2 && n <= version)) {
      report(at, version < 2
        ? `migration key ${q(key)} is not allowed: the type is at schema_version ${version}, so it has no migrations yet`
        : `migration key ${q(key)} must be a version from "2" to "${version}" (the type's schema_version)`);
    }
    const from = obj(m).from;
    if (typeof from === "number" && n >= 2 && from >= n) {
      report([...at, "from"], `from (${from}) must be lower than the version it migrates to (${key})`);
    }
    const defaults = obj(m).field_defaults;
    if (!isPlainObject(defaults)) continue;
    const defs = arr(t.fields).map(obj);
    for (const [fid, value] of Object.entries(defaults)) {
      const def = defs.find((d) => d.id === fid);
      if (!def) {
        // an earlier version's default for a field removed since is history: an upgrade
        // through it drops the field anyway (removing a field must not mean editing the past)
        if (n < version) continue;
        report([...at, "field_defaults", fid], `${q(fid)} is not a field of card type ${q(idOf(p))}`, fieldIds);
        continue;
      }
      const bad = checkFieldValue(def, value, ctx.field);
      if (bad) report([...at, "field_defaults", fid], `default for ${q(fid)} ${bad.message}`, bad.valid_options);
    }
  }
}

function checkPresentation(pres: Obj, boardTypes: string[], ctx: Ctx, report: Report): void {
  const fieldsOfBoard = boardTypes.flatMap((t) => ctx.fieldsOf.get(t) ?? []);
  const fieldsKnown = boardTypes.every((t) => ctx.fieldsOf.has(t));
  if (isPlainObject(pres.card_preview)) {
    for (const [typeId, fields] of Object.entries(pres.card_preview)) {
      const at: PathKey[] = ["presentation", "card_preview", typeId];
      if (!boardTypes.includes(typeId)) {
        report(at, `${q(typeId)} is not a card type of this board`, boardTypes);
        continue;
      }
      const known = ctx.fieldsOf.get(typeId)?.map((f) => f.id);
      checkAll(fields, known, `field of card type ${q(typeId)}`, at, report);
    }
  }
  if (typeof pres.style_field === "string" && fieldsKnown) {
    const enums = uniq(fieldsOfBoard.filter((f) => f.type === "enum").map((f) => f.id));
    if (!enums.includes(pres.style_field)) {
      const other = fieldsOfBoard.find((f) => f.id === pres.style_field);
      report(["presentation", "style_field"], other
        ? `style_field ${q(pres.style_field)} is a ${String(other.type)} field; it must name an enum field`
        : `style_field ${q(pres.style_field)} is not a field of this board's card types; it must name an enum field`, enums);
    }
  }
  if (typeof pres.lane_sort === "string" && fieldsKnown) {
    try {
      parseSort(pres.lane_sort, new Set(fieldsOfBoard.map((f) => f.id)));
    } catch (e) {
      report(["presentation", "lane_sort"],
        `${q(pres.lane_sort)} is not a sort key: use created_at, updated_at, title or fields.<id> of a field of this board's card types, with an optional leading "-" for descending`,
        (e as CardsError).extra?.valid_options);
    }
  }
}

function checkBoard(p: Parsed, ctx: Ctx): void {
  const report = ctx.problems.for(p.file);
  const b = obj(p.value);
  checkNameMatchesId(p, report);
  checkAll(b.columns, ctx.columns, "workspace column", ["columns"], report);
  checkUnique(b.columns, ["columns"], "column", report, false);
  checkAll(b.card_type_ids, ctx.typeIds, "card type", ["card_type_ids"], report);
  checkUnique(b.card_type_ids, ["card_type_ids"], "card type", report, false);
  // the board's columns that exist: one the workspace lacks is reported above, and is no
  // valid option for transitions, limits or monitors either
  const cols = strs(b.columns).filter((c) => !ctx.columns || ctx.columns.includes(c));
  const boardCol = "column of this board";
  if (isPlainObject(b.transitions)) {
    for (const [from, to] of Object.entries(b.transitions)) {
      checkRef(from, cols, boardCol, ["transitions", from], report);
      checkAll(to, cols, boardCol, ["transitions", from], report);
    }
  }
  if (isPlainObject(b.wip_limits)) for (const col of Object.keys(b.wip_limits)) checkRef(col, cols, boardCol, ["wip_limits", col], report);
  const mon = obj(b.monitors);
  checkAll(mon.alert_when_empty, cols, boardCol, ["monitors", "alert_when_empty"], report);
  if (isPlainObject(mon.max_time_in_status)) {
    for (const col of Object.keys(mon.max_time_in_status)) checkRef(col, cols, boardCol, ["monitors", "max_time_in_status", col], report);
  }
  const boardTypes = strs(b.card_type_ids).filter((t) => ctx.typeIds.includes(t));
  checkPresentation(obj(b.presentation), boardTypes, ctx, report);
  const fieldIds = fieldIdsOf(boardTypes, ctx);
  // a typo'd column, card type, enum option or locked tag would silently empty a lane or a chip
  const knownValues = ctx.columns ? knownFilterValues(boardTypes, ctx) : undefined;
  const userPaths = boardTypes.flatMap((t) => (ctx.fieldsOf.get(t) ?? []).filter((f) => f.type === "user").map((f) => `fields.${f.id}`));
  const dates = datePaths(boardTypes.map((t) => ctx.fieldsOf.get(t) ?? []));
  checkFilter(b.default_filter, ["default_filter"], fieldIds, report, knownValues, userPaths, dates);
  const saved = obj(obj(b.presentation).filters);
  for (const [name, f] of Object.entries(saved)) checkFilter(f, ["presentation", "filters", name], fieldIds, report, knownValues, undefined, dates);
}

/**
 * A board's transitions apply to the card types it governs (docs/decisions.md, "Governing
 * board": the default board when it shows the type, else the first board by id). A graph
 * on a board that governs none of its types is never checked: a problem, not a silent no-op.
 */
function checkDeadTransitions(boards: Parsed[], defaultBoard: string | undefined, wsEnforces: boolean, ctx: Ctx): void {
  const shown = boards.filter((p) => p.value !== undefined).map((p) => ({ p, id: idOf(p), types: strs(obj(p.value).card_type_ids) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const governing = (type: string) => shown.find((b) => b.id === defaultBoard && b.types.includes(type)) ?? shown.find((b) => b.types.includes(type));
  for (const b of shown) {
    const t = obj(b.p.value).transitions;
    const graph = isPlainObject(t) && Object.keys(t).length > 0;
    const enforces = (x: { p: Parsed }) => obj(obj(x.p.value).settings).enforce_transitions === true;
    if ((!graph && !enforces(b)) || b.types.length === 0) continue;
    const others = b.types.map((type) => ({ type, by: governing(type)?.id })).filter((g) => g.by !== b.id);
    if (others.length < b.types.length) continue;
    // a flag the governing boards (or the workspace) already set is redundant, not misleading
    const enforce = enforces(b) && !wsEnforces && !others.every((g) => { const by = shown.find((x) => x.id === g.by); return by !== undefined && enforces(by); });
    const by = uniq(others.map((g) => g.by ?? "")).join(", ");
    const why = `the moves of ${others.map((g) => g.type).join(", ")} cards follow board ${by} (the default board when it shows a type, else the first board by id)`;
    if (graph) ctx.problems.for(b.p.file)(["transitions"], `these transitions are never checked: ${why}; put the graph there, or make this board the default`);
    if (enforce) ctx.problems.for(b.p.file)(["settings", "enforce_transitions"], `never applies: ${why}; set it on board ${by}, or make this board the default`);
  }
}

/** The field ids of these card types, or undefined when a type's file could not be read. */
function fieldIdsOf(types: string[], ctx: Ctx): Set<string> | undefined {
  return types.every((t) => ctx.fieldsOf.has(t)) ? new Set(types.flatMap((t) => (ctx.fieldsOf.get(t) ?? []).map((f) => f.id))) : undefined;
}

/** The values a board's filters may test for equality: the rule callers' filters meet (domain/filter-values.ts). */
function knownFilterValues(boardTypes: string[], ctx: Ctx): Record<string, string[]> {
  const known: Record<string, string[]> = { status: ctx.columns ?? [], type_id: ctx.typeIds };
  if (ctx.field.lockedTags) known.tags = [...ctx.field.lockedTags];
  // a type whose file could not be read has unknown fields: its enums cannot be judged
  if (boardTypes.every((t) => ctx.fieldsOf.has(t))) Object.assign(known, enumOptionsByPath(boardTypes.map((t) => ctx.fieldsOf.get(t)!)));
  return known;
}

/**
 * A filter in a definition must parse with the grammar of docs/filters.md. `noMe`: the
 * user paths where "me" is refused (a board's default_filter scopes the board for every
 * viewer and for its WIP counts and monitors, which have no viewer).
 */
function checkFilter(raw: unknown, at: PathKey[], fieldIds: Set<string> | undefined, report: Report, knownValues?: Record<string, string[]>, noMe?: string[], datePaths?: Set<string>): void {
  if (!isPlainObject(raw)) return; // the shape check already reported it
  const ctx = { ...(fieldIds ? { fieldIds } : {}), ...(knownValues ? { knownValues } : {}), ...(datePaths ? { datePaths } : {}) };
  /** a grammar error, reported at the top-level key it is under (the position inside it in the message) */
  const fail = (e: unknown, where: PathKey[]): void => {
    const err = e as CardsError;
    const field = typeof err.extra?.field === "string" ? err.extra.field : undefined;
    const inside = field !== undefined && field !== where.join(".") ? ` (at ${field})` : "";
    report(where, `${err.message}${inside}`, err.extra?.valid_options);
  };
  const meRefused = (node: FilterNode): boolean => {
    if (!noMe) return false;
    try {
      resolveMe(node, undefined, noMe);
      return false;
    } catch {
      report(at, `"me" is for saved filters (presentation.filters), not default_filter: the default filter scopes the board for every viewer, and for its WIP counts and monitors, which have none`);
      return true;
    }
  };
  // every top-level condition on its own first: each wrong one is a problem, not only the first
  let failed = false;
  let meSaid = false;
  for (const k of Object.keys(raw)) {
    try {
      const one = parseFilter({ [k]: raw[k] }, ctx, at.join("."));
      if (!meSaid) meSaid = meRefused(one);
    } catch (e) {
      failed = true;
      fail(e, [...at, k]);
    }
  }
  if (failed || meSaid) return;
  try {
    parseFilter(raw, ctx, at.join("."));
  } catch (e) {
    fail(e, at);
  }
}

function checkView(p: Parsed, ctx: Ctx): void {
  const report = ctx.problems.for(p.file);
  checkNameMatchesId(p, report);
  const boardId = obj(p.value).board_id;
  checkRef(boardId, ctx.boardIds, "board", ["board_id"], report);
  // a view shows its board's cards: its filter names that board's fields and values;
  // without a board, the workspace's (a column, a card type, a locked tag: not syntax alone)
  const types = typeof boardId === "string" ? ctx.boardTypes.get(boardId) : boardId === undefined ? ctx.typeIds : undefined;
  checkFilter(obj(p.value).filter, ["filter"], types ? fieldIdsOf(types, ctx) : undefined, report, types && ctx.columns ? knownFilterValues(types, ctx) : undefined, undefined, types ? datePaths(types.map((t) => ctx.fieldsOf.get(t) ?? [])) : undefined);
}

const HOOK_ONLY = ["on", "filter"];
const SERVICE_ONLY = ["autostart", "restart_policy"];

function checkExtensions(p: Parsed, ctx: Ctx): void {
  const report = ctx.problems.for(p.file);
  checkUnique(p.value, [], "extension id", report, true);
  arr(p.value).forEach((x, i) => {
    const e = obj(x);
    if (typeof e.kind === "string") {
      for (const key of HOOK_ONLY) if (key in e && e.kind !== "hook") report([i, key], `${key} is only used by hook extensions, not ${e.kind}`);
      for (const key of SERVICE_ONLY) if (key in e && e.kind !== "service") report([i, key], `${key} is only used by service extensions, not ${e.kind}`);
    }
    const f = obj(e.filter);
    checkRef(f.board_id, ctx.boardIds, "board", [i, "filter", "board_id"], report);
    checkRef(f.type_id, ctx.typeIds, "card type", [i, "filter", "type_id"], report);
    checkRef(f.to_status, ctx.columns, "workspace column", [i, "filter", "to_status"], report);
    checkRef(f.from_status, ctx.columns, "workspace column", [i, "filter", "from_status"], report);
  });
}

/** Runs every cross-file rule over a parsed set, reporting into `problems`. */
/**
 * An enum option two card types share (one field id) is spelled in one Unicode form: a
 * filter over both types reads an operand as one spelling (domain/filters.ts), so the
 * cards holding the other were found by none.
 */
function checkOptionSpellings(types: Parsed[], ctx: Ctx): void {
  const first = new Map<string, { spelling: string; typeId: string }>();
  for (const p of types) {
    if (p.value === undefined) continue;
    arr(obj(p.value).fields).map(obj).forEach((f, i) => {
      if (f.type !== "enum" || typeof f.id !== "string") return;
      arr(f.options).forEach((o, j) => {
        if (typeof o !== "string") return;
        const key = `${f.id}\u0000${o.normalize("NFC")}`;
        const seen = first.get(key);
        if (!seen) first.set(key, { spelling: o, typeId: idOf(p) });
        // (within one type, a second spelling is a duplicate option: fielddefs.ts says so)
        else if (seen.spelling !== o && seen.typeId !== idOf(p)) {
          ctx.problems.for(p.file)(["fields", i, "options", j], `option ${q(o)} of field ${q(f.id)} is ${q(seen.spelling)} of card type ${q(seen.typeId)} in another Unicode form (composed and decomposed accents look alike); spell it as there`);
        }
      });
    });
  }
}

export function checkCrossRefs(set: ParsedSet, problems: Problems): void {
  const ws = set.workspace?.value === undefined ? undefined : obj(set.workspace.value);
  const typeIds = uniq(set.cardTypes.flatMap((p) => [p.nameId, idOf(p)])).sort();
  const fieldsOf: FieldsOf = new Map();
  for (const p of set.cardTypes) {
    if (p.value === undefined) continue; // unreadable: its fields are unknown, so field references are not checked
    const fields = arr(obj(p.value).fields).map(obj).filter((f) => typeof f.id === "string")
      .map((f) => ({ id: f.id as string, type: f.type, options: f.options }));
    fieldsOf.set(idOf(p), fields);
  }
  const settings = obj(ws?.settings);
  // a workspace list that is not a list is its own problem: references to it cannot be
  // judged (a `"columns": "todo"` gave fifteen "not a known workspace column" more)
  const listOf = (x: unknown): unknown[] | undefined => (Array.isArray(x) ? x : undefined);
  const ctx: Ctx = {
    problems,
    // a column written as a bare id is its own problem; what names it is not (nine more said "not a known column")
    columns: ws && listOf(ws.columns) ? arr(ws.columns).map((c) => (typeof c === "string" ? c : obj(c).id)).filter((s): s is string => typeof s === "string") : undefined,
    typeIds,
    boardIds: uniq(set.boards.flatMap((p) => [p.nameId, idOf(p)])).sort(),
    boardTypes: new Map(set.boards.filter((p) => p.value !== undefined).map((p) => [idOf(p), strs(obj(p.value).card_type_ids).filter((t) => typeIds.includes(t))])),
    fieldsOf,
    field: {
      lockedTags: ws && settings.tag_policy === "locked" && (ws.tag_set === undefined || listOf(ws.tag_set)) ? strs(ws.tag_set) : undefined,
      cardTypeIds: typeIds,
      linkTypeIds: ws && (ws.link_types === undefined || listOf(ws.link_types)) ? ids(ws.link_types) : undefined,
    },
  };
  if (set.workspace && ws) checkWorkspace(set.workspace, ctx);
  for (const p of set.cardTypes) if (p.value !== undefined) checkCardType(p, ctx);
  checkOptionSpellings(set.cardTypes, ctx);
  for (const p of set.boards) if (p.value !== undefined) checkBoard(p, ctx);
  checkDeadTransitions(set.boards, typeof settings.default_board === "string" ? settings.default_board : undefined, settings.enforce_transitions === true, ctx);
  for (const p of set.views) if (p.value !== undefined) checkView(p, ctx);
  if (set.extensions && set.extensions.value !== undefined) checkExtensions(set.extensions, ctx);
}
