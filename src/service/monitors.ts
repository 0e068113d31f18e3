/**
 * Temporal conditions: status_timeout (status_since + max_time_in_status) and card_idle
 * (updated_at + idle_after). Deadlines are derived from the database, so they survive a
 * restart; they are armed only while someone consumes the type (a subscriber asking for
 * it, persist_conditions, or a hook), re-armed as cards move, and each card is re-checked
 * at its deadline. A once-key in the database makes each firing happen once, whichever
 * process notices it first.
 */
import { parseDuration } from "../domain/durations.ts";
import { nowIso } from "../domain/card.ts";
import { andFilters, parseFilter } from "../domain/filters.ts";
import type { Board, Card, CardEvent } from "../domain/types.ts";
import { scopeOf } from "./lanes.ts";
import { onReload } from "./reload.ts";
import type { Service } from "./service.ts";

/** The once-key of a temporal firing: one per rule, board, card and entry (its since). */
export function temporalOnceKey(type: "status_timeout" | "card_idle", boardId: string, cardId: string, since: string): string {
  return `${type}:${boardId}:${cardId}:${since}`;
}

/** The actor of events the service raises by itself. */
export const SYSTEM_ACTOR = "cards";
const MAX_SLEEP_MS = 30_000;
/** how far the wall clock may fall behind the monotonic one between scans before the bookmarks are dropped */
const CLOCK_STEP_MS = 1_000;
const BATCH = 200;

interface Rule {
  type: "status_timeout" | "card_idle";
  board: Board;
  statuses?: string[];
  column: "status_since" | "updated_at";
  ms: number;
  raw: string;
}

export class TemporalMonitor {
  private timer?: ReturnType<typeof setTimeout>;
  /** per rule, the last card fired in the scan order (status_since or updated_at, id) */
  private readonly marks = new Map<string, { at: string; id: string }>();
  /** cards written since the last scan: one may have come into a board's scope already overdue */
  private readonly touched = new Set<string>();
  private unsubscribe?: () => void;
  /** the wall and monotonic clocks at the last scan */
  private clock?: { wall: number; mono: number };
  private running = false;
  private again = false;

  constructor(private readonly svc: Service, private readonly extraConsumers: () => Set<string> = () => new Set()) {}

