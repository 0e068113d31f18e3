/**
 * A long-lived process's read thread (the other side: read-thread.ts). It answers the
 * costly list reads (filters over field values, search, blocked, links; counts) on a
 * connection of its own, so the thread that answers requests is never held by one of
 * them: a filter that reads every card's JSON at 100,000 cards takes seconds.
 *
 * Messages in: {type: "start", path, searchPath, cacheKib, config, control} once,
 * {type: "config", config} after a definitions reload, {type: "read", id, op, q}, and
 * {type: "stop"}: the connection is closed (its WAL files left empty), then control[0]
 * is set and notified. Reads still queued once control[1] (stop requested) is set are
 * skipped unanswered: the caller has given up on them. Out: {id, value} or {id, error}.
 */
import { openSqlite, type SqliteDb } from "../../platform/sqlite.ts";
import { isCardsError } from "../../domain/errors.ts";
import type { ListQuery, ReadCall } from "../port.ts";
import { runReadCall, SqliteQueries, type QueryConfig } from "./queries.ts";
import { unshareable } from "./connection.ts";
import { SEARCH_SCHEMA_NAME, SEARCH_WAL_SIZE_LIMIT } from "./search-names.ts";
import type { ReadConfig, ReadOp, ReadReply, ReadRequest } from "./read-thread.ts";

interface Start { type: "start"; path: string; searchPath: string; cacheKib: number; config: ReadConfig; control: SharedArrayBuffer }
interface Reconfigure { type: "config"; config: ReadConfig }
interface Stop { type: "stop" }

const config: QueryConfig = { workspaceId: "", doneStatus: "", search: new Map() };
let db: SqliteDb | undefined;
let queries: SqliteQueries | undefined;
let path = "";
let searchPath = "";
let cacheKib = 2048;
let control: Int32Array | undefined;

function apply(c: ReadConfig): void {
  config.workspaceId = c.workspaceId;
  config.doneStatus = c.doneStatus;
  config.search = new Map(c.search.map(([k, v]) => [k, v ?? undefined]));
}

function connection(): { db: SqliteDb; queries: SqliteQueries } {
  if (!db || !queries) {
    db = openSqlite(path, { create: false, immutable: unshareable(path) });
    db.exec(`PRAGMA busy_timeout = 5000; PRAGMA cache_size = -${cacheKib}`);
    queries = new SqliteQueries(db, config);
  }
  return { db, queries };
}

function read(op: ReadOp, payload: ListQuery | readonly ReadCall[]): unknown {
  const c = connection();
  if (op === "batch") {
    c.db.exec("BEGIN");
    try {
      return (payload as readonly ReadCall[]).map((call) => runReadCall(c.queries, call));
    } finally {
      endSnapshot(c.db);
    }
  }
  const q = payload as ListQuery;
  if (q.q !== undefined && !c.queries.searchAttached) {
    // the request thread brought the index up to date (Store.prepareSearch) before asking
    try {
      c.db.attach(searchPath, SEARCH_SCHEMA_NAME);
      c.queries.searchAttached = true;
      c.db.exec(`PRAGMA ${SEARCH_SCHEMA_NAME}.journal_size_limit = ${SEARCH_WAL_SIZE_LIMIT}`);
    } catch (e) {
      throw Object.assign(new Error(`cannot open the full-text index ${searchPath}: ${(e as Error)?.message ?? e}`), { code: "SEARCH_UNAVAILABLE" });
    }
  }
  if (op === "candidates") return c.queries.takeNextCandidates(q);
  c.db.exec("BEGIN");
  try {
    if (op === "count") return c.queries.countByStatus(q);
    const lastEventId = c.queries.lastEventId();
    return { ...c.queries.listCards(q), lastEventId };
  } finally {
    // SQLite may have ended the transaction itself (an I/O error): the error then stands
    endSnapshot(c.db);
  }
}

/**
 * Ends a read's snapshot. After a failed read the COMMIT may fail too (a corrupt page of
 * the attached index): that error must not replace the read's own, which names the file;
 * the connection is closed afterwards anyway (a reply with an error closes it).
 */
function endSnapshot(d: SqliteDb): void {
  try {
    if (d.inTransaction()) d.exec("COMMIT");
  } catch {
    // the read's error stands, or none: a snapshot holds no writes to lose
    if (d.inTransaction()) try { d.exec("ROLLBACK"); } catch { /* closed after an error reply */ }
  }
}

function close(): void {
  try { db?.close(); } catch { /* closing */ }
  db = queries = undefined;
}

self.onmessage = (e: MessageEvent<Start | Reconfigure | Stop | ReadRequest>) => {
  const m = e.data;
  if (m.type === "start") {
    path = m.path;
    searchPath = m.searchPath;
    cacheKib = m.cacheKib;
    control = new Int32Array(m.control);
    apply(m.config);
    return;
  }
  if (m.type === "stop") {
    close();
    if (control) {
      Atomics.store(control, 0, 1);
      Atomics.notify(control, 0);
    }
    return;
  }
  if (m.type === "config") {
    apply(m.config);
    return;
  }
  // stopping: the caller was answered already (ReadThreadDown), the rest of the queue goes
  if (control && Atomics.load(control, 1) === 1) return;
  let reply: ReadReply;
  try {
    reply = { id: m.id, value: read(m.op, m.q) };
  } catch (err) {
    // SQLite's errors only (the request was validated before it came here); a connection
    // in an unknown state (a vanished file, an I/O error) is opened anew next time
    reply = { id: m.id, error: { message: String((err as Error)?.message ?? err), code: (err as { code?: unknown })?.code as string | undefined } };
    // a verdict of the reads themselves (a damaged search index) crosses whole
    if (isCardsError(err)) reply.error.cards = { code: err.code, extra: err.extra };
    close();
  }
  postMessage(reply);
};
