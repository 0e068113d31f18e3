/**
 * GET /cards: parameters (strings from any surface) to a store query, board scoping,
 * sort and keyset cursors. Wrong types are 400 bad_request; bad sort keys are 422.
 */
import { CardsError, badRequest } from "../domain/errors.ts";
import { storedTag } from "../domain/text.ts";
import { searchTermCount } from "../domain/search-text.ts";
import { parseSort } from "../domain/sort.ts";
import { andFilters, parseFilter, resolveMe, type FilterContext, type FilterNode } from "../domain/filters.ts";
import { datePaths, enumOptionsByPath, mixedDatePaths, tagPaths } from "../domain/filter-values.ts";
import type { Board, Card, Definitions } from "../domain/types.ts";
import type { CardListPage, ListQuery } from "../store/port.ts";
import type { Service } from "./service.ts";
import { scopeOf } from "./lanes.ts";

export const LIST_DEFAULT_LIMIT = 50;
export const LIST_MAX_LIMIT = 200;

export type ListParams = Record<string, string | undefined>;

/** Limits of a search (`q`): docs/limits.md. */
export const MAX_Q_WORDS = 32;
export const MAX_Q_CHARS = 1000;

const LIST_PARAMS = ["board_id", "type_id", "status", "owner", "tag", "blocked", "has_link", "link_target", "q", "sort", "include", "cursor", "limit", "filter"];

/** `next_cursor` is absent when there is no next page, and with a custom sort (SPEC). */
export interface CardPage { items: Card[]; next_cursor?: string }

/**
 * One page of cards. `opts.filter` is a filter object (docs/filters.md) for callers that
 * may pass one (the tool server's list); the HTTP list takes only a saved filter's name.
 * A search (`q`) on a server answers asynchronously once the index has caught up.
 */
export function listCards(svc: Service, params: ListParams, viewer?: string, opts: { filter?: unknown } = {}): CardPage | Promise<CardPage> {
  const q = toListQuery(svc, params, viewer);
  let checked: void | Promise<void> = undefined;
  if (opts.filter !== undefined) {
    const scope = q.typeIds ?? (params.board_id !== undefined ? svc.board(params.board_id).card_type_ids : undefined);
    const held: HeldCheck[] = [];
    const node = resolveMe(parseFilter(opts.filter, filterContextOf(svc, scope, held, viewer), "filter"), viewer, userFieldPaths(svc, scope));
    q.filter = q.filter ? andFilters(q.filter, node) : node;
    checked = verifyHeld(svc, held);
  }
  const toPage = (page: CardListPage): CardPage => {
    // the first page pins the event id its order was read at; later pages keep that order
    const asOf = q.asOfEvent ?? Number(page.lastEventId ?? 0);
    const more = page.items.length > q.limit;
    const items = more ? page.items.slice(0, q.limit) : page.items;
    const last = items.length ? items[items.length - 1] : undefined;
    return more && !q.sort && last ? { items, next_cursor: encodeCursor(page.keys[items.length - 1]!, last.id, asOf) } : { items };
  };
  // a costly read may run on the store's read thread (a server), so it answers later
  const read = (): CardPage | Promise<CardPage> => {
    const page = svc.store.readPage({ ...q, limit: q.limit + 1 });
    return page instanceof Promise ? page.then(toPage) : toPage(page);
  };
  // a search waits for the index to cover every committed write (a server: asynchronously)
  const search = (): CardPage | Promise<CardPage> => {
    const ready = q.q !== undefined ? svc.store.prepareSearch() : undefined;
    return ready ? ready.then(read) : read();
  };
  return checked ? checked.then(search) : search();
}

/** GET /boards/{id}/counts: a board's cards per column (every column, 0 included). */
export interface BoardCounts { board_id: string; counts: Record<string, number>; total: number }

/** The parameters of GET /cards that narrow which cards a count covers (no status, page or order). */
const COUNT_PARAMS = ["type_id", "owner", "tag", "blocked", "has_link", "link_target", "q", "filter"];

/**
 * How many cards a board holds per column, within its scope (card types, columns,
 * default_filter) and narrowed as GET /cards narrows (a saved filter, q, owner, ...).
 * Exact, unlike a page: a person's board shows a lane's size without reading it whole.
 */
