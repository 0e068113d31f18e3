/**
 * A server's side of its search indexer thread (search-worker.ts). The thread keeps the
 * index current; a search on the request thread never indexes nor waits for the index's
 * lock itself: when the index is behind the newest event, it wakes the thread and awaits
 * (Atomics.waitAsync) the pass that covers that event.
 *
 * Shared control block: Int32 [0] stop requested, [1] stopped, [2] wake, [3] passes done
 * (notified after each), [4] config generation applied, [5] failed passes; BigInt64 at
 * byte 32: the seq of the newest event the index covers.
 */
import { startModuleWorker } from "../../platform/worker.ts";
import { CardsError } from "../../domain/errors.ts";
import type { SearchConfig } from "../port.ts";

/** How long a search waits for the indexer thread before answering `unavailable`. */
export const SEARCH_WAIT_MS = 10_000;

export type ConfigEntries = Array<[string, string[] | null]>;

export const configEntries = (search: SearchConfig): ConfigEntries => [...search.entries()].map(([k, v]) => [k, v ?? null]);

export class SearchIndexer {
  private readonly worker: Worker;
  private readonly i32: Int32Array;
  private readonly applied: BigInt64Array;
  private configGen = 0;
  /** false once the thread failed to start or died: searches then catch up themselves */
  alive = true;

  constructor(mainPath: string, searchPath: string, config: ConfigEntries, intervalMs: number) {
    const sab = new SharedArrayBuffer(40);
    this.i32 = new Int32Array(sab, 0, 8);
    this.applied = new BigInt64Array(sab, 32, 1);
    this.worker = startModuleWorker("store/sqlite/search-worker.ts");
    this.worker.addEventListener("error", () => { this.alive = false; });
    this.worker.postMessage({ type: "start", mainPath, searchPath, config, intervalMs, control: sab });
  }

  /** New searchable fields: the thread re-indexes what changed; searches wait for that pass. */
  reconfigure(config: ConfigEntries): void {
    this.worker.postMessage({ type: "config", config, gen: ++this.configGen });
    this.wake();
  }

  /** True when the index covers event `head` with the current config. */
  covers(head: number): boolean {
    return this.applied[0]! >= BigInt(head) && Atomics.load(this.i32, 4) === this.configGen;
  }

  /** Resolves once the index covers event `head`; rejects after SEARCH_WAIT_MS or when the thread dies. */
  async waitFor(head: number): Promise<"covered" | "dead"> {
    const deadline = performance.now() + SEARCH_WAIT_MS; // monotonic: a clock step must not end or stretch the wait
    const failedBefore = Atomics.load(this.i32, 5);
    for (;;) {
      const passes = Atomics.load(this.i32, 3);
      if (this.covers(head)) return "covered";
      if (!this.alive || Atomics.load(this.i32, 5) > failedBefore + 3) return "dead";
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new CardsError("unavailable", "the full-text index is still catching up with the newest writes", { hint: "retry in a few seconds; searches without q are not affected" });
      }
      this.wake();
      const w = Atomics.waitAsync(this.i32, 3, passes, Math.min(left, 500));
      if (w.async) await w.value;
    }
  }

  /** Passes the thread has made (each sync of the index, idle or not). */
  passes(): number {
    return Atomics.load(this.i32, 3);
  }

  private wake(): void {
    Atomics.store(this.i32, 2, 1);
    Atomics.notify(this.i32, 2);
  }

  /** Stops the thread after its current pass (waits up to 2 s). */
  stop(): void {
    Atomics.store(this.i32, 0, 1);
    this.wake();
    if (this.alive) Atomics.wait(this.i32, 1, 0, 2000);
    this.worker.terminate();
  }
}
