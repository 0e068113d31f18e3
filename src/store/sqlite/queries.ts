/**
 * Every SQL statement of the SQLite driver, over one connection. The same object serves
 * reads outside a transaction and reads + writes inside one (the caller holds the lock).
 */
import { BLOCKING_LINK_TYPES, DURABLE_CARD_EVENTS, type Card, type CardEvent, type Comment, type Link, type StoredEvent, type User } from "../../domain/types.ts";

/** The events that change a card (and its updated_at): a persisted condition does not. */
const CARD_FACTS = DURABLE_CARD_EVENTS.map((t) => `'${t}'`).join(",");
import type { CardsInUse, EventQuery, IdempotencyRecord, ListQuery, ReadCall, SearchConfig, StoreReads, StoreTx } from "../port.ts";
import { sqliteErrorCode, type SqliteDb, type SqlValue } from "../../platform/sqlite.ts";
import { formatEventId, parseEventId } from "../../domain/ids.ts";
import { byCodePoint, canonicalCard } from "../../domain/card.ts";
import type { filterToSql as FilterToSql } from "./filter-sql.ts";
import { sortToSql } from "./sort-sql.ts";
import { cardParams, checkVerdicts, rowToCard, rowsToCards, rowToComment, rowToEvent, rowsToEvents, rowToLink, rowToUser, toFtsQuery } from "./rows.ts";
import { SEARCH_EPOCH_KEY, SEARCH_SCHEMA_NAME as S, searchIndexDamaged } from "./search-names.ts";

/** meta key: the newest event id a restore wrote (StoreReads.historyThrough) */
const HISTORY_THROUGH_KEY = "history_through";
/** Rows one prune deletes or looks at, at most: a backlog goes over several writes, none stalls. */
const PRUNE_BATCH = 1000;
/** Meta key: the last temporal once-key the previous prune looked at ("" from the start). */
const ONCE_PRUNE_CURSOR_KEY = "once_keys_prune_after";

/** The list order when no `sort` is given (SPEC): the newest change first, ties by id. */
const DEFAULT_ORDER = "c.updated_at DESC, c.id DESC";
/** take-next's candidate order (SPEC): the oldest change first, ties by id. */
const TAKE_NEXT_ORDER = "c.updated_at ASC, c.id ASC";

/** BLOCKING_LINK_TYPES as an SQL list, built when first needed (ids are [a-z0-9-]: quoting is enough). */
let blockingList: string | undefined;
function blockingTypesSql(): string {
  if (blockingList === undefined) {
    let list = "";
    for (const t of BLOCKING_LINK_TYPES) list += `${list ? ", " : ""}'${t}'`;
    blockingList = list;
  }
  return blockingList;
}
/** Past this many search hits a list walks the updated_at index instead of sorting the hits. */
const MANY_HITS = 1000;

// the filter compiler loads on a call's first filter: a plain get, list or create has none
let filterToSql: typeof FilterToSql | undefined;
const filterSql = (): typeof FilterToSql => (filterToSql ??= (require("./filter-sql.ts") as typeof import("./filter-sql.ts")).filterToSql);

const CARD_COLS = "c.id, c.type_id, c.schema_version, c.title, c.status, c.fields, c.owner, c.tags, c.version, c.created_at, c.updated_at, c.status_since, c.created_by";
// hot statements as constants: the statement cache hashes its key, and a string built per call is hashed anew
const GET_CARD_SQL = `SELECT ${CARD_COLS} FROM cards c WHERE c.id = ?`;
const GET_FULL_CARD_SQL = `SELECT ${CARD_COLS},
      (SELECT json_group_array(json_object('type_id', type_id, 'target', target, 'note', note, 'created_by', created_by, 'created_at', created_at))
         FROM (SELECT * FROM links WHERE card_id = c.id ORDER BY created_at, type_id, target)) AS links_json,
      (SELECT json_group_array(json_object('id', id, 'author', author, 'body', body, 'created_at', created_at, 'edited_at', edited_at))
         FROM (SELECT * FROM comments WHERE card_id = c.id ORDER BY created_at, id)) AS comments_json
      FROM cards c WHERE c.id = ?`;

export interface QueryConfig {
  workspaceId: string;
  doneStatus: string;
  search: SearchConfig;
}

export class SqliteQueries implements StoreTx {
  /** set once the search index is attached to this connection (Store.prepareSearch) */
  searchAttached = false;

  constructor(private readonly db: SqliteDb, readonly config: QueryConfig) {}

  // --- cards: reads ---

