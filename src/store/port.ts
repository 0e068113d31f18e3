/**
 * The Store port: what the service needs from persistence. Drivers (store/sqlite/ now,
 * postgres later) implement it; only main/platform wiring picks one. The service opens
 * every write through `write()`, which is one transaction holding the write lock.
 */
import type { Card, Comment, Link, StoredEvent, CardEvent, User } from "../domain/types.ts";
import type { FilterNode } from "../domain/filters.ts";

export interface ListQuery {
  /** validated filter (board scope, saved filter, ...) AND-ed into the query */
  filter?: FilterNode;
  typeIds?: string[];
  statuses?: string[];
  owner?: string;
  blocked?: boolean;
  hasLink?: string;
  linkTarget?: string;
  /** full-text query (FTS); also matches full and short ids */
  q?: string;
  sort?: { key: string; desc: boolean };
  /** keyset continuation for the default order: (updated_at, id) strictly below */
  after?: { updated_at: string; id: string };
  /**
   * Pages after the first: order by each card's updated_at as of this event id (the last
   * event when the first page was read), so a card updated between pages keeps its place
   * and every card that existed then is visited exactly once.
   */
  asOfEvent?: number;
  limit: number;
  /** only these cards, looked up by id (take-next re-checks its early candidates under the lock) */
  ids?: readonly string[];
  includeLinks?: boolean;
  includeComments?: boolean;
}

export interface EventQuery {
  afterId?: string;
  types?: string[];
  actor?: string;
  owner?: string;
  cardId?: string;
  /** events whose card currently has one of these type ids */
  cardTypeIds?: string[];
  /** with cardTypeIds: board-scoped events (persisted conditions) of this board match too */
  boardId?: string;
  limit: number;
  /** the last `limit` matching events instead of the first (still returned in id order) */
  newest?: boolean;
}

export interface IdempotencyRecord {
  key: string;
  actor: string;
  request_hash: string;
  status: number;
  body: string;
  created_at: string;
}

/** Reads; available outside transactions (reader connection) and inside them. */
export interface StoreReads {
  getCard(id: string, opts?: { links?: boolean; comments?: boolean }): Card | null;
  /** one page; `keys[i]` is the updated_at that placed `items[i]` (as of `asOfEvent` when given) */
  listCards(q: ListQuery): { items: Card[]; keys: string[] };
  /** oldest unowned candidates (updated_at, id ascending): their ids and statuses only */
  takeNextCandidates(q: Omit<ListQuery, "sort" | "after">): Array<Pick<Card, "id" | "status">>;
  /** how many cards match `q` (every condition of a list but its page: no limit, order or cursor), by status */
  countByStatus(q: Omit<ListQuery, "limit" | "sort" | "after" | "asOfEvent">): Record<string, number>;
  /** targets of outgoing blocking links that are not done; empty when not blocked */
  openBlockers(cardId: string): string[];
  /** cards with an outgoing blocking link to `targetId` */
  blockedBySources(targetId: string): string[];
  listLinks(cardId: string): Link[];
  listComments(cardId: string): Comment[];
  getComment(cardId: string, commentId: string): Comment | null;
  listEvents(q: EventQuery): StoredEvent[];
  lastEventId(): string | null;
  /** condition signals after `afterSeq` (ephemeral, no event id); `afterEvent`: the newest event id when each was written (0 if unknown) */
  listSignals(afterSeq: number, limit: number): Array<{ seq: number; afterEvent: number; event: CardEvent }>;
  lastSignalSeq(): number;
  /** a small value kept beside the data (see Store.readMeta), read in this snapshot or transaction */
  getMeta(key: string): string | null;
  /** events up to this id came from a restore: history, never published live (0: none) */
  historyThrough(): number;
  /** up to `limit` cards matching `filter` that are blocked now (newest first), each with its open blockers */
  blockedCards(filter: FilterNode | undefined, limit: number): Array<{ id: string; blockers: string[] }>;
  /** how many cards match `filter` in `status`, counting at most `cap` (a small cap tests a threshold without a full count) */
  countInStatus(filter: FilterNode | undefined, status: string, cap: number): number;
  /**
   * Cards matching `filter` in one of `statuses` whose `column` (status_since or updated_at)
   * is at or before `before` and after the keyset `after` (column value, id), oldest first.
   */
  dueCards(filter: FilterNode | undefined, statuses: string[] | undefined, column: "status_since" | "updated_at", after: { at: string; id: string } | undefined, before: string, limit: number): Card[];
  /** the earliest status_since / updated_at among cards matching, after `after` (for arming the next timer) */
  nextDue(filter: FilterNode | undefined, statuses: string[] | undefined, column: "status_since" | "updated_at", after: string): string | null;
  /** whether any link has this type (a scan of the links, for a type the definitions no longer declare) */
  hasLinkOfType(typeId: string): boolean;
  /** whether a card of `typeId` carries a schema_version above `version` (a scan of that type's cards) */
  hasCardAboveSchema(typeId: string, version: number): boolean;
  /** How many cards hold each type id and each status (to refuse definitions that drop one in use). */
  /** cards per type and per status, and the highest schema_version per type */
  cardsInUse(): CardsInUse;
  /** What is damaged in the stored data (the file's structure, values that no longer parse), at most 20; empty when whole. A scan of everything: `cards check` only. */
  damage(): string[];
  getUser(id: string): User | null;
  listUsers(): User[];
  getIdempotency(key: string): IdempotencyRecord | null;
  cardCount(): number;
  /** every event in the log, board-scoped ones too (a dump's header counts them) */
  eventCount(): number;
  /** streaming reads for dumps: every user, card (no parts) and event, in a stable order */
  iterateUsers(): Iterable<User>;
  iterateCards(): Iterable<Card>;
  iterateEvents(): Iterable<StoredEvent>;
}

