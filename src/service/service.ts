/**
 * The service: holds the live definitions and the store, resolves actors, and runs every
 * write through `mutate` (one transaction: the change, its durable events and the
 * idempotency record commit together; events are published only after the commit).
 */
import { CardsError, conflictForActor, notFound } from "../domain/errors.ts";
import { nowIso } from "../domain/card.ts";
import { hash128 } from "../domain/hash.ts";
import { assertActorName, givenActor } from "../domain/text.ts";
import type { Board, CardEvent, CardType, Definitions, StoredEvent } from "../domain/types.ts";
import type { Store, StoreTx } from "../store/port.ts";
import type { BlobStore } from "../blobs/port.ts";
import { EventBus, type EventListener } from "../events/bus.ts";
import { Feed, SIGNAL_TTL_MS } from "../events/feed.ts";

export type ServiceMode = "embedded" | "serve" | "mcp";

/** Idempotency records are kept 7 days (DECISIONS: at least 24 hours). */
export const IDEMPOTENCY_TTL_MS = 7 * 24 * 3600 * 1000;

export interface OpContext {
  actor: string;
  /**
   * Idempotency-Key and the hash of the request it came with (its body as canonical
   * JSON); `rawHash`, of the body as sent, matches records stored before bodies were
   * compared as JSON
   */
  idempotency?: { key: string; hash: string; rawHash?: string; status: number };
  /** set by mutate when the answer is a stored replay */
  replayed?: boolean;
}

export interface WriteScope {
  tx: StoreTx;
  now: string;
  actor: string;
  /** appends a durable event in this transaction; published after commit */
  emit(e: EventInput): StoredEvent;
  /** a condition signal: published after commit, and also made durable when listed in persist_conditions */
  signal(e: EventInput): void;
}

export type EventInput = Omit<CardEvent, "actor" | "at" | "scope"> & { scope?: CardEvent["scope"] };

/**
 * An event in wire order (type, actor, at, card_id, scope, board_id, diff: as the store
 * reads events and signals back), so a signal a server publishes live has the same bytes
 * as the one another process reads from the workspace feed.
 */
function wireEvent(e: EventInput, actor: string, at: string): CardEvent {
  const out: Record<string, unknown> = { type: e.type, actor, at };
  if (e.card_id !== undefined) out.card_id = e.card_id;
  out.scope = e.scope ?? "card";
  if (e.board_id !== undefined) out.board_id = e.board_id;
  out.diff = e.diff;
  return out as unknown as CardEvent;
}

/** Thrown inside a transaction to roll it back while still answering (dry runs). */
class DryRunRollback<T> {
  constructor(readonly value: T) {}
}

export interface Subscription {
  /** event types this subscriber asked for; temporal monitors run only while someone asks */
  types?: readonly string[];
}

export class Service {
  readonly bus = new EventBus();
  /** the service itself; a pinned view (pin()) inherits it, so reloads reach the live one */
  readonly origin: Service = this;
  private feed?: Feed;
  /** writes through this service (kept on the origin: pinned views count there too) */
  private writes = 0;
  /** the last prune left old rows behind (a full batch): the next write prunes again */
  private pruneBehind = false;
  private pinned?: Service;
  // made on first use: a one-shot CLI call subscribes to nothing
  private consumers?: Map<EventListener, Subscription>;
  private consumerWatchers?: Set<() => void>;

  constructor(
    public defs: Definitions,
    readonly store: Store,
    readonly blobs: BlobStore,
    readonly root: string,
    readonly mode: ServiceMode,
    private readonly env: Record<string, string | undefined>,
  ) {}

  // --- actors ---

  /** SPEC Authentication 2: header, then CARDS_ACTOR, then settings.default_user. */
  resolveActor(header?: string | null): string | undefined {
    // a value given but blank is refused, not passed over for the next one
    return givenActor(header ?? undefined, "the actor") ?? givenActor(this.env.CARDS_ACTOR, "CARDS_ACTOR")
      ?? (this.defs.workspace.settings.default_user || undefined);
  }

  requireActor(header?: string | null): string {
    const a = this.resolveActor(header);
    if (!a) throw noActor();
    // any string (SPEC), but one that fits where it is written: created_by, event actors
    assertActorName(a);
    return a;
  }

  // --- definitions ---

  /**
   * A view of this service whose definitions stay the ones live now, so one request sees
   * either the old or the new definitions across a reload, never a mix.
   */
  pin(): Service {
    if (this.mode === "embedded") return this; // a one-shot embedded service never reloads
    const root = this.origin;
    // one view per definitions set, shared by the requests that start while it is live
    if (root.pinned?.defs !== root.defs) root.pinned = Object.create(root, { defs: { value: root.defs, writable: false, enumerable: true } }) as Service;
    return root.pinned;
  }

  cardType(id: string, field = "type_id"): CardType {
    const t = this.defs.cardTypes.get(id);
    if (!t) {
      throw new CardsError("validation_failed", `${JSON.stringify(id)} is not a card type of this workspace`, {
        field, value: id, valid_options: [...this.defs.cardTypes.keys()],
      });
    }
    return t;
  }