  start(): void {
    // every durable card event may move a deadline; a new consumer may arm a rule
    // and a card unblocked comes into the scope of a board whose default_filter asks for
    // `{"blocked": false}` without being written: it may be overdue already
    const off = this.svc.subscribe((e) => {
      if (e.card_id && (e.id || e.type === "card_unblocked" || e.type === "card_blocked")) {
        this.touched.add(e.card_id);
        this.kick();
      }
    });
    // a board's scope or limits may have changed: scan from the start (once-keys dedupe),
    // once the new set is in place (an announcement can arrive before this process's reload)
    const offReload = onReload(this.svc, () => { this.marks.clear(); this.kick(); });
    const offConsumers = this.svc.onConsumersChanged(() => this.kick());
    this.unsubscribe = () => { off(); offReload(); offConsumers(); };
    this.kick();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Re-evaluates soon (coalesces bursts of events into one scan). */
  kick(): void {
    if (this.running) { this.again = true; return; }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.scan(), 0);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** Fires what is due and arms the timer for the next deadline. */
  async scan(): Promise<void> {
    this.running = true;
    // the wall clock stepped back (NTP, a VM resumed): cards written since may be behind
    // the bookmarks, so the scan starts over (once-keys dedupe)
    const clock = { wall: Date.now(), mono: performance.now() };
    if (this.clock && clock.wall - this.clock.wall < clock.mono - this.clock.mono - CLOCK_STEP_MS) this.marks.clear();
    this.clock = clock;
    let next = Date.now() + MAX_SLEEP_MS;
    const touched = [...this.touched];
    this.touched.clear();
    try {
      for (const rule of this.rules()) {
        await this.fireTouched(rule, touched);
        await this.fireDue(rule);
        const basis = this.svc.store.nextDue(scopeOf(rule.board, this.svc.defs), rule.statuses, rule.column, new Date(Date.now() - rule.ms).toISOString());
        if (basis) next = Math.min(next, Date.parse(basis) + rule.ms);
      }
    } catch {
      // the database may be busy; the next scan retries
    } finally {
      this.running = false;
    }
    if (this.again) { this.again = false; return this.kick(); }
    this.timer = setTimeout(() => void this.scan(), Math.max(5, next - Date.now() + 5));
    (this.timer as { unref?: () => void }).unref?.();
  }

  private rules(): Rule[] {
    const out: Rule[] = [];
    const consumers = this.extraConsumers();
    const wants = (t: string) => this.svc.hasConsumer(t) || consumers.has(t);
    for (const board of this.svc.defs.boards.values()) {
      const mon = board.monitors;
      if (!mon) continue;
      if (mon.max_time_in_status && wants("status_timeout")) {
        for (const [status, raw] of Object.entries(mon.max_time_in_status)) {
          out.push({ type: "status_timeout", board, statuses: [status], column: "status_since", ms: parseDuration(raw), raw });
        }
      }
      if (mon.idle_after && wants("card_idle")) {
        out.push({ type: "card_idle", board, column: "updated_at", ms: parseDuration(mon.idle_after), raw: mon.idle_after });
      }
    }
    return out;
  }

  private async fireDue(rule: Rule): Promise<void> {
    const key = `${rule.type}\0${rule.board.id}\0${rule.statuses?.join(",") ?? ""}\0${rule.ms}`;
    for (;;) {
      const due = this.svc.store.dueCards(scopeOf(rule.board, this.svc.defs), rule.statuses, rule.column, this.marks.get(key), this.dueBefore(rule), BATCH);
      for (const card of due) {
        await this.fire(rule, card);
        this.marks.set(key, { at: card[rule.column], id: card.id });
      }
      if (due.length < BATCH) return;
    }
  }

  /**
   * The touched cards that are overdue for `rule`. The bookmarked scan goes forward in
   * time, so a card that came into the board's scope with an older status_since or
   * updated_at (a field change that makes the default_filter match, a blocker done)
   * would be behind the bookmark for good.
   */
  private async fireTouched(rule: Rule, ids: string[]): Promise<void> {
    for (const id of ids) {
      const [card] = this.svc.store.dueCards(this.scopeOfCard(rule, id), rule.statuses, rule.column, undefined, this.dueBefore(rule), 1);
      if (card) await this.fire(rule, card);
    }
  }

  private scopeOfCard(rule: Rule, id: string) {
    return andFilters(scopeOf(rule.board, this.svc.defs), parseFilter({ id }));
  }

  private dueBefore(rule: Rule): string {
    return new Date(Date.now() - rule.ms).toISOString();
  }

  /**
   * Fires `rule` for `card`, re-checked in the transaction that records it: a card moved
   * on, written, or out of the board's scope since it was read is not fired for (its new
   * entry has a deadline of its own), and the event's time is taken there, so it never
   * comes before an event logged ahead of it.
   */
  private async fire(rule: Rule, card: Card): Promise<void> {
    const persisted = (this.svc.defs.workspace.settings.persist_conditions ?? []).includes(rule.type);
    await this.svc.store.write((tx) => {
      const [still] = tx.dueCards(this.scopeOfCard(rule, card.id), rule.statuses, rule.column, undefined, this.dueBefore(rule), 1);
      const since = card[rule.column];
      if (!still || still[rule.column] !== since) return;
      const at = nowIso();
      if (!tx.claimOnce(temporalOnceKey(rule.type, rule.board.id, card.id, since), at)) return;
      const diff = rule.type === "status_timeout"
        ? { board_id: rule.board.id, status: still.status, since, max: rule.raw }
        : { board_id: rule.board.id, since, threshold: rule.raw };
      const event = { type: rule.type, actor: SYSTEM_ACTOR, at, card_id: card.id, scope: "card", diff } as CardEvent;
      if (persisted) tx.appendEvent(event);
      else tx.appendSignal(event);
    });
    this.svc.pollFeed();
  }
}
