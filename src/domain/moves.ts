/**
 * Which moves a board's transition graph allows. Pure and import-free: the server's status
 * checks (transitions.ts) and the board in the browser (ui/state.ts) use this one copy, so
 * the lanes a drag offers are the moves the server takes.
 */

/** What of a board the graph reads (a board definition, as the server and GET /workspace have it). */
export interface GraphBoard {
  readonly id: string;
  readonly columns: readonly string[];
  readonly card_type_ids: readonly string[];
  readonly transitions?: Readonly<Record<string, readonly string[]>>;
  readonly settings?: { readonly enforce_transitions?: boolean };
}

/** True when the graph check applies: the workspace or the board enforces transitions. */
export function isEnforced(ws: { readonly settings: { readonly enforce_transitions?: boolean } }, board: GraphBoard | undefined): boolean {
  return ws.settings.enforce_transitions === true || board?.settings?.enforce_transitions === true;
}

/** The statuses a card may move to from `from` on this board (board columns only); none for a column the map leaves out. */
export function allowedNext(board: GraphBoard, from: string): string[] {
  const next = board.transitions?.[from] ?? [];
  return next.filter((s) => board.columns.includes(s));
}

/**
 * The moves the graph allows from `from`, or null when it does not apply (no board, not
 * enforced, or no transitions map): then every column the card's type allows is open.
 */
export function graphMoves(ws: { readonly settings: { readonly enforce_transitions?: boolean } }, board: GraphBoard | undefined, from: string): string[] | null {
  if (!board || !isEnforced(ws, board) || !board.transitions) return null;
  return allowedNext(board, from);
}

/**
 * The board whose rules govern a card of this type: the default board when it shows the
 * type, else the alphabetically first board that does (docs/decisions.md).
 */
export function governingBoard<B extends GraphBoard>(boards: ReadonlyMap<string, B>, defaultBoardId: string | undefined, typeId: string): B | undefined {
  const def = defaultBoardId ? boards.get(defaultBoardId) : undefined;
  if (def && def.card_type_ids.includes(typeId)) return def;
  return [...boards.values()].filter((b) => b.card_type_ids.includes(typeId)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
}
