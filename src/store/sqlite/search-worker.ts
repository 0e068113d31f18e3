/**
 * A server's search indexer thread (the other side: search-indexer.ts). It brings the
 * search index up to the newest event (search-index.ts) whenever woken by a search, and
 * every SEARCH_TICK_MS otherwise, with connections of its own: FTS5's work (tokenizing,
 * and segment merges of 5-20 ms now and then) never runs on the thread that answers
 * requests, nor under the database's write lock.
 *
 * Messages in: {type: "start", mainPath, searchPath, config, intervalMs, control} once,
 * then {type: "config", config, gen} on a definitions reload.
 */
import { openSqlite, type SqliteDb } from "../../platform/sqlite.ts";
import type { SearchConfig } from "../port.ts";
import { openSearchDb, syncIndex } from "./search-index.ts";
import type { ConfigEntries } from "./search-indexer.ts";

interface Start { type: "start"; mainPath: string; searchPath: string; config: ConfigEntries; intervalMs: number; control: SharedArrayBuffer }
interface Reconfigure { type: "config"; config: ConfigEntries; gen: number }

/** The longest an idle indexer sleeps between passes; writes met after it wait at most this long (a search never does). */
const IDLE_TICK_MAX_MS = 400;

const toConfig = (entries: ConfigEntries): SearchConfig => new Map(entries.map(([k, v]) => [k, v ?? undefined]));

let config: SearchConfig = new Map();
let configGen = 0;

self.onmessage = (e: MessageEvent<Start | Reconfigure>) => {
  if (e.data.type === "config") {
    config = toConfig(e.data.config);
    configGen = e.data.gen;
    return;
  }
  const { mainPath, searchPath, intervalMs } = e.data;
  const i32 = new Int32Array(e.data.control, 0, 8);
  const applied = new BigInt64Array(e.data.control, 32, 1);
  config = toConfig(e.data.config);
  let main: SqliteDb | undefined;
  let search: SqliteDb | undefined;
  const close = () => {
    try { search?.close(); } catch { /* closing */ }
    try { main?.close(); } catch { /* closing */ }
    search = main = undefined;
  };
  // idle passes stretch the tick (up to IDLE_TICK_MAX_MS): an idle server woke 40 times a
  // second for nothing (~1% of a core for every `cards serve` and `cards mcp`); a search
  // still wakes the thread at once, and a pass that finds new events brings the tick back
  let wait = intervalMs;
  let lastHead = -1;
  const pass = () => {
    try {
      if (!main) {
        main = openSqlite(mainPath, { create: false });
        main.exec("PRAGMA busy_timeout = 1000");
      }
      search ??= openSearchDb(searchPath);
      const gen = configGen; // the config this pass indexes with
      const head = syncIndex(main, search, config);
      wait = head === lastHead ? Math.min(IDLE_TICK_MAX_MS, wait * 2) : intervalMs;
      lastHead = head;
      Atomics.store(applied, 0, BigInt(head));
      Atomics.store(i32, 4, gen);
    } catch {
      // a busy or vanished file: start over with fresh connections at the next pass
      Atomics.add(i32, 5, 1);
      close();
    }
    Atomics.add(i32, 3, 1);
    Atomics.notify(i32, 3);
  };
  const loop = () => {
    if (Atomics.load(i32, 0) === 1) {
      close();
      Atomics.store(i32, 1, 1);
      Atomics.notify(i32, 1);
      return;
    }
    Atomics.store(i32, 2, 0); // a search that wakes us from here on gets a pass after it
    pass();
    // sleep until a search wakes us or the tick is up; then let messages (config) in
    Atomics.wait(i32, 2, 0, wait);
    setTimeout(loop, 0);
  };
  loop();
};
