/**
 * Board-scoped lane conditions: wip_exceeded / wip_cleared when a column's count crosses
 * its wip_limit, lane_drained / lane_refilled when a watched column empties or refills.
 * `LaneWatch` reads the bounded counts of the affected (board, column) pairs before a
 * write and signals each crossing after it, in the same transaction (once per crossing,
 * whichever process writes).
 *
 * What was last signalled for a lane is recorded beside the data (meta `lane/<board>/<column>/wip`
 * "over" | "under" | "unlimited" (its limit was removed), `.../empty` "empty" | "filled"), and a lane signals only a change from
 * it: processes that work with different definitions for a while (one has read edited
 * files, another not yet) and a reload that moves a limit then agree on what subscribers
 * were told, so no crossing is signalled twice or lost. A lane with nothing recorded
 * starts from its count before the write (or under the definitions replaced).
 */
import type { Board, CardEvent, Definitions } from "../domain/types.ts";
import type { FilterNode } from "../domain/filters.ts";
import type { StoreTx } from "../store/port.ts";
import { DEFINITIONS_SYNCED_KEY, reloadedTo, syncStamp } from "../definitions/cache.ts";
import { boardScope } from "./list.ts";
import type { Service, WriteScope } from "./service.ts";

const scopes = new WeakMap<Board, FilterNode>();

/** The board's hard scope, compiled once per loaded definition; `defs` is the set the board belongs to. */
export function scopeOf(board: Board, defs: Definitions): FilterNode {
  let s = scopes.get(board);
  if (!s) scopes.set(board, (s = boardScope(board, defs)));
  return s;
}

interface Lane { board: Board; column: string; limit?: number; watchEmpty: boolean; before: number }

export class LaneWatch {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly svc: Service, private readonly tx: StoreTx) {}

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
    if (this.lanes.size === 0) return;
    // a process still on a set another has replaced (it follows within a second) leaves the
    // lanes alone: judged by its old limits it would tell subscribers the wrong state; the
    // reload it is about to do signals what is owed from the recorded state
    if (!definitionsCurrent(w.tx, this.svc.defs)) return;
    for (const lane of this.lanes.values()) {
      const after = this.count(lane.board, lane.column, lane.limit);
      const { before, limit, column, board } = lane;
      for (const c of laneChanges(w.tx, board, scopeOf(board, this.svc.defs), column, { limit, watchEmpty: lane.watchEmpty, after, was: { over: limit !== undefined && before > limit, empty: before === 0 } })) w.signal(c);
    }
  }

  /** Count, capped just past what a crossing needs (a write moves one card at a time). */
  private count(board: Board, column: string, limit: number | undefined): number {
    return this.tx.countInStatus(scopeOf(board, this.svc.defs), column, (limit ?? 0) + 2);
  }
}

/** A lane condition to signal, board-scoped. */
export interface LaneCrossing { type: CardEvent["type"]; scope: "board"; board_id: string; diff: { column: string; count: number; limit?: number | null } }

const stateKey = (board: string, column: string, kind: "wip" | "empty") => `lane/${board}/${column}/${kind}`;
const UNLIMITED = "unlimited";

/**
 * The signals a lane owes now, given its count `after` under `limit` / `watchEmpty`, and
 * records the new state. `was` is what the lane was when nothing is recorded yet.
 */
function laneChanges(tx: StoreTx, board: Board, scope: FilterNode, column: string, o: { limit: number | undefined; watchEmpty: boolean; after: number; was: { over: boolean; empty: boolean } }): LaneCrossing[] {
  const out: LaneCrossing[] = [];
  const at = { scope: "board" as const, board_id: board.id };
  // counts are read capped just past the limit; a signal says how many the lane holds
  let exact: number | undefined;
  const count = (): number => (exact ??= tx.countInStatus(scope, column, Number.MAX_SAFE_INTEGER));
  const wipKey = stateKey(board.id, column, "wip");
  const recorded = tx.getMeta(wipKey);
  // a lane whose limit was removed is recorded "unlimited": a process still on a set with
  // the limit follows without clearing it again (with no record it judged by its old
  // limit); a limit set again starts afresh, as a lane that starts being watched
  const wip = recorded === UNLIMITED ? (o.limit === undefined ? "under" : null) : recorded;
  const wasOver = wip === null ? o.was.over : wip === "over";
  const isOver = o.limit !== undefined && o.after > o.limit;
  if (isOver && !wasOver) out.push({ type: "wip_exceeded", ...at, diff: { column, count: count(), limit: o.limit! } });
  // a limit removed from a lane over it clears it too: nothing is exceeded any more
  if (!isOver && wasOver) out.push({ type: "wip_cleared", ...at, diff: { column, count: count(), limit: o.limit ?? null } });
  if (o.limit === undefined) { if (recorded !== null && recorded !== UNLIMITED) tx.setMeta(wipKey, UNLIMITED); }
  else if (wip === null || isOver !== wasOver) tx.setMeta(wipKey, isOver ? "over" : "under");
  if (o.watchEmpty) {
    const emptyKey = stateKey(board.id, column, "empty");
    const rec = tx.getMeta(emptyKey);
    const wasEmpty = rec === null ? o.was.empty : rec === "empty";
    const isEmpty = o.after === 0;
    if (isEmpty && !wasEmpty) out.push({ type: "lane_drained", ...at, diff: { column, count: 0 } });
    if (!isEmpty && wasEmpty) out.push({ type: "lane_refilled", ...at, diff: { column, count: count() } });
    if (rec === null || isEmpty !== wasEmpty) tx.setMeta(emptyKey, isEmpty ? "empty" : "filled");
  }
  return out;
}

