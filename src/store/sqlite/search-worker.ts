/**
 * A server's search indexer thread: every SEARCH_TICK_MS it brings the search index up to
 * the newest event (search-index.ts), with connections of its own, so FTS5's work (the
 * tokenizing, and segment merges of 5-20 ms now and then) never runs on the thread that
 * answers requests, nor under the database's write lock. A search still catches up on
 * its own first, so it never waits for a tick.
 *
 * Messages in: {type: "start", mainPath, searchPath, config, intervalMs, control} once,
 * then {type: "config", config} on a definitions reload. Control block (Int32Array):
 * [0] stop requested, [1] stopped, [2] passes that indexed something, [3] failed passes.
 */
import { openSqlite, type SqliteDb } from "../../platform/sqlite.ts";
import type { SearchConfig } from "../port.ts";
import { catchUp, isCurrent, openSearchDb, searchConfigKey } from "./search-index.ts";

interface Start { type: "start"; mainPath: string; searchPath: string; config: Array<[string, string[] | null]>; intervalMs: number; control: SharedArrayBuffer }
interface Reconfigure { type: "config"; config: Array<[string, string[] | null]> }

const toConfig = (entries: Array<[string, string[] | null]>): SearchConfig => new Map(entries.map(([k, v]) => [k, v ?? undefined]));

let config: SearchConfig = new Map();
let configKey = searchConfigKey(config);

self.onmessage = (e: MessageEvent<Start | Reconfigure>) => {
  if (e.data.type === "config") {
    config = toConfig(e.data.config);
    configKey = searchConfigKey(config);
    return;
  }
  const { mainPath, searchPath, intervalMs } = e.data;
  const c = new Int32Array(e.data.control);
  config = toConfig(e.data.config);
  configKey = searchConfigKey(config);
  let main: SqliteDb | undefined;
  let search: SqliteDb | undefined;
  const close = () => {
    try { search?.close(); } catch { /* closing */ }
    try { main?.close(); } catch { /* closing */ }
    search = main = undefined;
  };
  const tick = () => {
    if (Atomics.load(c, 0) === 1) {
      close();
      Atomics.store(c, 1, 1);
      Atomics.notify(c, 1);
      return;
    }
    try {
      if (!main) { main = openSqlite(mainPath); main.exec("PRAGMA busy_timeout = 1000"); }
      search ??= openSearchDb(searchPath);
      if (!isCurrent(main, search, configKey) && catchUp(main, search, config) > 0) Atomics.add(c, 2, 1);
    } catch {
      // a busy or vanished file: start over with fresh connections at the next tick
      Atomics.add(c, 3, 1);
      close();
    }
    setTimeout(tick, intervalMs);
  };
  tick();
};
