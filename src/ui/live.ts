/**
 * Following the SSE stream (GET /v1/events/stream). Card events are batched into one
 * refresh of the touched cards; definition reloads re-read the workspace; condition and
 * card events tell the page its breaches may have changed. The browser
 * reconnects on its own with Last-Event-ID; when it gives up, or has not got through for
 * OFFLINE_AFTER_MS, we reopen with `since=` the last event id we saw, with a growing delay,
 * and the status says "offline" with the time of the next attempt. After every reconnect
 * the page re-reads the workspace and the board: a replay stops at 500 events, and
 * definitions edited while a server was down are announced to nobody.
 */
import { EVENT_TYPES, type ServiceEvent } from "./types.ts";

export type LiveStatus = "live" | "connecting" | "offline";

/** Past this long without the stream, the page says it is offline and retries on its own schedule. */
export const OFFLINE_AFTER_MS = 10_000;

export interface LiveHandlers {
  cards(ids: string[]): void;
  definitions(): void;
  /** an event that may start or end a breach (a condition, or any card change) */
  conditions(e: ServiceEvent): void;
  /** the stream came back after a break: re-read what it may have missed */
  resync(): void;
  /** `retryAt`: when the next attempt to reconnect starts (ms since the epoch), once offline */
  status(s: LiveStatus, retryAt?: number): void;
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
  /** when the stream last broke (0: it is up) */
  let downSince = 0;
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

  /** Closes the source and opens a new one after a growing delay. */
  const retryLater = (src: EventSource) => {
    src.close();
    const delay = Math.min(1000 * 2 ** retry++, 15_000);
    handlers.status("offline", Date.now() + delay);
    setTimeout(() => { if (es === src) open(); }, delay);
  };

  const open = () => {
    if (closed) return;
    if (!downSince) handlers.status("connecting");
    const url = `/v1/events/stream?${TYPES}${lastId ? `&since=${encodeURIComponent(lastId)}` : ""}`;
    const src = new EventSource(url);
    es = src;
    for (const t of EVENT_TYPES) src.addEventListener(t, onEvent as EventListener);
    src.onopen = () => {
      retry = 0;
      downSince = 0;
      handlers.status("live");
      // what happened while the stream was down may not all come back: the replay after
      // the last id stops at 500 events, and a restarted server announces no definitions
      // edited meanwhile (SPEC: a consumer reconciles after opening the stream)
      if (broken) handlers.resync();
      broken = false;
    };
    src.onerror = () => {
      broken = true;
      if (!downSince) {
        downSince = Date.now();
        // a browser retry that hangs reports nothing: look again once the grace time is over
        setTimeout(() => { if (es === src && src.readyState !== EventSource.OPEN) retryLater(src); }, OFFLINE_AFTER_MS);
      }
      // refused, not lost (a browser closes a source the server answers with an error): a
      // since past the log's end (the workspace put back from a backup, or another one on
      // this address) is refused every time; start from the live edge instead, and re-read
      if (src.readyState === EventSource.CLOSED && lastId) {
        void sinceRefused(url).then((refused) => {
          if (refused) lastId = "";
          if (es === src) retryLater(src);
        });
        return;
      }
      // the browser's own retries (readyState CONNECTING) say nothing of when the next one runs
      if (src.readyState === EventSource.CLOSED || Date.now() - downSince >= OFFLINE_AFTER_MS) retryLater(src);
      else handlers.status("connecting");
    };
  };

  open();
  return {
    lastEventId: () => lastId,
    close: () => { closed = true; es?.close(); es = null; },
  };
}

/** Whether the server refuses the stream's `since` (400 naming it), read without opening a stream. */
async function sinceRefused(url: string): Promise<boolean> {
  const stop = new AbortController();
  try {
    const res = await fetch(url, { signal: stop.signal, headers: { accept: "text/event-stream" } });
    if (res.status !== 400) return false;
    return ((await res.json()) as { field?: string }).field === "since";
  } catch {
    return false;
  } finally {
    stop.abort(); // a stream that opened meanwhile is not kept
  }
}