export function countBoardCards(svc: Service, boardId: string, params: ListParams, viewer?: string): BoardCounts | Promise<BoardCounts> {
  for (const k of Object.keys(params)) {
    if (!COUNT_PARAMS.includes(k)) throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: COUNT_PARAMS, ...(k === "status" ? { hint: "counts come per column already" } : {}) });
  }
  const board = svc.board(boardId);
  const q = toListQuery(svc, { ...params, board_id: board.id }, viewer);
  const toCounts = (found: Record<string, number>): BoardCounts => {
    const counts: Record<string, number> = {};
    let total = 0;
    for (const column of board.columns) total += counts[column] = found[column] ?? 0;
    return { board_id: board.id, counts, total };
  };
  const read = (): BoardCounts | Promise<BoardCounts> => {
    const found = svc.store.readCounts(q);
    return found instanceof Promise ? found.then(toCounts) : toCounts(found);
  };
  const ready = q.q !== undefined ? svc.store.prepareSearch() : undefined;
  return ready ? ready.then(read) : read();
}

export function toListQuery(svc: Service, p: ListParams, viewer?: string): ListQuery {
  for (const k of Object.keys(p)) {
    if (!LIST_PARAMS.includes(k)) throw badRequest(`unknown query parameter ${JSON.stringify(k)}`, { field: k, valid_options: LIST_PARAMS });
  }
  const q: ListQuery = { limit: parseLimit(p.limit, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT) };
  const filters: FilterNode[] = [];
  if (p.filter !== undefined && p.filter.trim().startsWith("{")) {
    throw badRequest("filter here names a board's saved filter, not a filter expression", {
      field: "filter", value: p.filter,
      hint: "list with status, owner, type_id, blocked, q and sort (CLI: --status, --owner, --type, --blocked, --q, --sort); a filter expression goes to take-next (--filter) or the tool server's list_cards; or save it in a board's presentation.filters",
    });
  }
  if (p.board_id !== undefined) {
    const board = svc.board(p.board_id);
    filters.push(scopeOf(board, svc.defs));
    if (p.filter !== undefined) filters.push(savedFilter(board, svc.defs, p.filter, viewer, userFieldPaths(svc, board.card_type_ids)));
  } else if (p.filter !== undefined) {
    const boards = [...svc.defs.boards.values()].filter((b) => Object.hasOwn(b.presentation?.filters ?? {}, p.filter!)).map((b) => b.id)
      .sort((a, b) => Number(b === svc.defs.defaultBoardId) - Number(a === svc.defs.defaultBoardId));
    throw badRequest("filter names a saved filter of a board: give board_id too", {
      field: "filter", value: p.filter,
      hint: boards.length
        ? `boards saving a filter ${JSON.stringify(p.filter)}: ${boards.join(", ")} (GET /cards?board_id=${boards[0]}&filter=${encodeURIComponent(p.filter)}; CLI: --board ${boards[0]} --filter ${p.filter})`
        : `no board saves a filter ${JSON.stringify(p.filter)}: GET /boards/{id} lists a board's presentation.filters (CLI: cards boards get ID)`,
    });
  }
  // a later page was checked with the first
  if (p.tag !== undefined) filters.push(tagParam(svc, p.tag, p.cursor === undefined));
  if (filters.length) q.filter = andFilters(...filters);
  if (p.type_id !== undefined) q.typeIds = known(svc, "type_id", [...new Set(csv(p.type_id))]);
  if (p.status !== undefined) q.statuses = known(svc, "status", [...new Set(csv(p.status))]);
  if (p.owner === "") {
    // an empty owner matched no card at all: say how to ask for unowned ones
    throw badRequest("owner must name a user (or me)", { field: "owner", value: "", hint: 'unowned cards: a board\'s saved filter holding {"owner": null} (filter=NAME&board_id=B), or take-next with dry_run for the next one' });
  }
  // a later page was checked with the first
  if (p.owner !== undefined) q.owner = ownerParam(svc, p.owner, viewer, p.cursor === undefined);
  if (p.blocked !== undefined) q.blocked = parseBool(p.blocked, "blocked");
  // a later page was checked with the first
  if (p.has_link !== undefined) q.hasLink = p.cursor !== undefined ? p.has_link : knownLinkType(svc, p.has_link);
  if (p.link_target !== undefined) q.linkTarget = p.link_target;
  if (p.q !== undefined && p.q.trim() !== "") {
    // each word is one full-text term: a query of thousands held the request thread
    // (a run of Chinese or Thai is a term a character: domain/search-text.ts)
    if (p.q.length > MAX_Q_CHARS || p.q.trim().split(/\s+/).length > MAX_Q_WORDS || searchTermCount(p.q) > MAX_Q_WORDS) {
      throw badRequest(`q takes at most ${MAX_Q_WORDS} words (a character of Chinese, Japanese or Thai is one) and ${MAX_Q_CHARS} characters`, { field: "q", hint: "search for the few words that matter" });
    }
    q.q = p.q;
  }
  if (p.include !== undefined) {
    for (const part of csv(p.include)) {
      if (part === "links") q.includeLinks = true;
      else if (part === "comments") q.includeComments = true;
      else throw new CardsError("validation_failed", `include: unknown part ${JSON.stringify(part)}`, { field: "include", value: part, valid_options: ["links", "comments"] });
    }
  }
  if (p.sort !== undefined) {
    if (p.cursor !== undefined) {
      throw new CardsError("validation_failed", "sort and cursor cannot be combined: a custom sort returns one page", { field: "sort" });
    }
    q.sort = parseSort(p.sort, fieldIdsOf(svc));
  }
  if (p.cursor !== undefined) {
    const c = decodeCursor(p.cursor);
    q.after = { updated_at: c.updated_at, id: c.id };
    q.asOfEvent = c.asOf;
  }
  return q;
}

