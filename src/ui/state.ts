/** The page's state: the workspace, the open board, its cards, the view settings and the actor. */
import type { Board, Breach, Card, CardType, FieldDef, WorkspaceInfo } from "./types.ts";
import { governingBoard, graphMoves } from "../domain/moves.ts";

/** A lane's loaded part: its first cards in the lane's order (lane_sort). */
export interface Lane {
  /** how many cards the person asked to see (one page, and one more per "Show more") */
  wanted: number;
  /** the last card loaded while the lane holds more: cards that sort after it are not shown */
  edge: Card | null;
}

export interface State {
  info: WorkspaceInfo;
  board: Board;
  /** cards currently shown on the board (after filter and search) */
  cards: Map<string, Card>;
  /** ids of blocked cards of the board */
  blocked: Set<string>;
  /** what each lane (board column) loaded of its cards */
  lanes: Record<string, Lane>;
  /** cards per lane matching the view (GET /boards/{id}/counts); null until read */
  counts: Record<string, number> | null;
  /** unfiltered cards per lane, for WIP limits while a filter or search narrows the view */
  totals: Record<string, number> | null;
  filter: string;
  q: string;
  actor: string;
  /** the card open in the detail panel */
  openCard: string;
  /** GET /breaches of the open board: every item, and the card ones by card id */
  breaches: Breach[];
  cardBreaches: Map<string, Breach[]>;
  /** watched lanes (alert_when_empty) that are empty now */
  drained: Set<string>;
  /** cards of the board's types in its columns that its default_filter hides ("+" when more) */
  hidden: { count: number; more: boolean };
}

export const state: State = {
  info: { workspace: { id: "", name: "", columns: [], tag_set: [], link_types: [], users: [], settings: {} }, card_types: {}, boards: {} },
  board: { id: "", name: "", columns: [], card_type_ids: [] },
  cards: new Map(),
  blocked: new Set(),
  lanes: {},
  counts: null,
  totals: null,
  filter: "",
  q: "",
  actor: "",
  openCard: "",
  breaches: [],
  cardBreaches: new Map(),
  drained: new Set(),
  hidden: { count: 0, more: false },
};

export function cardType(id: string): CardType | undefined {
  return state.info.card_types[id];
}

export function fieldDef(typeId: string, fieldId: string): FieldDef | undefined {
  return cardType(typeId)?.fields.find((f) => f.id === fieldId);
}

export function columnName(id: string): string {
  return state.info.workspace.columns.find((c) => c.id === id)?.name ?? id;
}

export function userName(id: string): string {
  const u = state.info.workspace.users.find((x) => x.id === id);
  return u?.display_name || id;
}

export function linkTypeName(id: string): string {
  return state.info.workspace.link_types.find((l) => l.id === id)?.name ?? id;
}

/** Boards in picker order: default_board first, then by id. */
export function boardOrder(): string[] {
  const ids = Object.keys(state.info.boards).sort();
  const def = state.info.workspace.settings.default_board;
  return def && ids.includes(def) ? [def, ...ids.filter((i) => i !== def)] : ids;
}

/** The columns a card of this type may sit in on the open board. */
export function allowedColumns(typeId: string): string[] {
  const allowed = cardType(typeId)?.allowed_columns;
  return state.board.columns.filter((c) => !allowed || allowed.includes(c));
}

/** Whether a saved filter or a search narrows the view. */
export function narrowed(): boolean {
  return Boolean(state.filter || state.q);
}

/** Cards in the lane matching the view: the server's count, else what is shown. */
export function matchingCount(status: string, shown: number): number {
  return state.counts?.[status] ?? shown;
}

/** Lane counts used against WIP limits: unfiltered totals when the view is narrowed. */
export function laneCount(status: string, shown: number): number {
  return narrowed() ? (state.totals?.[status] ?? matchingCount(status, shown)) : matchingCount(status, shown);
}

/**
 * The lanes a card may move to: the governing board's graph from its status when it
 * applies (domain/moves.ts, the server's own rule: on the bugs board a bug still moves by
 * main's graph), and always only the columns its card type allows (null: every lane).
 * Drags and the detail's status picker both ask this; the server has the final word.
 */
export function allowedTargets(from: string, typeId?: string): Set<string> | null {
  const boards = new Map(Object.entries(state.info.boards));
  // the declared default board only: with none, governingBoard takes the first board by id
  // that shows the type, as the server does (a JSON object's key order puts ids such as
  // "2" before "10", so GET /workspace's order is not the server's)
  const gov = typeId ? (governingBoard(boards, state.info.workspace.settings.default_board, typeId) ?? state.board) : state.board;
  const next = graphMoves(state.info.workspace, gov, from);
  const typeAllows = typeId && cardType(typeId)?.allowed_columns ? new Set(allowedColumns(typeId)) : null;
  if (!next) return typeAllows;
  return new Set(next.filter((c) => !typeAllows || typeAllows.has(c)));
}