  getCard(id: string, opts: { links?: boolean; comments?: boolean } = {}): Card | null {
    if (opts.links && opts.comments) return this.getFullCard(id);
    const r = this.db.query(GET_CARD_SQL).get(id);
    if (!r) return null;
    const card = rowToCard(r, this.config.workspaceId);
    if (opts.links) card.links = this.listLinks(id);
    if (opts.comments) card.comments = this.listComments(id);
    return opts.links || opts.comments ? canonicalCard(card) : card;
  }

  /** The card with its links and comments in one statement (a third of the cost of three). */
  private getFullCard(id: string): Card | null {
    const r = this.db.query(GET_FULL_CARD_SQL).get(id);
    if (!r) return null;
    const card = rowToCard(r, this.config.workspaceId);
    card.links = r.links_json === "[]" ? [] : (JSON.parse(r.links_json as string) as Record<string, unknown>[]).map(rowToLink);
    card.comments = r.comments_json === "[]" ? [] : (JSON.parse(r.comments_json as string) as Record<string, unknown>[]).map(rowToComment);
    return canonicalCard(card);
  }

  listCards(q: ListQuery): { items: Card[]; keys: string[] } {
    return q.q === undefined ? this.listPage(q) : this.searching(() => this.listPage(q));
  }

  /**
   * A read that uses the full-text index: damage found there is the index's (derived, made
   * again once deleted), not the workspace database's, when the index's own check fails.
   */
  private searching<T>(read: () => T): T {
    try {
      return read();
    } catch (e) {
      const code = sqliteErrorCode(e);
      if ((code?.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") && this.searchAttached) {
        let verdict: string;
        try {
          verdict = String(Object.values(this.db.query(`PRAGMA ${S}.quick_check(1)`).get() ?? {})[0]);
        } catch (err) {
          verdict = (err as Error).message;
        }
        if (verdict !== "ok") throw searchIndexDamaged((e as Error).message);
      }
      throw e;
    }
  }

  private listPage(q: ListQuery): { items: Card[]; keys: string[] } {
    if (q.asOfEvent !== undefined && !q.sort) return this.listCardsAsOf(q, q.asOfEvent);
    const { where, params } = this.whereClause(q);
    if (q.after) {
      where.push("(c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))");
      params.push(q.after.updated_at, q.after.updated_at, q.after.id);
    }
    const order = q.sort ? sortToSql(q.sort as never) : DEFAULT_ORDER;
    // Many search hits: walking the updated_at index and probing the hit set beats sorting
    // every hit (190 ms -> ~10 ms for a term in half of 100k cards); few hits: sort them.
    const from = !q.sort && this.manySearchHits(q) ? "cards c INDEXED BY cards_by_updated" : "cards c";
    const sql = `SELECT ${CARD_COLS} FROM ${from} ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY ${order} LIMIT ?`;
    params.push(q.limit);
    return this.page(this.db.query(sql).all(...params), q, "updated_at");
  }

  /**
   * Keyset page ordered by updated_at as of event `seq`: cards unchanged since then come
   * straight from the index; the few changed since are placed by their last event at or
   * before `seq`; cards created after `seq` are left out.
   */
  private listCardsAsOf(q: ListQuery, seq: number): { items: Card[]; keys: string[] } {
    const after = q.after;
    const below = (u: string, id: string) => !after || u < after.updated_at || (u === after.updated_at && id < after.id);
    const a = this.whereClause(q);
    const from = this.manySearchHits(q) ? "cards c INDEXED BY cards_by_updated" : "cards c";
    a.where.push("NOT EXISTS (SELECT 1 FROM events e WHERE e.card_id = c.id AND e.seq > ?)");
    a.params.push(seq);
    if (after) {
      a.where.push("(c.updated_at < ? OR (c.updated_at = ? AND c.id < ?))");
      a.params.push(after.updated_at, after.updated_at, after.id);
    }
    a.params.push(q.limit);
    const unchanged = this.db
      .query(`SELECT ${CARD_COLS}, c.updated_at AS k FROM ${from} WHERE ${a.where.join(" AND ")} ORDER BY ${DEFAULT_ORDER} LIMIT ?`)
      .all(...a.params);
    // the cards changed since: placed by their last event at or before `seq` (the newest,
    // not the latest time: the clock may have stepped back since); only this
    // page's worth is read whole (a stale or forged cursor must not load every card)
    // the changed cards drive (CROSS JOIN fixes the order): left to itself, the planner may
    // pair every search hit with every event since `seq` (page 2 of a broad search: minutes);
    // the search hits are a set each changed card is looked up in, never an index to drive
    const b = this.whereClause(q, { searchDrives: false });
    const placed = ["k IS NOT NULL"];
    const placedParams: Array<string | number> = [];
    if (after) {
      placed.push("(k < ? OR (k = ? AND id < ?))");
      placedParams.push(after.updated_at, after.updated_at, after.id);
    }
    const keys = this.db
      .query(`SELECT id, k FROM (SELECT c.id AS id, (SELECT e.at FROM events e WHERE e.card_id = c.id AND e.seq <= ? AND e.type IN (${CARD_FACTS}) ORDER BY e.seq DESC LIMIT 1) AS k
        FROM (SELECT card_id FROM events WHERE seq > ? AND +card_id IS NOT NULL GROUP BY +card_id) ev CROSS JOIN cards c ON c.id = ev.card_id
        ${b.where.length ? "WHERE " + b.where.join(" AND ") : ""}) WHERE ${placed.join(" AND ")} ORDER BY k DESC, id DESC LIMIT ?`)
      .all(seq, seq, ...b.params, ...placedParams, q.limit) as Array<{ id: string; k: string }>;
    const one = this.db.query(`SELECT ${CARD_COLS} FROM cards c WHERE c.id = ?`);
    const changed: Array<Record<string, unknown>> = [];
    for (const { id, k } of keys) {
      const row = one.get(id);
      if (row && below(k, id)) changed.push({ ...row, k });
    }
    const rows = [...unchanged, ...changed]
      .sort((x, y) => byCodePoint(y.k as string, x.k as string) || byCodePoint(y.id as string, x.id as string))
      .slice(0, q.limit);
    return this.page(rows, q, "k");
  }

  /** A search with so many hits that walking the updated_at index beats sorting them. */
  private manySearchHits(q: Pick<ListQuery, "q">): boolean {
    return q.q !== undefined && this.ftsHits(q.q, MANY_HITS) >= MANY_HITS;
  }

  /** Full-text hits for `q`, counted up to `cap`. */
  private ftsHits(q: string, cap: number): number {
    const fts = toFtsQuery(q.trim());
    if (!fts) return 0;
    this.assertSearchAttached();
    return Number(this.db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM ${S}.cards_fts WHERE cards_fts MATCH ? LIMIT ?)`).get(fts, cap)?.n ?? 0);
  }

  takeNextCandidates(q: Omit<ListQuery, "sort" | "after">): Array<Pick<Card, "id" | "status">> {
    const { where, params } = this.whereClause(q);
    where.push("c.owner IS NULL");
    // with ids, those cards drive the read (CROSS JOIN keeps that order): a few primary-key
    // look-ups, not a scan of every card of the type while the write lock is held
    const from = q.ids ? "json_each(?) j CROSS JOIN cards c ON c.id = j.value" : "cards c";
    const sql = `SELECT c.id AS id, c.status AS status FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${TAKE_NEXT_ORDER} LIMIT ?`;
    if (q.ids) params.unshift(JSON.stringify(q.ids));
    params.push(q.limit);
    return this.db.query(sql).all(...params) as Array<Pick<Card, "id" | "status">>;
  }

  countByStatus(q: Omit<ListQuery, "limit" | "sort" | "after" | "asOfEvent">): Record<string, number> {
    if (q.q !== undefined) return this.searching(() => this.countPage({ ...q, q: q.q }));
    return this.countPage(q);
  }

  private countPage(q: Omit<ListQuery, "limit" | "sort" | "after" | "asOfEvent">): Record<string, number> {
    const { where, params } = this.whereClause({ ...q, limit: 0 });
    const sql = `SELECT c.status AS status, count(*) AS n FROM cards c ${where.length ? "WHERE " + where.join(" AND ") : ""} GROUP BY c.status`;
    const out: Record<string, number> = {};
    for (const r of this.db.query(sql).all(...params)) out[r.status as string] = r.n as number;
    return out;
  }

  cardCount(): number {
    return Number(this.db.query("SELECT count(*) AS n FROM cards").get()?.n ?? 0);
  }

  eventCount(): number {
    return Number(this.db.query("SELECT count(*) AS n FROM events").get()?.n ?? 0);
  }

  openBlockers(cardId: string): string[] {
    return this.db
      .query(
        `SELECT DISTINCT l.target AS t FROM links l JOIN cards t ON t.id = l.target
         WHERE l.card_id = ? AND l.type_id IN (${blockingTypesSql()}) AND t.status <> ? ORDER BY l.target`,
      )
      .all(cardId, this.config.doneStatus)
      .map((r) => r.t as string);
  }

  blockedBySources(targetId: string): string[] {
    return this.db
      .query(`SELECT DISTINCT card_id AS s FROM links WHERE target = ? AND type_id IN (${blockingTypesSql()}) ORDER BY card_id`)
      .all(targetId)
      .map((r) => r.s as string);
  }

  listLinks(cardId: string): Link[] {
    return this.db.query("SELECT * FROM links WHERE card_id = ? ORDER BY created_at, type_id, target").all(cardId).map(rowToLink);
  }

  listComments(cardId: string): Comment[] {
    return this.db.query("SELECT * FROM comments WHERE card_id = ? ORDER BY created_at, id").all(cardId).map(rowToComment);
  }

  getComment(cardId: string, commentId: string): Comment | null {
    const r = this.db.query("SELECT * FROM comments WHERE card_id = ? AND id = ?").get(cardId, commentId);
    return r ? rowToComment(r) : null;
  }

  // --- cards: writes ---

  insertCard(card: Card): void {
    this.db
      .query(
        `INSERT INTO cards (id, type_id, schema_version, title, status, fields, owner, tags, version, created_at, updated_at, status_since, created_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...cardParams(card));
  }

  updateCard(card: Card, expectVersion: number): boolean {
    const p = cardParams(card);
    const res = this.db
      .query(
        `UPDATE cards SET schema_version = ?, title = ?, status = ?, fields = ?, owner = ?, tags = ?, version = ?,
           updated_at = ?, status_since = ? WHERE id = ? AND version = ?`,
      )
      .run(p[2]!, p[3]!, p[4]!, p[5]!, p[6]!, p[7]!, p[8]!, p[10]!, p[11]!, card.id, expectVersion);
    return res.changes === 1;
  }

  claimIfUnowned(id: string, owner: string, now: string, status?: string): boolean {
    // run() and its change count, not RETURNING: an UPDATE ... RETURNING measured ~4x the
    // cost of the UPDATE here (35-43 us against 9 us), and a claim is mostly this statement
    const res = this.db
      .query(
        `UPDATE cards SET owner = ?1, version = version + 1, updated_at = ?2,
           status_since = CASE WHEN ?3 IS NOT NULL AND ?3 <> status THEN ?2 ELSE status_since END,
           status = coalesce(?3, status)
         WHERE id = ?4 AND owner IS NULL`,
      )
      .run(owner, now, status ?? null, id);
    return res.changes === 1;
  }

  deleteCard(id: string): void {
    this.db.query("DELETE FROM cards WHERE id = ?").run(id);
  }

  addLink(cardId: string, l: Link): boolean {
    const res = this.db
      .query("INSERT OR IGNORE INTO links (card_id, type_id, target, note, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(cardId, l.type_id, l.target, l.note ?? null, l.created_by, l.created_at);
    return res.changes === 1;
  }

  removeLink(cardId: string, typeId: string, target: string): boolean {
    return this.db.query("DELETE FROM links WHERE card_id = ? AND type_id = ? AND target = ?").run(cardId, typeId, target).changes === 1;
  }

  addComment(cardId: string, c: Comment): void {
    this.db
      .query("INSERT INTO comments (id, card_id, author, body, created_at, edited_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(c.id, cardId, c.author, c.body, c.created_at, c.edited_at ?? null);
  }

  updateComment(cardId: string, c: Comment): void {
    this.db.query("UPDATE comments SET body = ?, edited_at = ? WHERE card_id = ? AND id = ?").run(c.body, c.edited_at ?? null, cardId, c.id);
  }

  // --- events ---

  appendEvent(e: CardEvent): StoredEvent {
    // the stored row is what was bound: rebuilt here rather than read back with RETURNING *
    // (~5x the cost of the INSERT); the diff is parsed from its stored text, as on a read
    const row = {
      type: e.type, actor: e.actor, at: e.at, card_id: e.card_id ?? null, scope: e.scope, board_id: e.board_id ?? null, diff: JSON.stringify(e.diff),
    };
    const res = this.db
      .query("INSERT INTO events (type, actor, at, card_id, scope, board_id, diff) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(row.type, row.actor, row.at, row.card_id, row.scope, row.board_id, row.diff);
    return rowToEvent({ seq: Number(res.lastInsertRowid), ...row });
  }

  listEvents(q: EventQuery): StoredEvent[] {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (q.afterId !== undefined) {
      where.push("e.seq > ?");
      params.push(parseEventId(q.afterId) ?? 0);
    }
    if (q.types?.length) {
      where.push(`e.type IN (${q.types.map(() => "?").join(",")})`);
      params.push(...q.types);
    }
    if (q.actor !== undefined) { where.push("e.actor = ?"); params.push(q.actor); }
    if (q.cardId !== undefined) { where.push("e.card_id = ?"); params.push(q.cardId); }
    if (q.owner !== undefined) {
      where.push("e.card_id IN (SELECT id FROM cards WHERE owner = ?)");
      params.push(q.owner);
    }
    if (q.cardTypeIds) {
      // a deleted card's events stay its type's: its type is in its card_deleted tombstone
      const list = q.cardTypeIds.map(() => "?").join(",") || "NULL";
      const ofTypes = `e.card_id IN (SELECT id FROM cards WHERE type_id IN (${list})
        UNION ALL SELECT card_id FROM events WHERE type = 'card_deleted' AND json_extract(diff, '$.card.type_id') IN (${list}))`;
      params.push(...q.cardTypeIds, ...q.cardTypeIds);
      if (q.boardId === undefined) where.push(ofTypes);
      else {
        where.push(`(${ofTypes} OR (e.scope = 'board' AND e.board_id = ?))`);
        params.push(q.boardId);
      }
    }
    params.push(q.limit);
    const sql = `SELECT * FROM events e ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY e.seq${q.newest ? " DESC" : ""} LIMIT ?`;
    return rowsToEvents(this.db.query(q.newest ? `SELECT * FROM (${sql}) ORDER BY seq` : sql).all(...params));
  }

  appendSignal(e: CardEvent): number {
    const r = this.db
      .query(`INSERT INTO signals (type, actor, at, card_id, scope, board_id, diff, after_seq)
        VALUES (?, ?, ?, ?, ?, ?, ?, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0))`)
      .run(e.type, e.actor, e.at, e.card_id ?? null, e.scope, e.board_id ?? null, JSON.stringify(e.diff));
    return Number(r.lastInsertRowid);
  }

  listSignals(afterSeq: number, limit: number): Array<{ seq: number; afterEvent: number; event: CardEvent }> {
    return this.db.query("SELECT * FROM signals WHERE seq > ? ORDER BY seq LIMIT ?").all(afterSeq, limit).map((r) => {
      const { after_seq, ...rest } = r;
      const { id: _none, ...event } = rowToEvent({ ...rest, seq: 0 });
      return { seq: r.seq as number, afterEvent: Number(after_seq ?? 0), event: event as CardEvent };
    });
  }

  hasLinkOfType(typeId: string): boolean {
    return this.db.query("SELECT 1 FROM links WHERE type_id = ? LIMIT 1").get(typeId) !== null;
  }

  hasCardAboveSchema(typeId: string, version: number): boolean {
    return this.db.query("SELECT 1 FROM cards WHERE type_id = ? AND schema_version > ? LIMIT 1").get(typeId, version) !== null;
  }

  damage(): string[] {
    const out: string[] = [];
    const add = (m: string): void => { if (out.length < 20 && !out.includes(m)) out.push(m); };
    const scan = (sql: string, say: (r: Record<string, unknown>) => string): void => {
      try {
        for (const r of this.db.query(sql).all() as Record<string, unknown>[]) add(say(r));
      } catch (e) {
        add(`the database file: ${(e as Error).message}`);
      }
    };
    try {
      const verdicts = checkVerdicts(this.db.query("PRAGMA main.quick_check(20)").all() as Record<string, unknown>[]);
      if (verdicts.join() !== "ok") for (const v of verdicts) add(`the database file: ${v}`);
    } catch (e) {
      add(`the database file: ${(e as Error).message}`);
    }
    scan("SELECT id FROM cards WHERE NOT json_valid(fields) OR NOT json_valid(tags) LIMIT 20", (r) => `card ${String(r.id)}: its stored fields or tags do not parse`);
    scan("SELECT seq FROM events WHERE NOT json_valid(diff) LIMIT 20", (r) => `event ${formatEventId(Number(r.seq))}: its stored diff does not parse`);
    return out;
  }

  cardsInUse(): CardsInUse {
    const typeStatuses = new Map<string, Map<string, number>>();
    const types = new Map<string, number>();
    const statuses = new Map<string, number>();
    for (const r of this.db.query("SELECT type_id AS t, status AS s, count(*) AS n FROM cards GROUP BY type_id, status").all() as Array<{ t: string; s: string; n: number }>) {
      let m = typeStatuses.get(r.t);
      if (!m) typeStatuses.set(r.t, (m = new Map()));
      m.set(r.s, r.n);
      types.set(r.t, (types.get(r.t) ?? 0) + r.n);
      statuses.set(r.s, (statuses.get(r.s) ?? 0) + r.n);
    }
    const schemaVersions = new Map<string, Map<number, number>>();
    for (const r of this.db.query("SELECT type_id AS t, schema_version AS v, count(*) AS n FROM cards GROUP BY type_id, schema_version").all() as Array<{ t: string; v: number; n: number }>) {
      let m = schemaVersions.get(r.t);
      if (!m) schemaVersions.set(r.t, (m = new Map()));
      m.set(r.v, r.n);
    }
    const linkTypes = new Map(
      (this.db.query("SELECT type_id AS v, count(*) AS n FROM links GROUP BY type_id").all() as Array<{ v: string; n: number }>).map((r) => [r.v, r.n]),
    );
    return { types, statuses, typeStatuses, schemaVersions, linkTypes };
  }

  historyThrough(): number {
    return Number(this.getMeta(HISTORY_THROUGH_KEY) ?? 0);
  }

  markHistoryThrough(seq: number): void {
    this.setMeta(HISTORY_THROUGH_KEY, String(seq));
  }

  lastSignalSeq(): number {
    return Number(this.db.query("SELECT max(seq) AS s FROM signals").get()?.s ?? 0);
  }

  pruneSignals(before: string): boolean {
    return this.db.query("DELETE FROM signals WHERE seq IN (SELECT seq FROM signals WHERE at < ? ORDER BY at LIMIT ?)").run(before, PRUNE_BATCH * 4).changes === PRUNE_BATCH * 4;
  }

  pruneOnceKeys(before: string): boolean {
    // a temporal condition's key stays while its card is still in that state: pruned, a
    // restart would fire the same idle period or status entry again. It goes once the card
    // moved on (`type:board:card:since`, since = the card's status_since or updated_at then)
    const plain = this.db.query("DELETE FROM once_keys WHERE key IN (SELECT key FROM once_keys WHERE at < ? AND key NOT LIKE 'status\\_timeout:%' ESCAPE '\\' AND key NOT LIKE 'card\\_idle:%' ESCAPE '\\' LIMIT ?)").run(before, PRUNE_BATCH).changes;
    // the old temporal keys are looked at a batch at a time, in key order, from where the
    // last prune left off: keys whose cards stay in their state (untouched done cards stay
    // idle for good) would otherwise come back first every time, and none after them would
    // ever go (once_keys grew without bound)
    const after = this.getMeta(ONCE_PRUNE_CURSOR_KEY) ?? "";
    const temporal = this.db.query("SELECT key FROM once_keys WHERE key > ? AND at < ? AND (key LIKE 'status\\_timeout:%' ESCAPE '\\' OR key LIKE 'card\\_idle:%' ESCAPE '\\') ORDER BY key LIMIT ?").all(after, before, PRUNE_BATCH) as Array<{ key: string }>;
    this.setMeta(ONCE_PRUNE_CURSOR_KEY, temporal.length === PRUNE_BATCH ? temporal.at(-1)!.key : "");
    const card = this.db.query("SELECT status_since, updated_at FROM cards WHERE id = ?");
    const drop = this.db.query("DELETE FROM once_keys WHERE key = ?");
    let dropped = 0;
    for (const { key } of temporal) {
      const [type, , id] = key.split(":", 3);
      const since = key.split(":").slice(3).join(":");
      const now = card.get(id ?? "") as { status_since: string; updated_at: string } | null;
      if (!now || (type === "status_timeout" ? now.status_since : now.updated_at) !== since) { drop.run(key); dropped++; }
    }
    // more is left when a batch was deleted whole; keys still in force (kept) are walked at
    // the usual pace, so thousands of them never make every write prune
    return plain === PRUNE_BATCH || (temporal.length === PRUNE_BATCH && dropped > 0);
  }

  claimOnce(key: string, at: string): boolean {
    return this.db.query("INSERT OR IGNORE INTO once_keys (key, at) VALUES (?, ?)").run(key, at).changes === 1;
  }

  blockedCards(filter: ListQuery["filter"], limit: number): Array<{ id: string; blockers: string[] }> {
    return this.listCards({ ...(filter ? { filter } : {}), blocked: true, limit }).items.map((c) => ({ id: c.id, blockers: this.openBlockers(c.id) }));
  }

  countInStatus(filter: ListQuery["filter"], status: string, cap: number): number {
    const { where, params } = this.whereClause({ filter, statuses: [status], limit: 0 });
    params.push(cap);
    return Number(this.db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM cards c WHERE ${where.join(" AND ")} LIMIT ?)`).get(...params)?.n ?? 0);
  }

  dueCards(filter: ListQuery["filter"], statuses: string[] | undefined, column: "status_since" | "updated_at", after: { at: string; id: string } | undefined, before: string, limit: number): Card[] {
    const { where, params } = this.whereClause({ filter, statuses, limit: 0 });
    where.push(`c.${column} <= ?`);
    params.push(before);
    if (after) {
      where.push(`(c.${column} > ? OR (c.${column} = ? AND c.id > ?))`);
      params.push(after.at, after.at, after.id);
    }
    params.push(limit);
    return rowsToCards(
      this.db.query(`SELECT ${CARD_COLS} FROM cards c WHERE ${where.join(" AND ")} ORDER BY c.${column}, c.id LIMIT ?`).all(...params),
      this.config.workspaceId,
    );
  }

  nextDue(filter: ListQuery["filter"], statuses: string[] | undefined, column: "status_since" | "updated_at", after: string): string | null {
    const { where, params } = this.whereClause({ filter, statuses, limit: 0 });
    where.push(`c.${column} > ?`);
    params.push(after);
    return (this.db.query(`SELECT min(c.${column}) AS m FROM cards c WHERE ${where.join(" AND ")}`).get(...params)?.m as string | null) ?? null;
  }

  lastEventId(): string | null {
    const r = this.db.query("SELECT max(seq) AS s FROM events").get();
    return r?.s == null ? null : formatEventId(r.s as number);
  }

  insertEventWithId(e: StoredEvent): void {
    this.db
      .query("INSERT INTO events (seq, type, actor, at, card_id, scope, board_id, diff) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(parseEventId(e.id) ?? 0, e.type, e.actor, e.at, e.card_id ?? null, e.scope, e.board_id ?? null, JSON.stringify(e.diff));
  }

  *iterateUsers(): Iterable<User> {
    for (const r of this.db.query("SELECT * FROM users ORDER BY id").iterate()) yield rowToUser(r);
  }

  *iterateCards(): Iterable<Card> {
    for (const r of this.db.query(`SELECT ${CARD_COLS} FROM cards c ORDER BY c.seq`).iterate()) yield rowToCard(r, this.config.workspaceId);
  }

  *iterateEvents(): Iterable<StoredEvent> {
    for (const r of this.db.query("SELECT * FROM events ORDER BY seq").iterate()) yield rowToEvent(r);
  }

  // --- users, idempotency ---

  getUser(id: string): User | null {
    const r = this.db.query("SELECT * FROM users WHERE id = ?").get(id);
    return r ? rowToUser(r) : null;
  }

  listUsers(): User[] {
    return this.db.query("SELECT * FROM users ORDER BY id").all().map(rowToUser);
  }

  upsertUser(u: User): void {
    this.db
      .query("INSERT INTO users (id, kind, display_name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, display_name = excluded.display_name, created_at = excluded.created_at")
      .run(u.id, u.kind, u.display_name ?? null, u.created_at);
  }

  getIdempotency(key: string): IdempotencyRecord | null {
    return (this.db.query("SELECT * FROM idempotency WHERE key = ?").get(key) as IdempotencyRecord | null) ?? null;
  }

  putIdempotency(r: IdempotencyRecord): void {
    this.db
      // a record still here past its time (not pruned yet) is replaced: the call ran as new
      .query("INSERT INTO idempotency (key, actor, request_hash, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET actor = excluded.actor, request_hash = excluded.request_hash, status = excluded.status, body = excluded.body, created_at = excluded.created_at")
      .run(r.key, r.actor, r.request_hash, r.status, r.body, r.created_at);
  }

  /** Drops idempotency records older than `before` (kept at least 24 hours; DECISIONS). */
  pruneIdempotency(before: string): boolean {
    // a bounded batch per prune: a backlog (a burst of keyed writes ageing out, a workspace
    // that rarely prunes) is cleared over several writes instead of stalling one (265 ms for 100,000)
    return this.db.query("DELETE FROM idempotency WHERE key IN (SELECT key FROM idempotency WHERE created_at < ? ORDER BY created_at LIMIT ?)").run(before, PRUNE_BATCH).changes === PRUNE_BATCH;
  }

  markSearchStale(): void {
    this.setMeta(SEARCH_EPOCH_KEY, `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);
  }

  getMeta(key: string): string | null {
    return (this.db.query("SELECT value FROM meta WHERE key = ?").get(key)?.value as string | undefined) ?? null;
  }

  deleteMeta(key: string, opts: { prefix?: boolean } = {}): void {
    if (opts.prefix) this.db.query("DELETE FROM meta WHERE substr(key, 1, length(?1)) = ?1").run(key);
    else this.db.query("DELETE FROM meta WHERE key = ?").run(key);
  }

  setMeta(key: string, value: string): void {
    this.db.query("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  // --- internal ---

  private assertSearchAttached(): void {
    if (!this.searchAttached) throw new Error("full-text search before Store.prepareSearch(): searches run on reads, outside a snapshot");
  }

  /**
   * A page of cards from rows, with the links and comments asked for, and each row's sort
   * key (column `key`). Plain loops, no per-row calls: a one-shot CLI call runs
   * Array.prototype.map in the interpreter (~0.4 ms a page) and JIT-compiles a function
   * called per row.
   */
  private page(rows: Record<string, unknown>[], q: ListQuery, key: string): { items: Card[]; keys: string[] } {
    const items = rowsToCards(rows, this.config.workspaceId);
    if (q.includeLinks || q.includeComments) {
      for (let i = 0; i < items.length; i++) {
        const card = items[i]!;
        if (q.includeLinks) card.links = this.listLinks(card.id);
        if (q.includeComments) card.comments = this.listComments(card.id);
        items[i] = canonicalCard(card);
      }
    }
    const keys: string[] = [];
    for (let i = 0; i < rows.length; i++) keys.push(rows[i]![key] as string);
    return { items, keys };
  }

  /**
   * The WHERE terms of a list query. `searchDrives: false` keeps the search hits from
   * serving as the rowids to visit, for a query that another row source drives.
   */
  private whereClause(q: Omit<ListQuery, "sort" | "after">, opts: { searchDrives?: boolean } = {}): { where: string[]; params: SqlValue[] } {
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (q.filter) {
      const f = filterSql()(q.filter, "c", { doneStatus: this.config.doneStatus });
      where.push(`(${f.sql})`);
      params.push(...f.params);
    }
    if (q.typeIds?.length) {
      where.push(`c.type_id IN (${q.typeIds.map(() => "?").join(",")})`);
      params.push(...q.typeIds);
    }
    if (q.statuses?.length) {
      where.push(`c.status IN (${q.statuses.map(() => "?").join(",")})`);
      params.push(...q.statuses);
    }
    if (q.owner !== undefined) { where.push("c.owner = ?"); params.push(q.owner); }
    if (q.blocked !== undefined) {
      where.push(`${q.blocked ? "" : "NOT "}EXISTS (SELECT 1 FROM links l JOIN cards t ON t.id = l.target
        WHERE l.card_id = c.id AND l.type_id IN (${blockingTypesSql()}) AND t.status <> ?)`);
      params.push(this.config.doneStatus);
    }
    // both given: one link of that type to that card (children of an epic: has_link=parent&link_target=E)
    if (q.hasLink !== undefined && q.linkTarget !== undefined) {
      where.push("EXISTS (SELECT 1 FROM links l WHERE l.card_id = c.id AND l.type_id = ? AND l.target = ?)");
      params.push(q.hasLink, q.linkTarget);
    } else if (q.hasLink !== undefined) {
      where.push("EXISTS (SELECT 1 FROM links l WHERE l.card_id = c.id AND l.type_id = ?)");
      params.push(q.hasLink);
    } else if (q.linkTarget !== undefined) {
      where.push("EXISTS (SELECT 1 FROM links l WHERE l.card_id = c.id AND l.target = ?)");
      params.push(q.linkTarget);
    }
    if (q.q !== undefined) {
      const text = q.q.trim();
      const fts = toFtsQuery(text);
      // ids are lower-case hex; a full or short id matches in any case, as words do
      const id = text.toLowerCase();
      const idMatch = /^card_[0-9a-f]{16}$/.test(id) ? "c.id = ?" : /^(card_)?[0-9a-f]{8}$/.test(id) ? "substr(c.id, 6, 8) = ?" : null;
      const parts: string[] = [];
      if (fts) {
        this.assertSearchAttached();
        // a document counts only for the card it was indexed for (a reused seq: search-index.ts)
        parts.push(`(${opts.searchDrives === false ? "+" : ""}c.seq IN (SELECT rowid FROM ${S}.cards_fts WHERE cards_fts MATCH ?) AND EXISTS (SELECT 1 FROM ${S}.docs d WHERE d.seq = c.seq AND d.card_id = c.id))`);
        params.push(fts);
      }
      if (idMatch) { parts.push(idMatch); params.push(idMatch === "c.id = ?" ? id : id.replace(/^card_/, "")); }
      where.push(parts.length ? `(${parts.join(" OR ")})` : "0");
    }
    return { where, params };
  }
}

/** Runs one read of Store.readBatch on `r` (in the calling thread's snapshot, or the read thread's). */
export function runReadCall(r: StoreReads, c: ReadCall): unknown {
  switch (c.method) {
    case "countInStatus": return r.countInStatus(...c.args);
    case "dueCards": return r.dueCards(...c.args);
    case "blockedCards": return r.blockedCards(...c.args);
  }
}
