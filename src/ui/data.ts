/**
 * Loading the board's cards. Each lane reads its first cards from the server in the lane's
 * own order (`GET /cards?board_id=B&status=S&sort=<lane_sort>`): the default order pages
 * with next_cursor, a custom lane_sort gives one page of at most 200. Exact lane counts (and
 * the unfiltered ones for WIP limits while the view is narrowed) come from
 * `GET /boards/{id}/counts`. Live updates refresh single cards with `q=<card id>` inside
 * the same board scope.
 */
import { boardCounts, listCards, type Query } from "./api.ts";
import { laneComparator } from "./sort.ts";
import { narrowed, state, type Lane } from "./state.ts";
import type { Card } from "./types.ts";

/** Cards a lane shows at first, and how many more each "Show more" adds. */
export const LANE_PAGE = 100;
/** The most one GET /cards page holds: all a custom-sorted lane can show. */
export const MAX_PAGE = 200;

let seq = 0;
let countSeq = 0;
let view = "";
/** cards with a write in flight: live refreshes leave them to the write's answer */
export const pending = new Set<string>();
/** cards the person moved: shown in their new lane even if they sort past what it loaded, until it is read again */
const kept = new Set<string>();

/** The board's lane_sort as a GET /cards `sort`; undefined for the list's default order (updated_at, newest first). */
export function laneSort(): string | undefined {
  const sort = state.board.presentation?.lane_sort;
  return sort && sort !== "-updated_at" ? sort : undefined;
}

/** Whether "Show more" can load more of the lane: always in the default order, up to one page with a custom sort. */
export function canLoadMore(status: string): boolean {
  return !laneSort() || (state.lanes[status]?.wanted ?? LANE_PAGE) < MAX_PAGE;
}

/** What the board shows: the board, its filter and its search. */
function viewKey(): string {
  return `${state.board.id}|${state.filter}|${state.q}`;
}

function viewQuery(): Query {
  return { board_id: state.board.id, filter: state.filter || undefined, q: state.q || undefined };
}

/** The first `wanted` cards of a lane in its order; `more` when the lane holds others. */
async function readLane(status: string, wanted: number, extra: Query = {}): Promise<{ items: Card[]; more: boolean }> {
  const base = { ...viewQuery(), status, ...extra };
  const sort = laneSort();
  if (sort) {
    const limit = Math.min(wanted, MAX_PAGE);
    const page = await listCards({ ...base, sort, limit });
    return { items: page.items, more: page.items.length === limit };
  }
  const items: Card[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listCards({ ...base, limit: Math.min(MAX_PAGE, wanted - items.length), cursor });
    items.push(...page.items);
    if (!page.next_cursor) return { items, more: false };
    if (items.length >= wanted) return { items, more: true };
    cursor = page.next_cursor;
  }
}

function putLane(status: string, wanted: number, read: { items: Card[]; more: boolean }): void {
  for (const c of read.items) state.cards.set(c.id, c);
  state.lanes[status] = { wanted, edge: read.more ? { ...read.items[read.items.length - 1]! } : null };
}

/** Loads the open board; resolves false when a newer load superseded this one. */
export async function loadBoard(): Promise<boolean> {
  const mine = ++seq;
  countSeq++; // a count read started before this load must not overwrite its counts
  const b = state.board;
  // the same view keeps what "Show more" loaded; another board, filter or search starts over
  const key = viewKey();
  const wanted = b.columns.map((s) => (key === view ? state.lanes[s]?.wanted : undefined) ?? LANE_PAGE);
  performance.mark("cards:load");
  const [lanes, blocked, counts] = await Promise.all([
    Promise.all(b.columns.map((status, i) => readLane(status, wanted[i]!))),
    readBlocked(wanted),
    readCounts().catch(() => [null, null] as const),
  ]);
  if (mine !== seq) return false;
  view = key;
  kept.clear();
  state.cards = new Map();
  state.lanes = {};
  lanes.forEach((read, i) => putLane(b.columns[i]!, wanted[i]!, read));
  state.blocked = blocked;
  [state.counts, state.totals] = counts;
  return true;
}

/**
 * The blocked cards among those the lanes show: one page of the board's blocked cards when
 * that is all of them (the usual case), else each lane's first blocked cards in its own
 * order, as many as the lane shows (which holds every blocked card among those it shows).
 */
async function readBlocked(wanted: number[]): Promise<Set<string>> {
  const b = state.board;
  const page = await listCards({ board_id: b.id, blocked: "true", limit: MAX_PAGE });
  if (!page.next_cursor) return new Set(page.items.map((c) => c.id));
  const lanes = await Promise.all(b.columns.map((status, i) => readLane(status, wanted[i]!, { blocked: "true" })));
  return new Set(lanes.flatMap((l) => l.items.map((c) => c.id)));
}

/** "Show more": one more page of the lane (read again from its top, so the order stays the server's). */
export async function loadMore(status: string): Promise<boolean> {
  const asked = (state.lanes[status]?.wanted ?? LANE_PAGE) + LANE_PAGE;
  const wanted = laneSort() ? Math.min(asked, MAX_PAGE) : asked;
  state.lanes[status] = { edge: state.lanes[status]?.edge ?? null, wanted }; // a reload meanwhile reads as many
  return rereadLane(status, wanted);
}

/**
 * Reads a lane again from its top, `wanted` cards; resolves false when the board, its
 * filter or search changed meanwhile, or a whole-board load started (its answer wins).
 */
