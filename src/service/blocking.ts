/**
 * card_blocked / card_unblocked: a card is blocked while an outgoing depends-on or
 * blocked-by link points at a card not in the done column. `BlockWatch` records the
 * open blockers of the cards a write may affect, and signals each crossing once.
 */
import type { StoreTx } from "../store/port.ts";
import type { WriteScope } from "./service.ts";

export class BlockWatch {
  private readonly before = new Map<string, boolean>();

  constructor(private readonly tx: StoreTx) {}

  /** Remembers whether these cards are blocked now (call before the change). */
  watch(ids: Iterable<string>): this {
    for (const id of ids) if (!this.before.has(id)) this.before.set(id, this.tx.openBlockers(id).length > 0);
    return this;
  }

  /** Cards blocked by `targetId`: their state may change when it moves or goes away. */
  watchDependentsOf(targetId: string): this {
    return this.watch(this.tx.blockedBySources(targetId));
  }

  /** Signals every crossing since watch() (call after the change). */
  flush(w: WriteScope): void {
    for (const [id, was] of this.before) {
      if (!this.tx.getCard(id)) continue;
      const blockers = this.tx.openBlockers(id);
      const is = blockers.length > 0;
      if (is !== was) w.signal({ type: is ? "card_blocked" : "card_unblocked", card_id: id, diff: { blockers } });
    }
  }
}
