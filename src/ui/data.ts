/**
 * Loading the board's cards: every lane in parallel (pages of 200 following next_cursor),
 * the blocked set, and unfiltered lane totals for WIP limits when a filter narrows the view.
 * Live updates refresh single cards with `q=<card id>` inside the same board scope.
 */
import { listAll, listCards } from "./api.ts";
import { state } from "./state.ts";
import type { Card } from "./types.ts";

/** Cards loaded per lane at most; a lane with more shows a "+" on its count. */
export const LANE_CAP = 1000;
let seq = 0;
/** cards with a write in flight: live refreshes leave them to the write's answer */
export const pending = new Set<string>();

/** Loads the open board; resolves false when a newer load superseded this one. */
export async function loadBoard(): Promise<boolean> {
  const mine = ++seq;
  const b = state.board;
  const narrowed = Boolean(state.filter || state.q);
  const base = { board_id: b.id, filter: state.filter || undefined, q: state.q || undefined };
  const limited = b.columns.filter((c) => b.wip_limits?.[c] !== undefined);
  performance.mark("cards:load");
  const [lanes, blocked, totals] = await Promise.all([
    Promise.all(b.columns.map((status) => listAll({ ...base, status }, LANE_CAP))),
    listAll({ board_id: b.id, blocked: "true" }, 5000),
    narrowed ? Promise.all(limited.map((status) => listAll({ board_id: b.id, status }, LANE_CAP))) : Promise.resolve([]),
  ]);
  if (mine !== seq) return false;
  state.cards = new Map();
  state.truncated = new Set();
  lanes.forEach((page, i) => {
    for (const c of page.items) state.cards.set(c.id, c);
    if (page.truncated) state.truncated.add(b.columns[i]!);
  });
  state.blocked = new Set(blocked.items.map((c) => c.id));
  state.totals = {};
  totals.forEach((page, i) => { state.totals[limited[i]!] = page.items.length; });
  return true;
}

/** Whether the view is narrowed so that single-card refreshes cannot keep counts right. */
export function needsFullReload(): boolean {
  return Boolean(state.filter || state.q);
}

/**
 * Re-reads the given cards within the board scope. Returns the lanes that changed.
 * A card that left the scope (moved off the board, deleted, filtered out) is dropped.
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
    if (card && state.board.columns.includes(card.status)) {
      if (!before || before.version <= card.version) state.cards.set(id, card);
      touched.add(card.status);
    } else {
      state.cards.delete(id);
    }
  }));
  return touched;
}

/** Puts a card the server returned (after a write) into the view; new cards go through refreshCards. */
export function applyCard(card: Card): Set<string> {
  const touched = new Set<string>();
  const before = state.cards.get(card.id);
  if (!before || before.version > card.version) return touched;
  touched.add(before.status);
  if (state.board.columns.includes(card.status)) {
    state.cards.set(card.id, card);
    touched.add(card.status);
  } else {
    state.cards.delete(card.id);
  }
  return touched;
}