/** The hard scope of a board: its card types AND its default_filter. `defs`: the set the board belongs to. */
export function boardScope(board: Board, defs: Definitions): FilterNode {
  const byType = parseFilter({ type_id: { $in: board.card_type_ids } });
  return board.default_filter ? andFilters(byType, parseFilter(board.default_filter, boardFilterContext(board, defs), "default_filter")) : byType;
}

/** What a board's own filters are read with: its types' date fields (checked at load, so no more). */
function boardFilterContext(board: Board, defs: Definitions): FilterContext {
  const types = board.card_type_ids.flatMap((t) => { const type = defs.cardTypes.get(t); return type ? [type] : []; });
  const fields = types.map((t) => t.fields);
  return { datePaths: datePaths(fields), mixedDates: mixedDatePaths(types), tagSet: defs.workspace.tag_set, tagPaths: tagPaths(fields) };
}

function savedFilter(board: Board, defs: Definitions, name: string, viewer: string | undefined, userPaths: Iterable<string>): FilterNode {
  const saved = board.presentation?.filters ?? {};
  const raw = Object.hasOwn(saved, name) ? saved[name] : undefined; // `constructor` is no saved filter
  if (!raw) {
    throw new CardsError("validation_failed", `board ${board.id} has no saved filter ${JSON.stringify(name)}`, { field: "filter", value: name, valid_options: Object.keys(saved) });
  }
  return resolveMe(parseFilter(raw, boardFilterContext(board, defs), `presentation.filters.${name}`), viewer, userPaths);
}

/** The values `status` and `type_id` can be compared with: the workspace's columns and card types. */
function knownValuesOf(svc: Service): Record<string, string[]> {
  return { status: svc.defs.workspace.columns.map((c) => c.id), type_id: [...svc.defs.cardTypes.keys()] };
}

/**
 * What a caller's filter is checked against, for the card types in scope (all without
 * one): the field ids, and the values an equality test may name (columns, card types,
 * the tag_set under a locked tag policy, each enum field's options where every type in
 * scope that has the field makes it an enum). A value outside them that cards still
 * hold is allowed, so those cards can be found.
 */
