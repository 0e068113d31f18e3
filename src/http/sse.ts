/**
 * GET /v1/events/stream: Server-Sent Events. Event name = event type, data = event JSON;
 * durable events carry `id`, condition signals none. Resume with Last-Event-ID or
 * `since` (replay of at most 500, then live). A consumer whose buffer fills gets
 * `: dropped, reconnect` and is closed; publishers never wait on it (stack.md §1.5).
 */
import { eventMatcher, onReload, parseStreamFilter, replayEvents, STREAM_REPLAY_LIMIT, type Service, type StreamFilter } from "../service/index.ts";
import { CardsError } from "../domain/errors.ts";
import { formatEventId, parseEventId } from "../domain/ids.ts";
import type { CardEvent } from "../domain/types.ts";
import { queryParams } from "../api/query.ts";

export const SSE_BUFFER_BYTES = 256 * 1024;
/**
 * Replayed events read per page, as the client reads: a stream holds one page, not its
 * whole replay (500 events of 64 KiB comments held 18 MB a stream, and a few hundred
 * streams resuming at once took the server to gigabytes).
 */
const REPLAY_PAGE = 4;
export const SSE_KEEPALIVE_MS = 15_000;
/** open streams one server keeps at most (CARDS_MAX_STREAMS overrides; docs/limits.md) */
export const SSE_MAX_STREAMS = 1000;

const encoder = new TextEncoder();
const open = new Set<() => void>();
let maxStreams = SSE_MAX_STREAMS;

/** Sets how many streams may be open at once; the next one past it is refused with 503. */
export function setMaxStreams(n: number): void {
  maxStreams = n;
}

/** Closes every open stream (graceful shutdown). */
export function closeAllStreams(): void {
  for (const close of [...open]) close();
}

/**
 * The X-Service-Actor header. Sent twice, it arrives joined with ", " ("ada, bob"), which
 * would act as a made-up identity: refused (a user id holds no comma or space).
 */
export function actorHeader(h: Headers): string | undefined {
  const v = utf8Header(h.get("x-service-actor") ?? undefined);
  if (v?.includes(", ")) {
    throw new CardsError("bad_request", `X-Service-Actor ${JSON.stringify(v)} names more than one actor: the header was sent more than once, or holds ", "`, {
      field: "X-Service-Actor", hint: "send one X-Service-Actor header with one actor",
    });
  }
  return v;
}

/**
 * Header values arrive as Latin-1: a client that sent UTF-8 (`X-Service-Actor: josé`)
 * is read back as UTF-8; anything that does not decode stays as it came.
 */
export function utf8Header(v: string | undefined): string | undefined {
  if (v === undefined || !/[\u0080-\u00ff]/.test(v)) return v;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(v, (c) => c.charCodeAt(0)));
  } catch {
    return v;
  }
}

