/**
 * The card type of an event's card, as every consumer that scopes events by board or type
 * must find it (event streams, hooks): from the event itself (card_created, card_deleted
 * carry the card), else the card as stored, else, for a card deleted since, its
 * card_deleted tombstone (as the feed's SQL reads it). A consumer that sees an event late
 * (a hook server polling another process's writes) meets cards deleted meanwhile.
 */
import type { CardEvent } from "../domain/types.ts";

/** The two reads it needs (a Store has them). */
export interface CardTypeReads {
  getCard(id: string): { type_id: string } | null;
  listEvents(q: { cardId: string; types: string[]; limit: number }): ReadonlyArray<{ diff?: unknown }>;
}

export function eventCardType(store: CardTypeReads, e: CardEvent): string | undefined {
  const fromDiff = (e.diff as { card?: { type_id?: unknown } } | undefined)?.card?.type_id;
  if (typeof fromDiff === "string") return fromDiff;
  if (!e.card_id) return undefined;
  return store.getCard(e.card_id)?.type_id ?? deletedCardType(store, e.card_id);
}

/** A deleted card's type, from its card_deleted tombstone; undefined for a card never stored. */
function deletedCardType(store: CardTypeReads, cardId: string): string | undefined {
  const [tomb] = store.listEvents({ cardId, types: ["card_deleted"], limit: 1 });
  return (tomb?.diff as { card?: { type_id?: string } } | undefined)?.card?.type_id;
}