  board(id: string): Board {
    const b = this.defs.boards.get(id);
    if (!b) throw notFound("board", id, [...this.defs.boards.keys()], "board_id");
    return b;
  }

  // --- writes ---

  /**
   * Runs one write transaction. Replays a stored answer for a known Idempotency-Key
   * (a different request under the same key is 422); `dryRun` rolls everything back.
   */
  async mutate<T>(ctx: OpContext, fn: (w: WriteScope) => T | Promise<T>, opts: { dryRun?: boolean } = {}): Promise<T> {
    // every surface resolves the actor first (requireActor); a write that reaches here
    // without one (a tool wrongly marked read-only) is refused, never recorded as by ""
    if (!ctx.actor) throw noActor();
    const idem = opts.dryRun ? undefined : ctx.idempotency;
    const events: StoredEvent[] = [];
    const signals: Array<{ seq: number; event: CardEvent }> = [];
    let result: T;
    /** what the prune in this write left (known once it commits: a rollback undoes the prune too) */
    let behindAfter: boolean | undefined;
    try {
      result = await this.store.write(async (tx) => {
        if (idem) {
          const stored = storedAnswer<T>(tx, ctx, idem);
          if (stored) return stored.answer;
        }
        const now = nowIso();
        const persisted = this.defs.workspace.settings.persist_conditions ?? [];
        const build = (e: EventInput): CardEvent => wireEvent(e, ctx.actor, now);
        const scope: WriteScope = {
          tx, now, actor: ctx.actor,
          emit: (e) => {
            const stored = tx.appendEvent(build(e));
            events.push(stored);
            return stored;
          },
          signal: (e) => {
            const event = build(e);
            if (persisted.includes(e.type)) events.push(tx.appendEvent(event));
            else signals.push({ seq: tx.appendSignal(event), event });
          },
        };
        // behind: a prune left rows (this process knows; a process's first write asks the
        // database, so one-shot calls share the catching up)
        const origin = this.origin;
        const first = ++origin.writes === 1;
        if (first) origin.pruneBehind = tx.getMeta(PRUNE_BEHIND_KEY) === "1";
        behindAfter = undefined;
        if (pruneDue(origin.writes, Math.random()) || origin.pruneBehind) {
          behindAfter = prune(tx);
          if (behindAfter !== origin.pruneBehind) tx.setMeta(PRUNE_BEHIND_KEY, behindAfter ? "1" : "0");
        }
        const value = await fn(scope);
        if (opts.dryRun) throw new DryRunRollback(value);
        if (idem) {
          tx.putIdempotency({
            key: scopedKey(ctx.actor, idem.key), actor: ctx.actor, request_hash: idem.hash, status: idem.status,
            body: JSON.stringify(value), created_at: now,
          });
        }
        return value;
      });
    } catch (e) {
      if (e instanceof DryRunRollback) return e.value as T;
      conflictForActor(e, ctx.actor);
      throw e;
    }
    if (behindAfter !== undefined) this.origin.pruneBehind = behindAfter;
    this.feed?.publishCommitted(events, signals);
    return result;
  }

  /**
   * For a write that is not one transaction (a reload, a board file): the answer stored
   * under this call's Idempotency-Key, if any (a different request under the key is 422).
   * The caller runs its work only when there is none, then stores its answer with
   * `mutate(ctx, () => answer)`.
   */
  priorAnswer<T>(ctx: OpContext): T | undefined {
    return ctx.idempotency ? storedAnswer<T>(this.store, ctx, ctx.idempotency)?.answer : undefined;
  }

  /** Records a condition signal outside any card write (e.g. transition_rejected after a refused move). */
  async signal(ctx: OpContext, e: EventInput): Promise<void> {
    const persisted = (this.defs.workspace.settings.persist_conditions ?? []).includes(e.type);
    await this.store.write((tx) => {
      // its time taken with the lock held: never before an event logged ahead of it
      const event = wireEvent(e, ctx.actor, nowIso());
      return persisted ? tx.appendEvent(event) : tx.appendSignal(event);
    });
    this.feed?.poll();
  }

  // --- live events ---

  /**
   * Subscribes to live events (durable ones with ids, condition signals without), from
   * this process and, within a second, from other processes on the workspace.
   */
  subscribe(fn: EventListener, sub: Subscription = {}): () => void {
    if (this !== this.origin) return this.origin.subscribe(fn, sub);
    if (!this.feed) {
      this.feed = new Feed(this.store, this.bus);
      this.feed.start();
    }
    const consumers = (this.consumers ??= new Map());
    consumers.set(fn, sub);
    const off = this.bus.subscribe(fn);
    if (sub.types?.length && this.consumerWatchers) for (const w of this.consumerWatchers) w();
    return () => {
      off();
      consumers.delete(fn);
    };
  }

