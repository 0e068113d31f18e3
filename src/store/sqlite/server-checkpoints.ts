/**
 * A server's WAL checkpoints. The writer copies the WAL into the database file itself, in
 * small steps: SQLite's automatic checkpoint after the COMMIT that takes the WAL past
 * SERVER_CHECKPOINT_PAGES. A backlog (the WAL could not be copied past a long read's
 * snapshot, or the server started on a long WAL) goes to a thread instead: the writer
 * turns its own checkpoints off until the thread has caught up, so no request waits for
 * that copy (docs/decisions.md).
 */
import { startBacklogCheckpointer, type BacklogCheckpointer, type SqliteDb } from "../../platform/sqlite.ts";

/**
 * The writer checkpoints once the WAL holds this many pages (~1.6 MiB). POST /cards at 32
 * connections, 10,000 -> 190,000 cards over three 5 s reps, p99 by rep: a background
 * thread rewinding at 8,000 pages 13 / 26 / 34 ms; inline at 1,000 pages 15 / 16.5 / 17
 * ms; at 400 pages 11.6 / 12.2 / 13.4 ms.
 */
export const SERVER_CHECKPOINT_PAGES = 400;

/**
 * When the WAL starts over, its file is cut back to this. Not less: cut back to 4 MiB,
 * a file that had grown past it (a search indexer's read held a checkpoint back) was cut
 * and grown again at every checkpoint (take-next at 8 clients: 4.8k -> 4.3k claims/s).
 */
export const SERVER_WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** More frames than this (4 checkpoints' worth) not yet copied into the database: a backlog. */
export const WAL_BACKLOG_FRAMES = 4 * SERVER_CHECKPOINT_PAGES;

/** After a catch-up (or without a thread), the writer looks at the backlog again after this. */
const QUIET_MS = 1000;

export class ServerCheckpoints {
  private helper: BacklogCheckpointer | undefined;
  private catchingUp = false;
  private quietUntil = 0;
  private readonly fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");

  constructor(private readonly writer: SqliteDb, private readonly dbPath: string) {
    writer.exec(`PRAGMA wal_autocheckpoint = ${SERVER_CHECKPOINT_PAGES}; PRAGMA journal_size_limit = ${SERVER_WAL_SIZE_LIMIT}`);
  }

  /** Called by the writer before each transaction. */
  beforeBegin(): void {
    if (this.catchingUp) {
      if (this.helper!.busy() && this.helper!.alive()) return;
      // caught up, or the thread is gone: the writer's own small checkpoints again
      this.writer.exec(`PRAGMA wal_autocheckpoint = ${SERVER_CHECKPOINT_PAGES}`);
      this.catchingUp = false;
      this.quietUntil = Date.now() + QUIET_MS;
      return;
    }
    if (Date.now() < this.quietUntil || this.backlogFrames() <= WAL_BACKLOG_FRAMES) return;
    this.helper ??= startBacklogCheckpointer(this.dbPath, { leaveFrames: SERVER_CHECKPOINT_PAGES });
    if (!this.helper.alive()) {
      this.quietUntil = Date.now() + QUIET_MS; // no thread: the writer copies it, as before
      return;
    }
    this.writer.exec("PRAGMA wal_autocheckpoint = 0");
    this.catchingUp = true;
    this.helper.catchUp();
  }

  /** Backlogs the thread took over and what it copied (tests, diagnostics). */
  stats(): { catchingUp: boolean; passes: number; frames: number } {
    return { catchingUp: this.catchingUp, ...(this.helper?.stats() ?? { passes: 0, frames: 0 }) };
  }

  stop(): void {
    this.helper?.stop();
    if (this.shm !== undefined) this.fs.closeSync(this.shm);
    this.shm = undefined;
  }

  private shm: number | undefined;
  private readonly hdr = new Uint32Array(26);

  /**
   * Frames in the WAL not yet copied into the database, read from the wal-index (the
   * `-shm` file, https://sqlite.org/walformat.html): mxFrame is the 5th 32-bit word of
   * its header, nBackfill the 25th (the first word of the checkpoint info after the two
   * 48-byte header copies), in the machine's byte order. The WAL file's length would not
   * do: it keeps its length (up to SERVER_WAL_SIZE_LIMIT) when the WAL starts over.
   */
  private backlogFrames(): number {
    try {
      this.shm ??= this.fs.openSync(`${this.dbPath}-shm`, "r");
      if (this.fs.readSync(this.shm, this.hdr, 0, 104, 0) < 104) return 0;
      return Math.max(0, this.hdr[4]! - this.hdr[24]!);
    } catch {
      return 0; // no index file to read: the writer's own checkpoints go on
    }
  }
}
