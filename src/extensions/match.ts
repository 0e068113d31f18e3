/**
 * Which hook extensions an event reaches: `on` (absent = every type) and the filter keys
 * board_id, type_id, card_id, to_status and from_status. Pure; the caller supplies how to
 * find a card's type and a board's card types.
 */
import { ALL_EVENT_TYPES, type CardEvent, type ExtensionDef } from "../domain/types.ts";

export interface MatchContext {
  /** the card type of the event's card, when it has one and it is known */
  cardType(e: CardEvent): string | undefined;
  /** the card types a board holds; undefined for an unknown board */
  boardTypes(boardId: string): readonly string[] | undefined;
}

/** True when `hook` wants `e`. */
export function hookMatches(hook: ExtensionDef, e: CardEvent, ctx: MatchContext): boolean {
  if (hook.on && !hook.on.includes(e.type)) return false;
  const f = hook.filter;
  if (!f) return true;
  if (f.card_id !== undefined && e.card_id !== f.card_id) return false;
  if (f.type_id !== undefined && (e.scope === "board" || ctx.cardType(e) !== f.type_id)) return false;
  if (f.board_id !== undefined) {
    if (e.scope === "board") {
      if (e.board_id !== f.board_id) return false;
    } else {
      const type = ctx.cardType(e);
      if (type === undefined || !ctx.boardTypes(f.board_id)?.includes(type)) return false;
    }
  }
  if (f.to_status !== undefined && statusMove(e)?.to !== f.to_status) return false;
  if (f.from_status !== undefined && statusMove(e)?.from !== f.from_status) return false;
  return true;
}

/** The status an event moves a card from and to: status_changed, and card_created (to only). */
export function statusMove(e: CardEvent): { from?: string; to?: string } | undefined {
  const d = e.diff as { before?: unknown; after?: unknown; card?: { status?: unknown } };
  if (e.type === "status_changed") return { from: str(d.before), to: str(d.after) };
  if (e.type === "card_created") return { to: str(d.card?.status) };
  return undefined;
}

/** The event types a set of hooks consumes (a hook without `on` consumes all of them). */
export function consumedTypes(hooks: readonly ExtensionDef[]): Set<string> {
  const out = new Set<string>();
  for (const h of hooks) for (const t of h.on ?? ALL_EVENT_TYPES) out.add(t);
  return out;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
