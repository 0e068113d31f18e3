/**
 * In-process fan-out of events (durable ones after commit, condition signals as they
 * happen). Knows nothing about HTTP; SSE and hooks subscribe here. A subscriber that
 * throws is unsubscribed and never disturbs the publisher or other subscribers.
 */
import type { CardEvent } from "../domain/types.ts";

export type EventListener = (event: CardEvent) => void;

export class EventBus {
  /** made on the first subscription: a one-shot CLI call never has one */
  private listeners?: Set<EventListener>;

  subscribe(fn: EventListener): () => void {
    const listeners = (this.listeners ??= new Set());
    listeners.add(fn);
    return () => { listeners.delete(fn); };
  }

  publish(event: CardEvent): void {
    if (!this.listeners) return;
    for (const fn of this.listeners) {
      try {
        fn(event);
      } catch {
        this.listeners.delete(fn);
      }
    }
  }

  get size(): number {
    return this.listeners?.size ?? 0;
  }
}
