/**
 * Following the SSE stream (GET /v1/events/stream). Card events are batched into one
 * refresh of the touched cards; definition reloads re-read the workspace; condition and
 * card events tell the page its breaches may have changed. The browser
 * reconnects on its own with Last-Event-ID; when it gives up, we reopen with `since=` the
 * last event id we saw, with a growing delay. A reconnect before any event id was seen
 * cannot resume, so the board is re-read instead.
 */
import { EVENT_TYPES, type ServiceEvent } from "./types.ts";

export type LiveStatus = "live" | "connecting" | "offline";

export interface LiveHandlers {
  cards(ids: string[]): void;
  definitions(): void;
  /** an event that may start or end a breach (a condition, or any card change) */
  conditions(e: ServiceEvent): void;
  /** the stream came back but no event id was seen yet, so nothing could be resumed: re-read */
  resync(): void;
  status(s: LiveStatus): void;
}

const BATCH_MS = 40;
/** condition events about a card that leave the card itself unchanged */
const SIGNALS_ONLY = new Set(["status_timeout", "card_idle", "transition_rejected"]);
/**
 * Naming every type makes this page a consumer of each: the server arms the temporal
 * conditions (status_timeout, card_idle) only for a stream that asks for them.
 */
const TYPES = `types=${EVENT_TYPES.join(",")}`;

export function connectLive(handlers: LiveHandlers): { lastEventId(): string; close(): void } {
  let lastId = "";
  let es: EventSource | null = null;
  let retry = 0;
  let closed = false;
  let broken = false;
  let batch = new Set<string>();
  let flush: ReturnType<typeof setTimeout> | undefined;

  const onEvent = (m: MessageEvent<string>) => {
    if (m.lastEventId) lastId = m.lastEventId;
    let e: ServiceEvent;
    try { e = JSON.parse(m.data) as ServiceEvent; } catch { return; }
    if (e.type === "definition_reloaded") { handlers.definitions(); return; }
    if (e.type === "definition_reload_failed") return;
    handlers.conditions(e);
    if (!e.card_id || SIGNALS_ONLY.has(e.type)) return; // lane counts are drawn from the cards themselves
    batch.add(e.card_id);
    if (!flush) {
      flush = setTimeout(() => {
        flush = undefined;
        const ids = [...batch];
        batch = new Set();
        handlers.cards(ids);
      }, BATCH_MS);
    }
  };

  const open = () => {
    if (closed) return;
    handlers.status("connecting");
    const url = `/v1/events/stream?${TYPES}${lastId ? `&since=${encodeURIComponent(lastId)}` : ""}`;
    const src = new EventSource(url);
    es = src;
    for (const t of EVENT_TYPES) src.addEventListener(t, onEvent as EventListener);
    src.onopen = () => {
      retry = 0;
      handlers.status("live");
      if (broken && !lastId) handlers.resync();
      broken = false;
    };
    src.onerror = () => {
      broken = true;
      if (src.readyState === EventSource.CLOSED) {
        handlers.status("offline");
        const delay = Math.min(1000 * 2 ** retry++, 15_000);
        setTimeout(() => { if (es === src) open(); }, delay);
      } else {
        handlers.status("connecting");
      }
    };
  };

  open();
  return {
    lastEventId: () => lastId,
    close: () => { closed = true; es?.close(); es = null; },
  };
}