  /** Calls `fn` whenever a subscriber asking for specific types arrives. */
  onConsumersChanged(fn: () => void): () => void {
    if (this !== this.origin) return this.origin.onConsumersChanged(fn);
    const watchers = (this.consumerWatchers ??= new Set());
    watchers.add(fn);
    return () => { watchers.delete(fn); };
  }

  /** The id of the last durable event published live (SSE replay hands off after it). */
  get liveCursor(): number {
    return this.feed?.lastEventSeq ?? 0;
  }

  /** Publishes what other processes committed, now (tests and shutdown use it). */
  pollFeed(): void {
    this.feed?.poll();
  }

  /** True when someone consumes this event type live: a subscriber that asked for it, or persistence. */
  hasConsumer(type: string): boolean {
    if ((this.defs.workspace.settings.persist_conditions ?? []).includes(type)) return true;
    if (this.consumers) for (const sub of this.consumers.values()) if (sub.types?.includes(type)) return true;
    return false;
  }

  close(): void {
    this.feed?.stop();
    this.store.close();
  }
}

function noActor(): CardsError {
  return new CardsError("actor_required", "no actor: writes need an identity", {
    hint: "name the actor: --actor or CARDS_ACTOR (CLI), the X-Service-Actor header (HTTP), or set settings.default_user in workspace.json",
  });
}

/** Writes between two prunes of old signals, idempotency records and once-keys. */
export const PRUNE_EVERY = 200;

/** Meta key: "1" while a prune left expired rows behind (a full batch). */
const PRUNE_BEHIND_KEY = "prune_behind";

/**
 * Drops expired signals, idempotency records and once-keys, a bounded batch of each
 * (store side). True when rows may be left: every write, in any process, then prunes
 * until one comes back short, so rows made faster than a batch per PRUNE_EVERY writes
 * (hook runs' once-keys, several per event) never pile up, and no write stalls long.
 */
function prune(tx: StoreTx): boolean {
  const now = Date.now();
  const signals = tx.pruneSignals(new Date(now - SIGNAL_TTL_MS).toISOString());
  const keyed = tx.pruneIdempotency(new Date(now - IDEMPOTENCY_TTL_MS).toISOString());
  const once = tx.pruneOnceKeys(new Date(now - IDEMPOTENCY_TTL_MS).toISOString());
  return signals || keyed || once;
}

/**
 * Whether a process's `writes`-th write prunes: every PRUNE_EVERY-th, and at its first
 * when `draw` (uniform in [0, 1)) falls under 1 / PRUNE_EVERY, so one-shot CLI calls (one
 * write each) prune at the same rate on average.
 */
export function pruneDue(writes: number, draw: number): boolean {
  return writes % PRUNE_EVERY === 0 || (writes === 1 && draw < 1 / PRUNE_EVERY);
}

/**
 * Hash of a request for idempotency comparison: method, path, query (sorted) and body
 * (a DELETE ?version=2 under the key of a DELETE ?version=1 is another request). The
 * caller passes the body as canonical JSON, so a retry that serialises it again (other
 * whitespace or key order) is the same request.
 */
export function requestHash(method: string, path: string, body: unknown, query?: Record<string, string>): string {
  const keys = query ? Object.keys(query).sort() : [];
  const qs = keys.length ? `?${keys.map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(query![k]!)}`).join("&")}` : "";
  return hash128(`${method} ${path}${qs}\n${typeof body === "string" ? body : JSON.stringify(body ?? null)}`);
}

/**
 * Idempotency keys belong to the actor that sent them: two agents that happen to pick the
 * same key never get each other's answers (a take-next replay would hand one agent the
 * card the other claimed).
 */
/**
 * The answer stored under this call's Idempotency-Key (marking the call replayed), or
 * undefined; another request under the key is 422. A record stored before keys were
 * scoped by actor still replays for its own actor.
 */
function storedAnswer<T>(reads: Pick<StoreTx, "getIdempotency">, ctx: OpContext, idem: NonNullable<OpContext["idempotency"]>): { answer: T } | undefined {
  const rec = reads.getIdempotency(scopedKey(ctx.actor, idem.key)) ?? ownLegacyRecord(reads.getIdempotency(idem.key), ctx.actor);
  // a key is kept IDEMPOTENCY_TTL_MS (docs/limits.md), whenever a prune last ran: past it
  // the call runs as new (its answer replaces the old record)
  if (!rec || Date.parse(rec.created_at) < Date.now() - IDEMPOTENCY_TTL_MS) return undefined;
  if (rec.request_hash !== idem.hash && rec.request_hash !== idem.rawHash) {
    throw new CardsError("idempotency_key_reused", "this Idempotency-Key was used with a different request", {
      value: idem.key, hint: "use a new key for a new request",
    });
  }
  ctx.replayed = true;
  return { answer: JSON.parse(rec.body) as T };
}

function scopedKey(actor: string, key: string): string {
  return `${actor}\u001f${key}`;
}

function ownLegacyRecord<R extends { actor: string }>(rec: R | null, actor: string): R | null {
  return rec && rec.actor === actor ? rec : null;
}
