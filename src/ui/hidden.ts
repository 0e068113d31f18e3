/**
 * How many cards the board's default_filter hides: the cards of the board's types in its
 * columns, counted without the board scope and within it. Only a board with a
 * default_filter pays for it (two paged reads), so a person can tell the board is narrowed.
 */
import { listAll } from "./api.ts";
import { state } from "./state.ts";

const CAP = 5000;
let seq = 0;

/** Re-counts the hidden cards into state.hidden; false when a newer count superseded this one. */
export async function countHidden(): Promise<boolean> {
  const mine = ++seq;
  const b = state.board;
  if (!b.default_filter || !Object.keys(b.default_filter).length) {
    state.hidden = { count: 0, more: false };
    return true;
  }
  const status = b.columns.join(",");
  const [all, shown] = await Promise.all([
    listAll({ type_id: b.card_type_ids.join(","), status }, CAP),
    listAll({ board_id: b.id, status }, CAP),
  ]);
  if (mine !== seq || b.id !== state.board.id) return false;
  state.hidden = { count: Math.max(0, all.items.length - shown.items.length), more: all.truncated };
  return true;
}
