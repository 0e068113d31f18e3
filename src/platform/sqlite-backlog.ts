/**
 * A thread that copies a WAL backlog into the database file on request, with its own
 * connection, so a server's writer never copies one on the request thread. A backlog
 * builds up while a long read (another process's dump, a backup) keeps the WAL from
 * being copied past its snapshot; the first checkpoint after it would otherwise copy
 * all of it at once (docs/decisions.md). Servers load this module only: a one-shot call
 * never parses the worker's source.
 */
export interface BacklogCheckpointer {
  /**
   * Starts copying (PASSIVE passes) until a pass finds fewer than `leaveFrames` frames
   * left and copied fewer than that itself (the writer added little meanwhile).
   * `copiedBefore`: frames already copied (the wal-index's nBackfill), for stats().
   */
  catchUp(copiedBefore: number): void;
  /** true while a catch-up runs */
  busy(): boolean;
  /** false once the thread could not open the database, died or was stopped */
  alive(): boolean;
  /** passes run and frames this thread copied so far (tests, diagnostics) */
  stats(): { passes: number; frames: number };
  /** stops the thread after its current pass (waits up to 5 s) */
  stop(): void;
}

// Control block (Int32): [0] stop requested, [1] stopped or dead, [2] catch-up wanted /
// running, [3] passes run, [4] frames copied, [5] frames copied before this catch-up.
const BACKLOG_SOURCE = `
import { Database, constants } from "bun:sqlite";
self.onmessage = (e) => {
  const { path, leaveFrames, control } = e.data;
  const c = new Int32Array(control);
  const stopping = () => Atomics.load(c, 0) === 1;
  const done = () => { Atomics.store(c, 1, 1); Atomics.store(c, 2, 0); Atomics.notify(c, 1); Atomics.notify(c, 2); };
  let db;
  try {
    db = new Database(path, { readwrite: true, create: false });
    // as every connection of ours: closing last must not delete the WAL and its index
    db.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    db.exec("PRAGMA busy_timeout = 0");
  } catch {
    done(); return;
  }
  for (;;) {
    if (stopping()) break;
    Atomics.wait(c, 2, 0); // asleep until asked (or stopped)
    if (stopping()) break;
    let copied = Atomics.load(c, 5);
    while (!stopping()) {
      let r = null;
      try { r = db.query("PRAGMA wal_checkpoint(PASSIVE)").get(); } catch {}
      Atomics.add(c, 3, 1);
      const now = r ? r.checkpointed : copied;
      const thisPass = now - copied;
      if (thisPass > 0) Atomics.add(c, 4, thisPass);
      // r.log is where the WAL ended when the pass began: done once little is left and
      // this pass had little to do (else the writer added more meanwhile: go again)
      if (r && r.log - r.checkpointed < leaveFrames && thisPass < leaveFrames) break;
      // no progress: a reader still holds the rest back
      if (thisPass <= 0) Atomics.wait(c, 0, 0, 20);
      copied = now < copied ? 0 : now; // the WAL started over meanwhile
    }
    Atomics.store(c, 2, 0);
    Atomics.notify(c, 2);
  }
  try { db.close(); } catch {}
  done();
};`;

export function startBacklogCheckpointer(path: string, o: { leaveFrames: number }): BacklogCheckpointer {
  const control = new SharedArrayBuffer(24);
  const c = new Int32Array(control);
  const url = URL.createObjectURL(new Blob([BACKLOG_SOURCE], { type: "application/javascript" }));
  const worker = new Worker(url);
  (worker as unknown as { unref(): void }).unref();
  // a thread that died without saying so (an exception, a failed load) is not busy
  const dead = () => { Atomics.store(c, 1, 1); Atomics.store(c, 2, 0); Atomics.notify(c, 1); };
  worker.addEventListener("error", dead);
  worker.addEventListener("close", dead);
  worker.postMessage({ path, leaveFrames: o.leaveFrames, control });
  let stopped = false;
  return {
    catchUp(copiedBefore) {
      if (stopped || Atomics.load(c, 1) === 1) return;
      Atomics.store(c, 5, copiedBefore);
      Atomics.store(c, 2, 1);
      Atomics.notify(c, 2);
    },
    busy: () => Atomics.load(c, 2) === 1,
    alive: () => !stopped && Atomics.load(c, 1) === 0,
    stats: () => ({ passes: Atomics.load(c, 3), frames: Atomics.load(c, 4) }),
    stop() {
      if (stopped) return;
      stopped = true;
      Atomics.store(c, 0, 1);
      Atomics.notify(c, 0); // wakes a wait for a reader
      Atomics.store(c, 2, 1); // wakes a sleeping thread
      Atomics.notify(c, 2);
      // a pass is not interrupted: one over a large backlog may take a while
      Atomics.wait(c, 1, 0, 5000);
      worker.terminate();
      URL.revokeObjectURL(url);
    },
  };
}