export function filterContextOf(svc: Service, typeIds: readonly string[] | undefined, held: HeldCheck[] | "checked", viewer?: string): FilterContext {
  const known: Record<string, string[]> = knownValuesOf(svc);
  const { workspace } = svc.defs;
  if (workspace.settings.tag_policy === "locked") known.tags = [...workspace.tag_set];
  // an owner is a registered user, the viewer ("me"), or an actor that owns cards (owners
  // need not be registered: take-next skips the registry), as in ?owner=
  known.owner = [...new Set([...svc.store.listUsers().map((u) => u.id), "me", ...(viewer ? [viewer] : [])])];
  const inScope = [...svc.defs.cardTypes.values()].filter((t) => !typeIds || typeIds.includes(t.id));
  Object.assign(known, enumOptionsByPath(inScope.map((t) => t.fields)));
  return {
    fieldIds: fieldIdsOf(svc, typeIds),
    datePaths: datePaths(inScope.map((t) => t.fields)),
    mixedDates: mixedDatePaths(inScope),
    tagSet: workspace.tag_set,
    tagPaths: tagPaths(inScope.map((t) => t.fields)),
    knownValues: known,
    // each look-up may read every card in scope: a list of many dropped values is looked
    // up in part (the rest refused); "checked": the caller looked them up already
    held: held === "checked" ? () => true : (path, value, refuse) => {
      // an owner is looked up among all cards, as ?owner= is (an actor owning cards of
      // another type is no typo), through the owner index: its own, larger allowance
      const owner = path === "owner";
      const max = owner ? MAX_OWNER_LOOKUPS : MAX_HELD_LOOKUPS;
      if (held.filter((h) => (h.path === "owner") === owner).length < max) return held.push({ path, value, ...(owner ? {} : { typeIds }), refuse }) > 0;
      const e = refuse() as CardsError;
      throw new CardsError("validation_failed", `a filter may name at most ${max} ${owner ? "owners" : "values"} outside the known ones (each is looked up among the cards): ${e.message}`, e.extra);
    },
  };
}

/** How many values outside a path's known ones a filter may name (each is looked up). */
const MAX_HELD_LOOKUPS = 16;
/** How many unregistered owners a filter may name (each one probe of the owner index). */
const MAX_OWNER_LOOKUPS = 100;

/** A value outside a path's known ones, to look up among the cards in scope: refused when none holds it. */
export interface HeldCheck { path: string; value: string | number | boolean; typeIds?: readonly string[]; refuse: () => Error }

/**
 * Looks up the values a filter names outside the known ones (filterContextOf): each
 * must be held by a card in scope. A server reads them on its read thread (each may read
 * every card), so this may answer later; the first value no card holds is refused.
 */
export function verifyHeld(svc: Service, checks: readonly HeldCheck[]): void | Promise<void> {
  let chain: Promise<void> | undefined;
  for (const c of checks) {
    const look = (): void | Promise<void> => {
      const page = svc.store.readPage({ filter: parseFilter({ [c.path]: c.value }), ...(c.typeIds ? { typeIds: [...c.typeIds] } : {}), limit: 1 });
      const judge = (p: CardListPage): void => { if (p.items.length === 0) throw c.refuse(); };
      return page instanceof Promise ? page.then(judge) : judge(page);
    };
    if (chain) chain = chain.then(look);
    else {
      const r = look();
      if (r instanceof Promise) chain = r;
    }
  }
  return chain;
}

/**
 * An `owner` (or `actor`) query parameter: "me" is the viewer. With `check`, a name other
 * than the viewer's must be a registered user or an actor that owns cards (owners need not
 * be registered); anything else is a typo that would read as "nothing assigned".
 */
export function ownerParam(svc: Service, owner: string, viewer: string | undefined, check: boolean, field = "owner"): string {
  if (owner !== "me") return !check || owner === viewer ? owner : knownOwner(svc, owner);
  if (viewer) return viewer;
  throw new CardsError("validation_failed", `${field}=me needs an actor`, { field, value: "me", hint: "name the actor: --actor or CARDS_ACTOR (CLI), the X-Service-Actor header (HTTP)" });
}

function knownOwner(svc: Service, owner: string): string {
  if (svc.store.getUser(owner) || svc.store.listCards({ owner, limit: 1 }).items.length > 0) return owner;
  const users = svc.store.listUsers().map((u) => u.id);
  throw new CardsError("unknown_user", `user ${JSON.stringify(owner)} is not registered and owns no card`, {
    field: "owner", value: owner, valid_options: users.slice(0, 200),
    hint: "name a registered user, or owner=me for the caller",
  });
}

/**
 * List parameters naming a column or card type: a typo is refused with the valid options
 * (an empty list reads as "no work"). A value the definitions no longer name but cards
 * still hold (a reload removed it) is allowed, so those cards can be found.
 */
