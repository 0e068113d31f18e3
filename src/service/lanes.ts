/**
 * Board-scoped lane conditions: wip_exceeded / wip_cleared when a column's count crosses
 * its wip_limit, lane_drained / lane_refilled when a watched column empties or refills.
 * `LaneWatch` reads the bounded counts of the affected (board, column) pairs before a
 * write and signals each crossing after it, in the same transaction (once per crossing,
 * whichever process writes).
 */
import type { Board, CardEvent, Definitions } from "../domain/types.ts";
import type { FilterNode } from "../domain/filters.ts";
import type { StoreReads } from "../store/port.ts";
import { boardScope } from "./list.ts";
import type { Service, WriteScope } from "./service.ts";

const scopes = new WeakMap<Board, FilterNode>();

/** The board's hard scope, compiled once per loaded definition. */
export function scopeOf(board: Board): FilterNode {
  let s = scopes.get(board);
  if (!s) scopes.set(board, (s = boardScope(board)));
  return s;
}

interface Lane { board: Board; column: string; limit?: number; watchEmpty: boolean; before: number }

export class LaneWatch {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly svc: Service, private readonly tx: StoreReads) {}

  /**
   * Remembers the counts of every monitored lane among these columns (call before the
   * write). `moved: false` (the status stays) skips boards whose membership cannot change:
   * only a default_filter can move a card in or out of a lane without a status change.
   */
  watch(columns: Iterable<string>, moved = true): this {
    for (const board of this.svc.defs.boards.values()) {
      if (!moved && !board.default_filter) continue;
      const limits = board.wip_limits ?? {};
      const empty = board.monitors?.alert_when_empty ?? [];
      for (const column of columns) {
        const key = `${board.id}\0${column}`;
        if (this.lanes.has(key)) continue;
        const limit = limits[column];
        const watchEmpty = empty.includes(column);
        if (limit === undefined && !watchEmpty) continue;
        this.lanes.set(key, { board, column, limit, watchEmpty, before: this.count(board, column, limit) });
      }
    }
    return this;
  }

  /** Signals every crossing since watch() (call after the write). */
  flush(w: WriteScope): void {
    for (const lane of this.lanes.values()) {
      const after = this.count(lane.board, lane.column, lane.limit);
      const { before, limit, column } = lane;
      const scope = { scope: "board" as const, board_id: lane.board.id };
      if (limit !== undefined) {
        if (before <= limit && after > limit) w.signal({ type: "wip_exceeded", ...scope, diff: { column, count: after, limit } });
        if (before > limit && after <= limit) w.signal({ type: "wip_cleared", ...scope, diff: { column, count: after, limit } });
      }
      if (lane.watchEmpty) {
        if (before > 0 && after === 0) w.signal({ type: "lane_drained", ...scope, diff: { column, count: 0 } });
        if (before === 0 && after > 0) w.signal({ type: "lane_refilled", ...scope, diff: { column, count: after } });
      }
    }
  }

  /** Count, capped just past what a crossing needs (a write moves one card at a time). */
  private count(board: Board, column: string, limit: number | undefined): number {
    return this.tx.countInStatus(scopeOf(board), column, (limit ?? 0) + 2);
  }
}

/** A lane condition a definitions swap causes: the signal to write, board-scoped. */
export interface LaneCrossing { type: CardEvent["type"]; board_id: string; diff: { column: string; count: number; limit?: number | null } }

/**
 * Lane crossings that a new set of definitions causes with no card moving: a wip_limit
 * lowered under a lane's count or raised (or removed) above it, a board's scope taking
 * cards into or out of a watched lane. Read in the transaction that swaps the sets, as
 * LaneWatch reads around a write, so a subscriber's view of a lane stays right.
 */
export function laneCrossings(old: Definitions, next: Definitions, reads: StoreReads): LaneCrossing[] {
  const out: LaneCrossing[] = [];
  for (const board of next.boards.values()) {
    const prev = old.boards.get(board.id);
    if (!prev) continue; // a new board: nothing was watched, nothing crossed
    const sameScope = JSON.stringify([prev.card_type_ids, prev.default_filter ?? null]) === JSON.stringify([board.card_type_ids, board.default_filter ?? null]);
    const emptyBefore = new Set(prev.monitors?.alert_when_empty ?? []);
    const emptyNow = new Set(board.monitors?.alert_when_empty ?? []);
    const columns = new Set([...Object.keys(prev.wip_limits ?? {}), ...Object.keys(board.wip_limits ?? {}), ...emptyBefore, ...emptyNow]);
    for (const column of columns) {
      const was = prev.wip_limits?.[column];
      const limit = board.wip_limits?.[column];
      if (was === limit && sameScope) continue; // neither the limit nor the lane changed
      const cap = Math.max(was ?? 0, limit ?? 0) + 2;
      const after = reads.countInStatus(scopeOf(board), column, cap);
      const before = sameScope ? after : reads.countInStatus(scopeOf(prev), column, cap);
      const wasOver = was !== undefined && before > was;
      const isOver = limit !== undefined && after > limit;
      if (!wasOver && isOver) out.push({ type: "wip_exceeded", board_id: board.id, diff: { column, count: after, limit } });
      // a limit removed from a lane over it clears it too: nothing is exceeded any more
      if (wasOver && !isOver) out.push({ type: "wip_cleared", board_id: board.id, diff: { column, count: after, limit: limit ?? null } });
      if (emptyBefore.has(column) && emptyNow.has(column) && !sameScope) {
        if (before > 0 && after === 0) out.push({ type: "lane_drained", board_id: board.id, diff: { column, count: 0 } });
        if (before === 0 && after > 0) out.push({ type: "lane_refilled", board_id: board.id, diff: { column, count: after } });
      }
    }
  }
  return out;
}
