/**
 * A long-lived process's side of its read thread (read-worker.ts): the costly list reads
 * run there, on a connection of their own, while this thread goes on answering requests.
 * The thread starts at the first such read. When it cannot start or dies, the reads it
 * held fail with ReadThreadDown and their callers run them here instead.
 */
import { startModuleWorker } from "../../platform/worker.ts";
import { CardsError, type ErrorCode, type ErrorExtra } from "../../domain/errors.ts";
import type { FilterNode } from "../../domain/filters.ts";
import type { ListQuery, ReadCall } from "../port.ts";
import type { ConfigEntries } from "./search-indexer.ts";

export type ReadOp = "page" | "count" | "candidates" | "batch";

export interface ReadConfig { workspaceId: string; doneStatus: string; search: ConfigEntries }

export interface ReadRequest { type: "read"; id: number; op: ReadOp; q: ListQuery | readonly ReadCall[] }

export type ReadReply =
  | { id: number; value: unknown }
  | { id: number; error: { message: string; code?: string; cards?: { code: ErrorCode; extra: ErrorExtra } } };

/** The read thread is gone: run the read on the calling thread. */
export class ReadThreadDown extends Error {
  constructor() { super("the read thread stopped"); }
}

/**
 * Whether a list read is worth a thread: anything that may read every candidate card
 * (conditions on field values, tags or titles, negations, blocked-ness, links, search,
 * any order but the default one, a later page placed as of an earlier event). A first
 * page narrowed by equality on type, status and owner only (a board's scope, a "mine"
 * filter), in the default order, comes from an index in well under a millisecond and
 * stays on the calling thread: the round trip would only slow it.
 */
export function costlyRead(q: Omit<ListQuery, "limit">): boolean {
  return (q.filter !== undefined && !indexedOnly(q.filter)) || q.q !== undefined || q.blocked !== undefined || q.hasLink !== undefined
    || q.linkTarget !== undefined || (q.sort !== undefined && q.sort.key !== "updated_at") || q.asOfEvent !== undefined;
}

/** Paths whose equality tests the cards table's own indexes answer. */
const INDEXED_PATHS = new Set(["type_id", "status", "owner"]);

function indexedOnly(n: FilterNode): boolean {
  if (n.kind === "and" || n.kind === "or") return n.nodes.every(indexedOnly);
  return n.kind === "cmp" && INDEXED_PATHS.has(n.path) && (n.op === "$eq" || n.op === "$in");
}

/** How long stopping waits for a read in progress on the thread to end. */
const STOP_WAIT_MS = 2000;

interface Pending { resolve(v: unknown): void; reject(e: unknown): void }

export class ReadThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** [0]: set by the thread once it closed its connection (stop); [1]: stop requested (queued reads are skipped) */
  private readonly control = new Int32Array(new SharedArrayBuffer(8));
  /** false once the thread failed or was stopped: every read then runs on the calling thread */
  alive = true;

  constructor(private readonly start: { path: string; searchPath: string; cacheKib: number }, private readonly config: () => ReadConfig) {}

  run<T>(op: ReadOp, q: ListQuery | readonly ReadCall[]): Promise<T> {
    if (!this.alive) return Promise.reject(new ReadThreadDown());
    const worker = this.worker ?? this.launch();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      const req: ReadRequest = { type: "read", id, op, q };
      worker.postMessage(req);
    });
  }

  /** New definitions: the done column and the searchable fields the reads go by. */
  reconfigure(c: ReadConfig): void {
    this.worker?.postMessage({ type: "config", config: c });
  }

  /**
   * Closes the thread's connection (so its WAL files are left empty, as every connection
   * of ours leaves them), waiting up to STOP_WAIT_MS for a read in progress; then ends it.
   */
  stop(): void {
    if (this.worker && this.alive) {
      Atomics.store(this.control, 1, 1);
      this.worker.postMessage({ type: "stop" });
      Atomics.wait(this.control, 0, 0, STOP_WAIT_MS);
    }
    this.fail();
  }

  private launch(): Worker {
    const worker = startModuleWorker("store/sqlite/read-worker.ts");
    worker.addEventListener("message", (e: MessageEvent<ReadReply>) => this.settle(e.data));
    worker.addEventListener("error", () => this.fail());
    worker.postMessage({ type: "start", ...this.start, config: this.config(), control: this.control.buffer });
    this.worker = worker;
    return worker;
  }

  private settle(reply: ReadReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if ("value" in reply) return p.resolve(reply.value);
    const { message, code, cards } = reply.error;
    if (cards) return p.reject(new CardsError(cards.code, message, cards.extra));
    // the search index's file, as Store.prepareSearch reports it on the calling thread
    if (code === "SEARCH_UNAVAILABLE") return p.reject(new CardsError("unavailable", message, { hint: "check that the workspace's .cards directory is readable; searches without q are not affected" }));
    // else as SQLite's error would be thrown on the calling thread: its message and code (SQLITE_*)
    p.reject(Object.assign(new Error(message), code ? { code } : {}));
  }

  private fail(): void {
    this.alive = false;
    const worker = this.worker;
    this.worker = undefined;
    worker?.terminate();
    for (const p of this.pending.values()) p.reject(new ReadThreadDown());
    this.pending.clear();
  }
}
