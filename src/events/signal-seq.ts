/**
 * A condition signal's row number in the shared `signals` table, carried beside the
 * event object (never in its JSON). It identifies one signal in every process that
 * publishes it: the writing process publishes the object it built, the others rebuild
 * it from the row, with its keys in another order.
 */
import type { CardEvent } from "../domain/types.ts";

const seqs = new WeakMap<CardEvent, number>();

export function markSignal(event: CardEvent, seq: number): CardEvent {
  seqs.set(event, seq);
  return event;
}

/** The signal's seq, or undefined for a durable event (it has `id`) or an unmarked object. */
export function signalSeq(event: CardEvent): number | undefined {
  return seqs.get(event);
}
