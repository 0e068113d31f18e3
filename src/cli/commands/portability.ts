/**
 * `cards dump [--out F]` and `cards restore [--in F]` (JSONL, DECISIONS format). They open
 * the workspace files directly (a running server may keep serving meanwhile: the dump
 * reads one snapshot), so they refuse CARDS_URL / --url. A progress line goes to stderr
 * when stderr is a terminal.
 */
import { closeSync, createReadStream, fsyncSync, lstatSync, openSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { defineCommand } from "../define.ts";
import { CardsError, fromEnvironment, isCardsError } from "../../domain/errors.ts";
import { backupWorkspace, dumpWorkspace, jsonlLines, restoreWorkspace, type PortCounts } from "../../service/index.ts";
import { openService } from "../../platform/open.ts";
import { isAlive } from "../../extensions/state.ts";
import { serverUrl, type CliGlobals } from "../client.ts";
import { writeAll } from "../write-all.ts";

const FLUSH_BYTES = 256 * 1024;

export const dump = defineCommand({
  meta: { name: "dump", description: "Write the whole workspace as JSONL (header, users, cards with comments and links, events)" },
  args: {
    out: { type: "string", description: "file to write (default: stdout)" },
    jsonl: { type: "boolean", description: "JSON Lines: a dump always is (accepted for scripts that ask)" },
  },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "dump");
    // where --out really writes: through a symbolic link to its target; a device or a pipe
    // (/dev/null, /dev/stdout) is written as it is, never replaced by a file
    const target = args.out === undefined ? undefined : outTarget(args.out);
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    let fd = 1;
    // a file is written beside the target and renamed over it once whole: a dump cut short
    // (a kill, a full disk) never leaves a file that restores as a smaller workspace, nor
    // costs the previous dump of that name
    const partial = target && !target.direct ? `${target.path}.${process.pid}.partial` : undefined;
    if (partial) removeLeftovers(target!.path);
    if (target) {
      try {
        fd = openSync(partial ?? target.path, "w");
      } catch (e) {
        svc.close();
        // a path that cannot be (no such directory, no permission) is the caller's to fix;
        // a disk that will not take it (read-only, full) is the machine's
        const code = (e as { code?: string }).code;
        if (code === "EROFS" || code === "ENOSPC" || code === "EDQUOT" || code === "EIO") {
          throw new CardsError("unavailable", `cannot write ${args.out}: ${(e as Error).message}`, { hint: "check the file system is writable and has space (nothing was written)" });
        }
        const machine = fromEnvironment(e); // no descriptors left
        if (machine !== e) throw machine;
        throw new CardsError("usage", `cannot write ${args.out}: ${(e as Error).message}`, { field: "--out", hint: "name a file in a directory that exists and is writable" });
      }
    }
    let buf = "";
    let readerGone = false;
    const flush = () => {
      if (!buf) return;
      try {
        writeAll(fd, buf); // all of it: a pipe takes part of a write, or none (EAGAIN)
      } catch (e) {
        // a reader that stopped reading (`cards dump | head`) ends the dump quietly
        if ((e as { code?: string }).code === "EPIPE" && !partial) {
          readerGone = true;
          throw e;
        }
        throw new CardsError("unavailable", `cannot write ${args.out ?? "stdout"}: ${(e as Error).message}`, { hint: partial ? "check the disk has space (nothing was written)" : "check the disk has space (the dump is incomplete)" });
      }
      buf = "";
    };
    let whole = false;
    try {
      const n = dumpWorkspace(svc, (line) => { buf += line + "\n"; if (buf.length >= FLUSH_BYTES) flush(); }, progress("dumped"));
      flush();
      if (partial) {
        try {
          fsyncSync(fd);
          renameSync(partial, target!.path);
        } catch (e) {
          throw new CardsError("unavailable", `cannot write ${args.out}: ${(e as Error).message}`, { hint: "check the disk has space (nothing was written)" });
        }
      }
      whole = true;
      done(n, "dumped");
      return args.out ? { out: args.out, ...n } : undefined;
    } catch (e) {
      if (readerGone) return undefined;
      throw e;
    } finally {
      if (target) closeSync(fd);
      if (partial && !whole) rmSync(partial, { force: true });
      svc.close();
    }
  },
});

/**
 * The file `--out` names, through symbolic links (a link is written through, never
 * replaced); `direct` for what is not a regular file (a device such as /dev/null, a pipe),
 * which is written as it is. A directory is the caller's to fix.
 */
function outTarget(out: string): { path: string; direct: boolean } {
  let path = out;
  try {
    path = realpathSync(out);
  } catch {
    // nothing there, or a link to nothing yet: the file the link names is made
    try {
      if (lstatSync(out).isSymbolicLink()) path = resolve(dirname(out), readlinkSync(out));
    } catch { /* nothing there: made */ }
  }
  let kind;
  try {
    kind = statSync(path);
  } catch {
    return { path, direct: false };
  }
  if (kind.isDirectory()) {
    throw new CardsError("usage", `cannot write ${out}: it is a directory`, { field: "--out", value: out, hint: "name a file, such as --out workspace.jsonl" });
  }
  return { path, direct: !kind.isFile() };
}