function known(svc: Service, param: "type_id" | "status", values: string[]): string[] {
  const valid = knownValuesOf(svc)[param]!;
  for (const v of values) {
    if (valid.includes(v)) continue;
    if (svc.store.listCards(param === "status" ? { statuses: [v], limit: 1 } : { typeIds: [v], limit: 1 }).items.length > 0) continue;
    throw new CardsError("validation_failed", `${JSON.stringify(v)} is not a ${param === "status" ? "column" : "card type"} of this workspace`, { field: param, value: v, valid_options: valid });
  }
  return values;
}

/**
 * `tag`: cards carrying this one tag (a tag may hold a comma under tag_policy open, so no
 * list). Under a locked policy a tag outside tag_set is refused with the valid options,
 * unless cards still carry it (a reload removed it).
 */
function tagParam(svc: Service, given: string, check: boolean): FilterNode {
  if (given === "") throw badRequest("tag must name a tag", { field: "tag", value: "" });
  const { settings, tag_set } = svc.defs.workspace;
  // the form a write stores it in (a decomposed "ü" found nothing)
  const tag = storedTag(given, tag_set);
  const node: FilterNode = { kind: "cmp", path: "tags", op: "$has", value: tag };
  if (!check || settings.tag_policy !== "locked" || tag_set.includes(tag) || svc.store.listCards({ filter: node, limit: 1 }).items.length > 0) return node;
  throw new CardsError("unknown_tag", `${JSON.stringify(tag)} is not a tag of this workspace`, { field: "tag", value: tag, valid_options: [...tag_set] });
}

/**
 * has_link names a link type of the workspace, or one links still carry (a type removed
 * from the definitions): a misspelt one matched nothing and read as "no linked cards".
 */
function knownLinkType(svc: Service, typeId: string): string {
  const valid = svc.defs.workspace.link_types.map((t) => t.id);
  if (valid.includes(typeId) || svc.store.hasLinkOfType(typeId)) return typeId;
  throw new CardsError("validation_failed", `${JSON.stringify(typeId)} is not a link type of this workspace`, { field: "has_link", value: typeId, valid_options: valid });
}

/** `fields.<id>` of the user-typed fields of the types in scope (every type's without one): where `me` means the viewer. */
export function userFieldPaths(svc: Service, typeIds?: readonly string[]): string[] {
  const paths = new Set<string>();
  for (const t of svc.defs.cardTypes.values()) {
    if (typeIds && !typeIds.includes(t.id)) continue;
    for (const f of t.fields) if (f.type === "user") paths.add(`fields.${f.id}`);
  }
  return [...paths];
}

/**
 * The field ids of the card types in scope, every type's when no scope is given (sort
 * keys and filter paths are checked against it): a filter on `fields.<id>` of a type
 * outside the scope is refused rather than matching nothing.
 */
export function fieldIdsOf(svc: Service, typeIds?: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const t of svc.defs.cardTypes.values()) {
    if (typeIds && !typeIds.includes(t.id)) continue;
    for (const f of t.fields) ids.add(f.id);
  }
  return ids;
}

export function parseLimit(raw: string | undefined, def: number, max: number): number {
  if (raw === undefined || raw === "") return def;
  // a larger limit is taken as the most a page holds (SPEC: max), not refused
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw badRequest(`limit must be a positive integer (a page holds at most ${max})`, { field: "limit", value: raw });
  return Math.min(Number(raw), max);
}

export function parseBool(raw: string, field: string): boolean {
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw badRequest(`${field} must be true or false`, { field, value: raw, valid_options: ["true", "false"] });
}

export function csv(raw: string): string[] {
  return raw.split(",").map((s) => s.trim()).filter(Boolean);
}

// Uint8Array base64, not node:buffer: loading that module cost ~0.2 ms of every CLI list
function encodeCursor(updatedAt: string, id: string, asOf: number): string {
  return new TextEncoder().encode(JSON.stringify([updatedAt, id, asOf])).toBase64({ alphabet: "base64url", omitPadding: true });
}

function decodeCursor(raw: string): { updated_at: string; id: string; asOf: number } {
  try {
    const v = JSON.parse(new TextDecoder().decode(Uint8Array.fromBase64(raw, { alphabet: "base64url" })));
    if (Array.isArray(v) && typeof v[0] === "string" && typeof v[1] === "string" && Number.isInteger(v[2]) && v[2] >= 0) {
      return { updated_at: v[0], id: v[1], asOf: v[2] };
    }
  } catch { /* fall through */ }
  throw badRequest("cursor is not a value returned as next_cursor", { field: "cursor", value: raw });
}