export interface StoreWrites {
  insertCard(card: Card): void;
  /** Updates the row iff its version is still `expectVersion`; returns false otherwise. */
  updateCard(card: Card, expectVersion: number): boolean;
  /** sets owner (and `status`, when given) iff the card is still unowned; false when it was not */
  claimIfUnowned(id: string, owner: string, now: string, status?: string): boolean;
  deleteCard(id: string): void;
  addLink(cardId: string, link: Link): boolean;
  removeLink(cardId: string, typeId: string, target: string): boolean;
  addComment(cardId: string, c: Comment): void;
  updateComment(cardId: string, c: Comment): void;
  appendEvent(e: CardEvent): StoredEvent;
  /** appends a condition signal; returns its sequence number */
  appendSignal(e: CardEvent): number;
  /** drops signals older than `before`, a bounded batch; true when more may be left */
  pruneSignals(before: string): boolean;
  /** drops idempotency records older than `before`, a bounded batch; true when more may be left */
  pruneIdempotency(before: string): boolean;
  /** drops once-keys older than `before`, a bounded batch; true when more may be left */
  pruneOnceKeys(before: string): boolean;
  /** records `key`; false when it was already recorded (once-only effects across processes) */
  claimOnce(key: string, at: string): boolean;
  upsertUser(u: User): void;
  /** sets a meta value (see Store.readMeta) inside this transaction */
  setMeta(key: string, value: string): void;
  /** removes a meta value, or with `prefix` every value whose key starts with `key` */
  deleteMeta(key: string, opts?: { prefix?: boolean }): void;
  /** records that the events up to `seq` are history (a restore wrote them), see historyThrough */
  markHistoryThrough(seq: number): void;
  putIdempotency(r: IdempotencyRecord): void;
  /** restore: an event with its original id (ids must ascend) */
  insertEventWithId(e: StoredEvent): void;
  /**
   * Cards were written without the events that describe them (a restore): indexes derived
   * from the event log (full-text search) are rebuilt from the cards once this commits.
   */
  markSearchStale(): void;
}

export type StoreTx = StoreReads & StoreWrites;

export interface StoreConfig {
  workspaceId: string;
  doneStatus: string;
  /** given as a function, it is called when first needed (a search, or a server's indexer) */
  search: SearchConfig | (() => SearchConfig);
}