export const restore = defineCommand({
  meta: { name: "restore", description: "Load a JSONL dump into a workspace that holds no cards (all or nothing)" },
  args: { in: { type: "string", description: "dump file to read (default: stdin)" } },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "restore");
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    try {
      const unreadable = (e: unknown) => (isCardsError(e) ? e : new CardsError("usage", `cannot read ${args.in ?? "stdin"}: ${(e as Error).message}`, { field: "--in" }));
      let input;
      try {
        if (args.in && statSync(args.in).isDirectory()) throw new Error("it is a directory");
        input = args.in ? createReadStream(args.in) : createReadStream("", { fd: 0 });
        await new Promise<void>((resolve, reject) => { input!.once("open", () => resolve()); input!.once("error", reject); if (!args.in) resolve(); });
      } catch (e) {
        throw unreadable(e);
      }
      const r = await restoreWorkspace(svc, jsonlLines(utf8Text(input as AsyncIterable<Uint8Array>, args.in ?? "stdin"), unreadable), progress("restored"));
      done(r.restored, "restored");
      // notices: cards kept as dumped that the definitions here would refuse as new writes
      return r.notices_total ? r : { restored: r.restored };
    } finally {
      svc.close();
    }
  },
});

export const backup = defineCommand({
  meta: { name: "backup", description: "Write a consistent online copy of the database (safe while writers run); see docs/backup.md" },
  args: { out: { type: "string", description: "the new backup file", required: true } },
  run: async ({ args, data }) => {
    const g = local(data as CliGlobals, "backup");
    const into = dirname(args.out);
    let isDir = false;
    try { isDir = statSync(into, { throwIfNoEntry: false })?.isDirectory() === true; } catch { /* not searchable (EACCES), or a file on the way (ENOTDIR) */ }
    if (!isDir) {
      throw new CardsError("usage", `cannot write ${args.out}: ${into} is no directory this user can reach`, { field: "--out", hint: "name a file in a directory that exists and is writable" });
    }
    removeLeftovers(args.out);
    const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
    try {
      return backupWorkspace(svc, args.out);
    } finally {
      svc.close();
    }
  },
});

/**
 * Removes what a killed dump or backup to `out` left beside it (`out.<pid>.partial`, with
 * SQLite's `-journal`, `-wal` and `-shm` of a backup): the writer is gone, so the file
 * is no dump and no database, and each failed run would add another. A writer still
 * running keeps its file.
 */
function removeLeftovers(out: string): void {
  const dir = dirname(out);
  const prefix = `${basename(out)}.`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const m = name.startsWith(prefix) ? /^(\d+)\.partial(?:-journal|-wal|-shm)?$/.exec(name.slice(prefix.length)) : null;
    if (!m || Number(m[1]) === process.pid || isAlive(Number(m[1]))) continue;
    try { rmSync(`${dir}/${name}`, { force: true }); } catch { /* another user's file: left as it is */ }
  }
}


function local(g: CliGlobals, what: string): CliGlobals {
  if (serverUrl(g)) {
    throw new CardsError("usage", `${what} works on the workspace files, not through a server`, {
      hint: `run it with --dir on the machine that holds the workspace (a running server may stay up), without CARDS_URL / --url`,
    });
  }
  return g;
}

/** A progress line on stderr, only when stderr is a terminal. */
/**
 * The dump's bytes as text, refusing bytes that are not UTF-8 (a lossy decode stored
 * U+FFFD in the cards of a dump a Latin-1 editor had touched, and exited 0).
 */
async function* utf8Text(bytes: AsyncIterable<Uint8Array>, from: string): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let read = 0;
  const refuse = (): CardsError => new CardsError("bad_request", `${from} is not valid UTF-8 (a byte of another encoding, such as Latin-1, after byte ${read}); nothing was restored`, {
    field: "--in", hint: "a dump is UTF-8 text: restore the file `cards dump` wrote, or convert this one (iconv -t UTF-8)",
  });
  for await (const chunk of bytes) {
    let text: string;
    try { text = decoder.decode(chunk, { stream: true }); } catch { throw refuse(); }
    read += chunk.length;
    yield text;
  }
  let rest: string;
  try { rest = decoder.decode(); } catch { throw refuse(); }
  if (rest) yield rest;
}

function progress(verb: string): (n: PortCounts) => void {
  if (!process.stderr.isTTY) return () => {};
  return (n) => process.stderr.write(`\r${verb} ${n.users} users, ${n.cards} cards, ${n.events} events`);
}

function done(_n: PortCounts, _verb: string): void {
  if (process.stderr.isTTY) process.stderr.write("\n");
}