export function eventStream(svc: Service, req: Request): Response {
  // each stream holds a socket, a buffer and a timer: a client that opens streams in a
  // loop and never closes them would otherwise take every descriptor the server has
  if (open.size >= maxStreams) {
    throw new CardsError("unavailable", `too many open event streams: this server keeps at most ${maxStreams}`, {
      hint: "close streams no longer read and retry; CARDS_MAX_STREAMS raises the limit",
    });
  }
  const url = new URL(req.url);
  const q = queryParams(url.search, "/events/stream");
  const f = parseStreamFilter(svc, q, req.headers.get("last-event-id") ?? undefined, svc.resolveActor(actorHeader(req.headers)));
  const matches = eventMatcher(svc, f);

  let cleanup = () => {};
  /** the page of the replay being handed to the stream: pages are read as the client reads */
  let replay: Uint8Array[] = [];
  let next = 0;
  let readReplayPage = (): Uint8Array[] | undefined => undefined;
  /** the comment that ends the replay (where it left off), sent before the live frames */
  let tail: Uint8Array | undefined;
  /** live frames that arrived during the replay (they follow it); undefined once live */
  let held: Uint8Array[] | undefined = [];
  let heldBytes = 0;
  let pump = (): void => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let closed = false;
      const drop = (): false => {
        controller.enqueue(DROPPED);
        cleanup();
        return false;
      };
      const write = (bytes: Uint8Array): boolean => {
        if (closed) return false;
        if (held) {
          // replaying: a client that does not read while live events pile up is dropped
          held.push(bytes);
          heldBytes += bytes.byteLength;
          return heldBytes > SSE_BUFFER_BYTES ? drop() : true;
        }
        if ((controller.desiredSize ?? 1) <= 0) return drop();
        controller.enqueue(bytes);
        return true;
      };
      // The replay (at most 500 events, possibly megabytes) is handed over as the client
      // reads, never more than the buffer ahead: enqueued at once, a replay larger than the
      // buffer dropped even a client reading at full speed.
      pump = () => {
        while (held && !closed && (controller.desiredSize ?? 1) > 0) {
          if (next < replay.length) {
            controller.enqueue(replay[next++]!);
            continue;
          }
          const page = readReplayPage();
          if (page) {
            replay = page;
            next = 0;
            continue;
          }
          replay = [];
          if (tail) controller.enqueue(tail);
          tail = undefined;
          const live = held;
          held = undefined;
          for (const b of live) controller.enqueue(b);
        }
      };
      const member: Member = { write, from: 0 };
      let group: StreamGroup | undefined;
      const keepalive = setInterval(() => write(KEEPALIVE), SSE_KEEPALIVE_MS);
      cleanup = () => {
        if (closed) return;
        closed = true;
        group?.leave(member);
        clearInterval(keepalive);
        open.delete(cleanup);
        try { controller.close(); } catch { /* already closed */ }
      };
      // a stream of a board a reload removes ends (its definition_reloaded goes out first):
      // it would go on sending the board's cards' events while GET /boards/{id} is 404
      if (f.board_id !== undefined) {
        const board = f.board_id;
        const offReload = onReload(svc.origin, (defs) => {
          if (defs.boards.has(board)) return;
          setTimeout(() => {
            if (!closed) controller.enqueue(encoder.encode(`: board ${board} was removed\n\n`));
            cleanup();
          }, SSE_FLUSH_MAX_MS * 3);
        });
        const close = cleanup;
        cleanup = () => { offReload(); close(); };
      }
      open.add(cleanup);
      controller.enqueue(CONNECTED);
      // subscribing, replay and joining are synchronous: no event is published in between.
      // The replay stops at what the feed has published: a later event (another process's
      // write the feed has not polled yet) comes live, once, with the next poll
      // first publish what other processes committed since the feed last polled: a client
      // resuming after an event the feed has not published yet would otherwise get it
      // live, a second time (the replay below stops where the feed stands)
      try { svc.pollFeed(); } catch { /* a busy database: the timer polls again */ }
      group = groupFor(svc, f, matches);
      // a restored log is history the feed never publishes: replay reads it whole
      // the replay is the log up to `live` (later events come live): it is read in pages as
      // the client reads, the same rows whenever (the log below `live` does not change)
      const live = Math.max(svc.liveCursor, svc.store.historyThrough());
      const reader = replayReader(svc, f, matches, live);
      readReplayPage = () => {
        const page = reader.next();
        if (page) return page;
        // where the replay left off, as a comment before the live events: the bound of 500
        // reached (more events follow the last one replayed: a consumer reconnects with its
        // id, or pages GET /events, for the rest), or else the event id the stream is live
        // after (a consumer that printed nothing yet resumes there, not from the start)
        tail = reader.truncatedAfter !== undefined
          ? encoder.encode(`: replay truncated after ${reader.truncatedAfter}\n\n`)
          : encoder.encode(`: live after ${formatEventId(live)}\n\n`);
        readReplayPage = () => undefined;
        return undefined;
      };
      group.join(member);
      pump();
    },
    pull() {
      pump();
    },
    cancel() {
      cleanup();
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: SSE_BUFFER_BYTES }));

  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      connection: "keep-alive",
    },
  });
}

/**
 * A stream's replay, page by page: the durable events after `f.since` up to `live` that
 * match, at most STREAM_REPLAY_LIMIT read. `next()` answers the next page's frames
 * (undefined when done); `truncatedAfter` is then the last event read when the limit
 * stopped it (more may follow), else undefined.
 */
function replayReader(svc: Service, f: StreamFilter, matches: (e: CardEvent) => boolean, live: number): { next(): Uint8Array[] | undefined; truncatedAfter?: string } {
  let after = f.since;
  let read = 0;
  const r: { next(): Uint8Array[] | undefined; truncatedAfter?: string } = {
    next() {
      while (after !== undefined) {
        if (read >= STREAM_REPLAY_LIMIT) {
          r.truncatedAfter = after;
          after = undefined;
          break;
        }
        const want = Math.min(REPLAY_PAGE, STREAM_REPLAY_LIMIT - read);
        const rows = replayEvents(svc, { ...f, since: after }, want);
        const page: Uint8Array[] = [];
        for (const e of rows) {
          if ((parseEventId(e.id) ?? 0) > live) { after = undefined; break; }
          read++;
          after = e.id;
          if (matches(e)) page.push(frame(e));
        }
        if (rows.length < want) after = undefined;
        if (page.length) return page;
      }
      return undefined;
    },
  };
  return r;
}

/** One stream's side of a group: how to write to it, and where in the group's batch it joined. */
interface Member {
  write(bytes: Uint8Array): boolean;
  /** frames of the current batch published before this member joined (not sent to it) */
  from: number;
}

/**
 * The streams with the same filter share one bus subscription, one match per event and
 * one encoded batch per flush: with hundreds of watchers of one board, a write costs one
 * match and each flush one buffer, whatever the number of streams (only the socket
 * writes stay per stream).
 */
