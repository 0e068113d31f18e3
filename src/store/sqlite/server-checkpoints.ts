/**
 * A server's WAL checkpoints. The writer copies the WAL into the database file itself, in
 * small steps: SQLite's automatic checkpoint after the COMMIT that takes the WAL past
 * SERVER_CHECKPOINT_PAGES. A backlog (the WAL could not be copied past a long read's
 * snapshot, or the server started on a long WAL) goes to a thread instead: the writer
 * turns its own checkpoints off until the thread has caught up, so no request waits for
 * that copy (docs/decisions.md).
 */
import type { SqliteDb } from "../../platform/sqlite.ts";
import { startBacklogCheckpointer, type BacklogCheckpointer } from "../../platform/sqlite-backlog.ts";

/**
 * The writer checkpoints once the WAL holds this many pages (~1.2 MiB). POST /cards at 32
 * connections, 10,000 -> 190,000 cards over three 5 s reps, p99 by rep: a background
 * thread rewinding at 8,000 pages 13 / 26 / 34 ms; inline at 1,000 pages 15 / 16.5 / 17
 * ms; at 400 pages 11.6 / 12.2 / 13.4 ms on a quiet machine, but 14.5-16 ms (median of
 * reps) on a busy one; at 300 pages 12.4 / 13.2 ms there, at the same rate (bench/http,
 * two rounds each, alternating), and take-next at 8 clients unchanged (4.6-5.0k/s).
 */
export const SERVER_CHECKPOINT_PAGES = 300;

/** More frames than this (4 checkpoints' worth) not yet copied into the database: a backlog. */
export const WAL_BACKLOG_FRAMES = 4 * SERVER_CHECKPOINT_PAGES;

/** After a catch-up (or without a thread), the writer looks at the backlog again after this. */
const QUIET_MS = 1000;

/** A catch-up whose thread ran no pass for this long is given up (the writer copies again). */
const STALLED_MS = 30_000;

/** A WAL frame: a 24-byte header and a 4 KiB page. */
const FRAME_BYTES = 24 + 4096;

/** node:fs, loaded by servers only (a one-shot call would pay ~1.3 ms for it) */
let fsModule: typeof import("node:fs") | undefined;
const nodeFs = (): typeof import("node:fs") => (fsModule ??= process.getBuiltinModule("node:fs") as typeof import("node:fs"));

/**
 * One read-only descriptor per `-shm` file, kept open for the life of the process: on
 * POSIX, closing any descriptor of a file drops every lock this process holds on it,
 * SQLite's locks on the wal-index included (another process could then rebuild it
 * under our connections). Opened only once a WAL file has grown past a backlog's size.
 */
const shmFiles = new Map<string, number>();

/**
 * Frames in the WAL of `dbPath` not yet copied into the database, from the wal-index
 * (the `-shm` file, https://sqlite.org/walformat.html): mxFrame is the 5th 32-bit word
 * of its header and nBackfill the 25th (the first of the checkpoint info after the two
 * 48-byte header copies), in the machine's byte order. A header caught mid-update (its
 * two copies differ) or not yet set up reads as no backlog: the next transaction looks
 * again. Returns the frames copied too (nBackfill). The WAL file's length alone would
 * not do: it keeps its length (up to WAL_SIZE_LIMIT) when the WAL starts over.
 */
export function walBacklog(dbPath: string): { frames: number; copied: number } {
  // the WAL file's length bounds mxFrame, and a stat opens no descriptor
  const fs = nodeFs();
  const size = fs.statSync(`${dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  if (size <= WAL_BACKLOG_FRAMES * FRAME_BYTES) return { frames: 0, copied: 0 };
  let fd = shmFiles.get(dbPath);
  if (fd === undefined) shmFiles.set(dbPath, (fd = fs.openSync(`${dbPath}-shm`, "r")));
  const w = new Uint32Array(26);
  if (fs.readSync(fd, w, 0, 104, 0) < 104) return { frames: 0, copied: 0 };
  const isInit = new Uint8Array(w.buffer)[12];
  for (let i = 0; i < 12; i++) if (w[i] !== w[12 + i]) return { frames: 0, copied: 0 };
  if (w[0] !== 3007000 || isInit !== 1) return { frames: 0, copied: 0 };
  return { frames: Math.max(0, w[4]! - w[24]!), copied: w[24]! };
}

export class ServerCheckpoints {
  private helper: BacklogCheckpointer | undefined;
  private catchingUp = false;
  private quietUntil = 0;
  private lastPasses = 0;
  private lastProgress = 0;

  constructor(private readonly writer: SqliteDb, private readonly dbPath: string) {
    writer.exec(`PRAGMA wal_autocheckpoint = ${SERVER_CHECKPOINT_PAGES}`);
  }

  /** Called by the writer before each transaction; never throws (the writer's own checkpoints are the fallback). */
  beforeBegin(): void {
    try {
      if (this.catchingUp) this.followCatchUp();
      else if (performance.now() >= this.quietUntil) this.lookForBacklog();
    } catch {
      this.endCatchUp();
    }
  }

  /** Backlogs the thread took over and what it copied (tests, diagnostics). */
  stats(): { catchingUp: boolean; passes: number; frames: number } {
    return { catchingUp: this.catchingUp, ...(this.helper?.stats() ?? { passes: 0, frames: 0 }) };
  }

  stop(): void {
    this.helper?.stop();
  }

  private lookForBacklog(): void {
    const backlog = walBacklog(this.dbPath);
    if (backlog.frames <= WAL_BACKLOG_FRAMES) return;
    this.helper ??= startBacklogCheckpointer(this.dbPath, { leaveFrames: SERVER_CHECKPOINT_PAGES });
    if (!this.helper.alive()) {
      this.quietUntil = performance.now() + QUIET_MS; // no thread: the writer copies it, as before
      return;
    }
    this.writer.exec("PRAGMA wal_autocheckpoint = 0");
    this.catchingUp = true;
    this.lastPasses = this.helper.stats().passes;
    this.lastProgress = performance.now();
    this.helper.catchUp(backlog.copied);
  }

  private followCatchUp(): void {
    const h = this.helper!;
    if (!h.alive()) return this.endCatchUp();
    if (h.busy()) {
      const passes = h.stats().passes;
      if (passes !== this.lastPasses) {
        this.lastPasses = passes;
        this.lastProgress = performance.now();
      } else if (performance.now() - this.lastProgress > STALLED_MS) {
        this.endCatchUp();
      }
      return;
    }
    // the thread is done; should the writer have added a backlog again meanwhile, go on
    const backlog = walBacklog(this.dbPath);
    if (backlog.frames > WAL_BACKLOG_FRAMES) {
      h.catchUp(backlog.copied);
      return;
    }
    this.endCatchUp();
  }

  /** The writer's own small checkpoints again. */
  private endCatchUp(): void {
    this.catchingUp = false;
    this.quietUntil = performance.now() + QUIET_MS;
    try {
      this.writer.exec(`PRAGMA wal_autocheckpoint = ${SERVER_CHECKPOINT_PAGES}`);
    } catch {
      /* a closed connection: nothing to restore */
    }
  }
}