async function rereadLane(status: string, wanted: number): Promise<boolean> {
  const key = viewKey();
  const mine = seq;
  const [read, blocked] = await Promise.all([readLane(status, wanted), readLane(status, wanted, { blocked: "true" })]);
  if (key !== viewKey() || mine !== seq || key !== view) return false;
  for (const c of blocked.items) state.blocked.add(c.id);
  for (const [id, c] of state.cards) {
    if (c.status !== status || pending.has(id)) continue;
    state.cards.delete(id);
    kept.delete(id); // the lane is read in its order now
  }
  putLane(status, wanted, read);
  return true;
}

/**
 * Lanes that show fewer cards than asked while they hold more (cards left them, and the
 * ones after the last shown were never loaded): they are read again, so a lane that agents
 * empty card by card does not end up saying "No cards" beside a count of 50.
 */
export function shortLanes(): string[] {
  const out: string[] = [];
  for (const [status, lane] of Object.entries(state.lanes)) {
    if (lane.edge && laneCards(status).length < lane.wanted) out.push(status);
  }
  return out;
}

/** Re-reads the given lanes; resolves the ones it redrew. */
export async function refillLanes(statuses: string[]): Promise<string[]> {
  const done = await Promise.all(statuses.map((s) => rereadLane(s, state.lanes[s]?.wanted ?? LANE_PAGE)));
  return statuses.filter((_, i) => done[i]);
}

/** The view's lane counts and, while narrowed, the unfiltered ones: [counts, totals]. */
async function readCounts(): Promise<readonly [Record<string, number> | null, Record<string, number> | null]> {
  const b = state.board.id;
  const [counts, totals] = await Promise.all([
    boardCounts(b, { filter: state.filter || undefined, q: state.q || undefined }),
    narrowed() ? boardCounts(b, {}) : undefined,
  ]);
  return [counts.counts, totals?.counts ?? null] as const;
}

/** Re-reads the lane counts; resolves false when superseded or the board changed meanwhile. */
export async function loadCounts(): Promise<boolean> {
  const mine = ++countSeq;
  const key = viewKey();
  const counts = await readCounts();
  if (mine !== countSeq || key !== viewKey()) return false;
  [state.counts, state.totals] = counts;
  return true;
}

/** Moves one card between lane counts at once (an optimistic move; the next read corrects it). */
export function shiftCount(from: string, to: string): void {
  for (const counts of [state.counts, state.totals]) {
    if (!counts) continue;
    if (counts[from] !== undefined) counts[from] = Math.max(0, counts[from]! - 1);
    if (counts[to] !== undefined) counts[to]! += 1;
  }
}

/** The cards loaded for a lane, in the lane's order. */
export function laneCards(status: string): Card[] {
  const out: Card[] = [];
  for (const c of state.cards.values()) if (c.status === status) out.push(c);
  return out.sort(laneComparator(state.board.presentation?.lane_sort));
}

/**
 * Keeps a lane at the number of cards the person asked to see: cards that live changes
 * brought in push the last ones out (they come back with "Show more"), so hours of agent
 * writes never grow a lane past its page.
 */
function trim(status: string): void {
  const lane = state.lanes[status];
  if (!lane) return;
  const cards = laneCards(status);
  if (cards.length <= lane.wanted) return;
  // a card the person moved here stays; the last of the others make room
  const others = cards.filter((c) => !kept.has(c.id));
  const room = Math.max(0, lane.wanted - (cards.length - others.length));
  for (const c of others.slice(room)) state.cards.delete(c.id);
  if (room > 0) lane.edge = { ...others[room - 1]! };
}

/** Whether the lane shows the card: in one of the board's lanes and not past what the lane loaded. */
function shows(card: Card): boolean {
  if (!state.board.columns.includes(card.status)) return false;
  if (kept.has(card.id)) return true;
  const edge: Lane["edge"] = state.lanes[card.status]?.edge ?? null;
  return !edge || laneComparator(state.board.presentation?.lane_sort)(card, edge) <= 0;
}

/** Whether the view is narrowed so that single-card refreshes cannot keep counts right. */
export function needsFullReload(): boolean {
  return narrowed();
}

/**
 * Re-reads the given cards within the board scope. Returns the lanes that changed.
 * A card that left the scope (moved off the board, deleted, filtered out) or sorts past
 * what its lane loaded is dropped.
 */
export async function refreshCards(ids: string[]): Promise<Set<string>> {
  const touched = new Set<string>();
  const boardId = state.board.id;
  await Promise.all(ids.map(async (id) => {
    const [inView, blocked] = await Promise.all([
      listCards({ board_id: boardId, q: id, limit: 50 }),
      listCards({ board_id: boardId, q: id, blocked: "true", limit: 50 }),
    ]);
    if (state.board.id !== boardId || pending.has(id)) return;
    const card = inView.items.find((c) => c.id === id);
    const before = state.cards.get(id);
    if (blocked.items.some((c) => c.id === id)) state.blocked.add(id);
    else state.blocked.delete(id);
    if (before) touched.add(before.status);
    if (card && shows(card)) {
      if (!before || before.version <= card.version) state.cards.set(id, card);
      touched.add(card.status);
    } else {
      state.cards.delete(id);
    }
  }));
  for (const status of touched) trim(status);
  return touched;
}

/**
 * Puts a card the server returned (after a write) into the view; new cards go through
 * refreshCards. `keep`: the person moved it, so it stays in sight in its new lane.
 */
export function applyCard(card: Card, keep = false): Set<string> {
  const touched = new Set<string>();
  const before = state.cards.get(card.id);
  if (!before || before.version > card.version) return touched;
  if (keep) kept.add(card.id);
  touched.add(before.status);
  if (shows(card)) {
    state.cards.set(card.id, card);
    touched.add(card.status);
  } else {
    state.cards.delete(card.id);
  }
  for (const status of touched) trim(status);
  return touched;
}
