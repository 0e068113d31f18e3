/**
 * Keeping the board current while agents write: the cards named by live events are re-read
 * one batch at a time (many at once re-read the board instead), and the lane counts are
 * re-read after them. Both are throttled, never debounced: writes that never pause must not
 * starve them.
 */
import { renderLanes } from "./board.ts";
import { loadCounts, refillLanes, refreshCards, shortLanes } from "./data.ts";
import { throttle } from "./dom.ts";
import { state } from "./state.ts";

/** at most one count re-read per this interval */
const COUNTS_EVERY_MS = 750;
/** Past this many cards at once, one re-read of the board is cheaper than a read per card. */
const MANY_CARDS = 20;

async function refreshCounts(): Promise<void> {
  try {
    if (await loadCounts()) renderLanes(state.board.columns);
  } catch {
    // the counts are read again after the next change
  }
}
const countsSoon = throttle(refreshCounts, COUNTS_EVERY_MS);

async function refill(): Promise<void> {
  const short = shortLanes();
  if (short.length) renderLanes(await refillLanes(short).catch(() => []));
}
/** Re-reads the lanes that cards left while they hold more than they show (throttled like the counts). */
export const refillSoon = throttle(refill, COUNTS_EVERY_MS);

/** Cards named by live events and not re-read yet; one refresh runs at a time and takes them all. */
const waiting = new Set<string>();
let refreshing = false;

/** Re-reads the given cards (and then the counts); `reloadSoon` re-reads the whole board. */
export async function followCards(ids: string[], reloadSoon: () => void): Promise<void> {
  countsSoon();
  for (const id of ids) waiting.add(id);
  if (refreshing) return;
  refreshing = true;
  try {
    while (waiting.size) {
      const next = [...waiting];
      waiting.clear();
      if (next.length > MANY_CARDS) { reloadSoon(); continue; }
      renderLanes(await refreshCards(next).catch(() => { reloadSoon(); return []; }));
      if (shortLanes().length) refillSoon();
    }
  } finally {
    refreshing = false;
  }
}