class StreamGroup {
  readonly members = new Set<Member>();
  private pending: Uint8Array[] = [];
  private readonly unsubscribe: () => void;

  constructor(svc: Service, private readonly key: string, private readonly groups: Map<string, StreamGroup>, matches: (e: CardEvent) => boolean, types?: string[]) {
    this.unsubscribe = svc.subscribe((e) => {
      if (!matches(e)) return;
      if (this.pending.length === 0) schedule(this);
      this.pending.push(frame(e));
    }, { types });
  }

  join(m: Member): void {
    m.from = this.pending.length;
    this.members.add(m);
  }

  leave(m: Member): void {
    this.members.delete(m);
    if (this.members.size > 0) return;
    this.unsubscribe();
    flushers.delete(this);
    this.groups.delete(this.key);
  }

  /**
   * Takes the pending batch and adds one socket write per member to `writes` (run later,
   * a slice per event-loop turn; a member that left by then writes nothing).
   */
  takeBatch(writes: Array<() => void>): void {
    const chunks = this.pending;
    this.pending = [];
    if (chunks.length === 0) return;
    let all: Uint8Array | undefined;
    for (const m of this.members) {
      const from = m.from;
      m.from = 0;
      if (from >= chunks.length) continue;
      writes.push(() => { m.write(from === 0 ? (all ??= concat(chunks)) : concat(chunks.slice(from))); });
    }
  }
}

const groupsByService = new WeakMap<Service, Map<string, StreamGroup>>();

function groupFor(svc: Service, f: StreamFilter, matches: (e: CardEvent) => boolean): StreamGroup {
  let groups = groupsByService.get(svc.origin);
  if (!groups) groupsByService.set(svc.origin, (groups = new Map()));
  const { card_id, board_id, actor, owner } = f;
  // a board's card types are not part of the key: the matcher reads them from the definitions live now
  const key = JSON.stringify([f.types ? [...f.types].sort() : null, card_id, board_id, actor, owner]);
  let g = groups.get(key);
  if (!g) groups.set(key, (g = new StreamGroup(svc, key, groups, matches, f.types)));
  return g;
}

/**
 * How long live events wait to be written together: SSE_FLUSH_MS, plus 1 ms per 16 open
 * streams, at most SSE_FLUSH_MAX_MS. A socket write costs ~10 µs here whatever its size,
 * so with hundreds of streams longer batches keep writers fast (bench/sse: 200 streams,
 * p99 delivery ~30 ms against a 50 ms target); a few watchers get events within ~5 ms.
 */
export const SSE_FLUSH_MS = 5;
export const SSE_FLUSH_MAX_MS = 20;

export function flushDelayMs(openStreams: number): number {
  return Math.min(SSE_FLUSH_MAX_MS, SSE_FLUSH_MS + openStreams / 16);
}
/**
 * Socket writes per event-loop turn during a flush. Writing to hundreds of streams at
 * once held the loop ~3-4 ms, and every request that arrived meanwhile waited for it;
 * between slices requests get the loop (bench/sse: paced writers' latency).
 */
export const SSE_FLUSH_SLICE = 32;

const flushers = new Set<StreamGroup>();
let flushTimer: ReturnType<typeof setTimeout> | undefined;
/** a flush is writing its slices: the next one starts after it, so each stream keeps its order */
let flushing = false;

function schedule(group: StreamGroup): void {
  flushers.add(group);
  if (!flushing) flushTimer ??= setTimeout(flush, flushDelayMs(open.size));
}

function flush(): void {
  flushTimer = undefined;
  const writes: Array<() => void> = [];
  for (const g of flushers) g.takeBatch(writes);
  flushers.clear();
  flushing = true;
  let i = 0;
  const slice = (): void => {
    for (const end = Math.min(writes.length, i + SSE_FLUSH_SLICE); i < end; i++) writes[i]!();
    if (i < writes.length) {
      setImmediate(slice);
      return;
    }
    flushing = false;
    if (flushers.size > 0) flushTimer ??= setTimeout(flush, flushDelayMs(open.size));
  };
  slice();
}

function concat(chunks: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const c of chunks) size += c.byteLength;
  const out = new Uint8Array(size);
  let o = 0;
  for (const c of chunks) { out.set(c, o); o += c.byteLength; }
  return out;
}

const DROPPED = encoder.encode(": dropped, reconnect\n\n");
const KEEPALIVE = encoder.encode(": keepalive\n\n");
const CONNECTED = encoder.encode(": connected\n\n");
const frames = new WeakMap<CardEvent, Uint8Array>();

/** The SSE frame of an event, encoded once however many subscribers receive it. */
function frame(e: CardEvent): Uint8Array {
  let f = frames.get(e);
  if (!f) frames.set(e, (f = encoder.encode(`event: ${e.type}\n${e.id ? `id: ${e.id}\n` : ""}data: ${JSON.stringify(e)}\n\n`)));
  return f;
}