export interface Store extends StoreReads {
  readonly driver: string;
  /** runs fn in one write transaction (BEGIN IMMEDIATE under an in-process mutex) */
  write<T>(fn: (tx: StoreTx) => T | Promise<T>): Promise<T>;
  /** runs fn against one consistent read snapshot */
  snapshot<T>(fn: (r: StoreReads) => T): T;
  /**
   * Rejects with `unavailable` when a write would fail now (GET /health): the file
   * replaced, unreachable or migrated under this process, opened read-only, or the disk or the
   * file stopped the last write and none that changed a row committed since (once that
   * failure is 10 s old, a small write of its own tells whether it is over).
   */
  health(): Promise<void>;
  /** true when every write will fail: the file was opened read-only (its disk or the file could not be written), or it is read as it is */
  readOnly(): boolean;
  /**
   * One page of cards (listCards) and the newest event id, read in one snapshot. A
   * long-lived process may read a costly one (a filter over field values, a search) on a
   * thread of its own, so the thread answering requests is not held by it.
   */
  readPage(q: ListQuery): CardListPage | Promise<CardListPage>;
  /** takeNextCandidates, off the calling thread like readPage when costly (a caller's filter) */
  readCandidates(q: Omit<ListQuery, "sort" | "after">): Array<Pick<Card, "id" | "status">> | Promise<Array<Pick<Card, "id" | "status">>>;
  /**
   * Several reads in one snapshot (GET /breaches); a long-lived process runs them on its
   * read thread. Each answer is what the StoreReads method of the same name returns.
   */
  readBatch(calls: readonly ReadCall[]): unknown[] | Promise<unknown[]>;
  /** countByStatus, off the calling thread like readPage when costly */
  readCounts(q: Omit<ListQuery, "limit" | "sort" | "after" | "asOfEvent">): Record<string, number> | Promise<Record<string, number>>;
  /**
   * Makes full-text search (ListQuery.q) answer for every committed write: brings the
   * search index up to date, or (a server) waits for it to be. Called outside
   * snapshot(), before a read that searches.
   */
  prepareSearch(): void | Promise<void>;
  /**
   * Best effort: copies what the WAL holds into the database and empties it (another
   * process reading may hold it back). Before a huge write, so that one failing for a full
   * disk leaves only its own rolled-back frames, which the next close can drop.
   */
  compactLog(): void;
  /** a consistent online copy of the whole database into a new file (SQLite VACUUM INTO) */
  backupTo(path: string): { cards: number };
  /**
   * Called once after opening, before any other use: the workspace id, the done column
   * and the searchable fields (the search index re-indexes the types whose list changed).
   */
  configure(o: StoreConfig): void;
  /** new definitions: the done column and the searchable fields (see configure) */
  reconfigure(o: { workspaceId: string; doneStatus: string; search: SearchConfig }): Promise<void>;
  /** a small value kept beside the data under `key` (caches), readable before configure() */
  readMeta(key: string): string | undefined;
  /** stores it in a transaction of its own; throws when the database cannot be written */
  writeMeta(key: string, value: string): void;
  /**
   * Stores `value` in a transaction of its own if the database is free right now and `key`
   * still holds `expected`; false otherwise (nothing waits: for best-effort records).
   */
  tryWriteMeta(key: string, value: string, expected: string | undefined): boolean;
  close(): void;
}

export interface CardListPage { items: Card[]; keys: string[]; lastEventId: string | null }

/** A read of Store.readBatch: a StoreReads method and its arguments. */
export type ReadCall =
  | { method: "countInStatus"; args: Parameters<StoreReads["countInStatus"]> }
  | { method: "dueCards"; args: Parameters<StoreReads["dueCards"]> }
  | { method: "blockedCards"; args: Parameters<StoreReads["blockedCards"]> };

/** per card type: the field ids indexed for `q` (undefined = every field value) */
export type SearchConfig = Map<string, string[] | undefined>;

/** What the cards that exist hold, counted (definitions checked against them: service/schema-floor.ts). */
export interface CardsInUse {
  /** cards per type */
  types: Map<string, number>;
  /** cards per status */
  statuses: Map<string, number>;
  /** cards per type, then per status */
  typeStatuses: Map<string, Map<string, number>>;
  /** cards per type, then per schema_version */
  schemaVersions: Map<string, Map<number, number>>;
  /** links per link type */
  linkTypes: Map<string, number>;
}
