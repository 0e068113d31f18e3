/**
 * The live feed: publishes committed events and condition signals to the in-process bus
 * in commit order, whichever process wrote them. A write in this process calls `poll()`
 * right after its commit; a timer picks up writes made by other processes on the same
 * workspace (an embedded CLI, `cards mcp`, another server) within `intervalMs`.
 */
import type { CardEvent, StoredEvent } from "../domain/types.ts";
import type { StoreReads } from "../store/port.ts";

/** what the feed reads: the log, in one snapshot per poll */
type FeedStore = StoreReads & { snapshot<T>(fn: (r: StoreReads) => T): T };
import { parseEventId } from "../domain/ids.ts";
import type { EventBus } from "./bus.ts";
import { markSignal } from "./signal-seq.ts";

/** Signals older than this are pruned: they are live-only and every reader has polled by then. */
export const SIGNAL_TTL_MS = 10 * 60 * 1000;
const BATCH = 500;

export class Feed {
  private eventCursor: number;
  private signalCursor: number;
  private timer?: ReturnType<typeof setInterval>;
  private polling = false;

  constructor(private readonly store: FeedStore, private readonly bus: EventBus) {
    this.eventCursor = parseEventId(store.lastEventId() ?? "0") ?? 0;
    this.signalCursor = store.lastSignalSeq();
  }

  /**
   * Publishes what this process just committed. When its events follow the cursor with no
   * gap (no other process wrote in between) they go out directly, without a query;
   * otherwise the feed polls, so subscribers still see every event in id order.
   */
  publishCommitted(events: StoredEvent[], signals: Array<{ seq: number; event: CardEvent }>): void {
    if (this.polling) return;
    const firstEvent = events[0] ? parseEventId(events[0].id) : undefined;
    const firstSignal = signals[0]?.seq;
    const contiguous = (firstEvent === undefined || firstEvent === this.eventCursor + 1)
      && (firstSignal === undefined || firstSignal === this.signalCursor + 1);
    if (!contiguous) return this.poll();
    for (const e of events) {
      this.eventCursor = parseEventId(e.id) ?? this.eventCursor;
      this.bus.publish(e);
    }
    for (const s of signals) {
      this.signalCursor = s.seq;
      this.bus.publish(markSignal(s.event, s.seq));
    }
  }

  /**
   * Publishes everything committed since the last poll in commit order: a signal goes out
   * right after the newest event that existed when it was written. Both are read in one
   * snapshot, so every event a signal follows is in the events read with it.
   */
  poll(): void {
    if (this.polling) return;
    this.polling = true;
    try {
      for (;;) {
        // one read snapshot: a commit between the two reads cannot split a signal from its event
        const { signals, events } = this.store.snapshot((r) => {
          // a restore's log is history, not news: hooks and streams never get it as new writes
          const history = r.historyThrough();
          if (history > this.eventCursor) this.eventCursor = history;
          return {
            signals: r.listSignals(this.signalCursor, BATCH),
            events: r.listEvents({ afterId: String(this.eventCursor), limit: BATCH }),
          };
        });
        let si = 0;
        const signalsUpTo = (eventSeq: number): void => {
          for (; si < signals.length && signals[si]!.afterEvent <= eventSeq; si++) {
            this.signalCursor = signals[si]!.seq;
            this.bus.publish(markSignal(signals[si]!.event as CardEvent, signals[si]!.seq));
          }
        };
        for (const e of events) {
          const seq = parseEventId(e.id) ?? this.eventCursor;
          signalsUpTo(seq - 1);
          this.eventCursor = seq;
          this.bus.publish(e);
        }
        // a full page of events may have more after it: the signals that follow those wait
        signalsUpTo(events.length < BATCH ? Number.MAX_SAFE_INTEGER : this.eventCursor);
        if (events.length < BATCH && signals.length < BATCH) break;
      }
    } finally {
      this.polling = false;
    }
  }

  /** Polls every `intervalMs` for writes by other processes (the timer never keeps the process alive). */
  start(intervalMs = 200): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      try { this.poll(); } catch { /* the database may be busy or gone; the next tick retries */ }
    }, intervalMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The id of the last durable event published (SSE replay hands off here). */
  get lastEventSeq(): number {
    return this.eventCursor;
  }
}