/**
 * Lane crossings that a new set of definitions causes with no card moving: a wip_limit
 * lowered under a lane's count or raised (or removed) above it, a board's scope taking
 * cards into or out of a watched lane. Read in the transaction that swaps the sets, as
 * LaneWatch reads around a write; what a lane was comes from its recorded state, else
 * from the definitions replaced. A lane that starts being watched (a new or renamed
 * board, a new limit or monitor) signals nothing, no count having crossed, and is
 * recorded as it is; one that stops being watched drops its record, so watched again
 * later it starts afresh too.
 */
export function laneCrossings(old: Definitions, next: Definitions, tx: StoreTx): LaneCrossing[] {
  const out: LaneCrossing[] = [];
  for (const prev of old.boards.values()) if (!next.boards.has(prev.id)) clearLaneStates(tx, prev.id);
  for (const board of next.boards.values()) {
    const prev = old.boards.get(board.id);
    if (!prev) clearLaneStates(tx, board.id); // a board new to this set: whatever was recorded is another's
    const emptyBefore = new Set(prev?.monitors?.alert_when_empty ?? []);
    const emptyNow = new Set(board.monitors?.alert_when_empty ?? []);
    const columns = new Set([...Object.keys(prev?.wip_limits ?? {}), ...Object.keys(board.wip_limits ?? {}), ...emptyBefore, ...emptyNow]);
    for (const column of columns) {
      const was = prev?.wip_limits?.[column];
      const limit = board.wip_limits?.[column];
      const cap = Math.max(was ?? 0, limit ?? 0) + 2;
      const after = tx.countInStatus(scopeOf(board, next), column, cap);
      const before = prev ? tx.countInStatus(scopeOf(prev, old), column, cap) : after;
      // newly limited or watched: as it is now, whatever was recorded (no count crossed)
      if (limit !== undefined && was === undefined) tx.deleteMeta(stateKey(board.id, column, "wip"));
      if (emptyNow.has(column) && !emptyBefore.has(column)) tx.deleteMeta(stateKey(board.id, column, "empty"));
      if (!emptyNow.has(column)) tx.deleteMeta(stateKey(board.id, column, "empty"));
      out.push(...laneChanges(tx, board, scopeOf(board, next), column, {
        limit, watchEmpty: emptyNow.has(column), after,
        was: { over: was !== undefined ? before > was : limit !== undefined && after > limit, empty: emptyBefore.has(column) ? before === 0 : after === 0 },
      }));
    }
  }
  return out;
}

/**
 * Lanes under a set an open loaded without knowing the set it replaced (files edited
 * while no process had the workspace open): a watched lane signals the change from its
 * recorded state, one with nothing recorded is recorded as it is (silently, as a lane
 * that starts being watched), and one no longer watched drops its record; a lane
 * recorded over a limit that is gone is cleared (`limit: null`), as a reload does.
 */
export function reconcileLanes(defs: Definitions, tx: StoreTx): LaneCrossing[] {
  const out: LaneCrossing[] = [];
  for (const board of defs.boards.values()) {
    const limits = board.wip_limits ?? {};
    const watched = new Set(board.monitors?.alert_when_empty ?? []);
    for (const column of board.columns) {
      const limit = limits[column];
      const watchEmpty = watched.has(column);
      if (!watchEmpty) tx.deleteMeta(stateKey(board.id, column, "empty"));
      const recorded = tx.getMeta(stateKey(board.id, column, "wip"));
      if (limit === undefined && !watchEmpty && (recorded === null || recorded === UNLIMITED)) continue;
      const after = tx.countInStatus(scopeOf(board, defs), column, (limit ?? 0) + 2);
      out.push(...laneChanges(tx, board, scopeOf(board, defs), column, { limit, watchEmpty, after, was: { over: limit !== undefined && after > limit, empty: after === 0 } }));
    }
  }
  return out;
}

/** Drops the recorded lane states of one board, or of every board (a restore). */
export function clearLaneStates(tx: StoreTx, boardId?: string): void {
  tx.deleteMeta(boardId === undefined ? "lane/" : `lane/${boardId}/`, { prefix: true });
}

/** Whether the database still follows the set `defs` (DEFINITIONS_SYNCED_KEY names it; unknown counts as yes). */
function definitionsCurrent(tx: StoreTx, defs: Definitions): boolean {
  const marker = tx.getMeta(DEFINITIONS_SYNCED_KEY);
  return marker === null || marker === syncStamp(defs) || reloadedTo(marker, defs.fingerprint);
}
