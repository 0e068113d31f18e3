/**
 * The three status checks of SPEC "States and transitions", in order:
 * (1) the id is a workspace column, (2) it is in the type's allowed_columns when declared,
 * (3) the board transition graph, only when enforcement applies and the write is not forced.
 */
import { CardsError } from "./errors.ts";
import { graphMoves, isEnforced } from "./moves.ts";
import type { Board, CardType, WorkspaceDef } from "./types.ts";

/** Check 1: the status is a column of the workspace; `options` (default: every column) are the valid_options when not. */
export function assertColumn(ws: WorkspaceDef, status: unknown, options?: readonly string[]): string {
  const columns = ws.columns.map((c) => c.id);
  if (typeof status !== "string" || !columns.includes(status)) {
    throw new CardsError("validation_failed", `${JSON.stringify(status)} is not a column of this workspace`, {
      field: "status", value: status, valid_options: [...(options ?? columns)],
    });
  }
  return status;
}

/** Checks 1 and 2: the status may exist on a card of this type at all. */
export function assertStatusAllowed(ws: WorkspaceDef, type: CardType, value: unknown): string {
  const status = assertColumn(ws, value, type.allowed_columns);
  if (type.allowed_columns && !type.allowed_columns.includes(status)) {
    throw new CardsError("validation_failed", `status ${JSON.stringify(status)} is not allowed for cards of type ${type.id}`, {
      field: "status", value: status, valid_options: type.allowed_columns,
    });
  }
  return status;
}

/**
 * Check 3. Throws `transition_illegal` with the allowed board columns (those the card's
 * type allows) as valid_options.
 * A board without a transitions map, or an unchanged status, passes. `forceHint` tells
 * the caller how to skip the check where the operation allows it.
 */
export function assertTransition(ws: WorkspaceDef, board: Board | undefined, type: CardType, from: string, to: string, force: boolean, forceHint = "force skips the check (CLI: --force; HTTP and tools: force: true)"): void {
  const moves = force || from === to ? null : graphMoves(ws, board, from);
  if (!moves || !board) return;
  // only moves the card's type allows too (check 2 would refuse the rest)
  const allowed = moves.filter((s) => !type.allowed_columns || type.allowed_columns.includes(s));
  if (!allowed.includes(to)) {
    throw new CardsError("transition_illegal", `moving from ${from} to ${to} is not allowed on board ${board.id}`, {
      field: "status", value: to, valid_options: allowed,
      hint: allowed.length ? `allowed from ${from}: ${allowed.join(", ")}; ${forceHint}` : `no move is allowed from ${from}; ${forceHint}`,
    });
  }
}

/** The column whose cards count as finished for blocking: `done`, else the last column. */
export function doneColumn(ws: WorkspaceDef): string {
  // a plain loop: every call opens through here, and the first `some` costs ~0.1 ms
  const cols = ws.columns;
  for (let i = 0; i < cols.length; i++) if (cols[i]!.id === "done") return "done";
  return cols.length ? cols[cols.length - 1]!.id : "done";
}

/** Column ids that name work in progress, the agent loop's `doing` when no column is called so. */
const IN_PROGRESS = new Set(["doing", "in_progress", "in-progress", "inprogress", "wip", "active", "working", "started", "ongoing"]);

/**
 * The columns the agent loop names (prime, the tool server's instructions), on `board` (the
 * default board: where take-next looks) for cards of `type` (its first type): where work
 * waits (`todo`, else the column before doing), where it is done (`doing` or another name
 * for work in progress, else the column after `todo`, else the third column; never the done
 * nor the review column), where it is reviewed (`review`, else the last) and the last (`done` when there).
 * When the board enforces its graph, ready is a column that may move to doing and review
 * one doing may move to, so the commands the loop names pass the graph.
 */
export function agentLoopColumns(ws: WorkspaceDef, board?: Board, type?: CardType): { ready: string; doing: string; review: string; done: string } {
  let cols = board?.columns.length ? board.columns : ws.columns.map((c) => c.id);
  const allowed = type?.allowed_columns;
  if (allowed && cols.some((c) => allowed.includes(c))) cols = cols.filter((c) => allowed.includes(c));
  const done = cols.includes("done") ? "done" : cols.at(-1) ?? "done";
  // never the done column: a 3-column workflow (open, in_progress, done) would claim work finished
  // nor the review column: todo, review, done works in todo and hands off to review
  const open = cols.filter((c) => c !== done && c !== "review");
  const doing = (open.includes("doing") ? "doing" : open.find((c) => IN_PROGRESS.has(c.toLowerCase()))) ?? (open.includes("todo") ? open[open.indexOf("todo") + 1] : undefined) ?? open[Math.min(2, open.length - 1)] ?? cols.find((c) => c !== done) ?? done;
  let ready = cols.includes("todo") ? "todo" : cols[Math.max(0, cols.indexOf(doing) - 1)] ?? doing;
  let review = cols.includes("review") ? "review" : done;
  const graph = board && isEnforced(ws, board) ? board.transitions : undefined;
  if (graph) {
    const next = (c: string) => (graph[c] ?? []).filter((x) => cols.includes(x));
    if (!next(ready).includes(doing)) ready = cols.find((c) => c !== doing && next(c).includes(doing)) ?? ready;
    // forward only: a move back (to ready, say) would hand finished work back to the queue
    const after = (c: string) => cols.indexOf(c) > cols.indexOf(doing) && c !== ready;
    const reaches = (c: string) => c === done || next(c).includes(done);
    if (!next(doing).includes(review)) review = next(doing).find((c) => after(c) && reaches(c)) ?? next(doing).find(after) ?? review;
  }
  return { ready, doing, review, done };
}

/** The board the agent loop is told on (the default board, else the first by id) and its first card type. */
export function agentLoopScope(ws: WorkspaceDef, boards: Map<string, Board>, types: Map<string, CardType>): { board?: Board; type?: CardType } {
  const board = boards.get(ws.settings.default_board ?? "") ?? [...boards.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
  const typeId = board?.card_type_ids[0];
  return { ...(board ? { board } : {}), ...(typeId && types.get(typeId) ? { type: types.get(typeId)! } : {}) };
}
