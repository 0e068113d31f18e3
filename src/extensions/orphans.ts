/**
 * Extension processes a killed server left running. Services and hooks run in process
 * groups of their own, so a server ended by SIGKILL (or the OOM killer) cannot stop
 * them, and the next server would start second copies beside them. Every process a
 * server starts for an extension therefore carries CARDS_SUPERVISOR (the server's pid,
 * its start time, the pid space it runs in and the workspace root), which whatever it
 * starts inherits. A server marks itself in `.cards/supervisors/` while it runs and
 * unmarks itself when it stops cleanly (having stopped its services and hooks; what they
 * detached on purpose is theirs); a server starting on a workspace stops the processes of
 * marked servers that are gone (SIGTERM, SIGKILL after the grace) before it starts
 * services.
 *
 * A pid means something only within one boot and one pid namespace (a server in a
 * container is pid 7 there), so marks and tokens carry both, and a server judges only
 * the marks of its own. Read from /proc: Linux only; elsewhere nothing is marked or reaped.
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SUPERVISOR_VAR } from "../domain/extension-env.ts";
import { isAlive } from "../platform/process.ts";

/** How long an orphan gets between SIGTERM and SIGKILL (as a service at shutdown). */
export const ORPHAN_GRACE_MS = 5_000;

interface ProcStat { state: string; ppid: number; start: string }

/** A process's state letter, parent and start time (clock ticks since boot); undefined when gone or without /proc. */
function procStat(pid: number | "self"): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) may hold spaces and parentheses: fields count from its end
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0]!, ppid: Number(rest[1]), start: rest[19]! };
  } catch {
    return undefined;
  }
}

const gone = (s: ProcStat | undefined): boolean => s === undefined || s.state === "Z" || s.state === "X";

let space: string | null | undefined;
/**
 * This boot and pid namespace (`<boot id>.<namespace inode>`), or null where /proc cannot
 * tell (not Linux): pids are compared only within one.
 */
function pidSpace(): string | null {
  if (space !== undefined) return space;
  try {
    const boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const ns = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1];
    space = boot && ns && procStat("self") ? `${boot}.${ns}` : null;
  } catch {
    space = null;
  }
  return space;
}

/** The root as the file system names it: a server opened through a symlink and one opened through the real path are one workspace. */
function realRoot(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** `<pid>-<start>-<space>`: one server, as its mark's file name, in its token and in its state file (state.ts). */
export function selfId(): string | undefined {
  const s = pidSpace();
  const start = procStat(process.pid)?.start;
  return s && start ? `${process.pid}-${start}-${s}` : undefined;
}

/**
 * Whether the process `pid` that wrote `id` (selfId) still runs: a later process given
 * the same pid (soon, in a container) has another start time. Without an id (written by
 * an older version, or off Linux) or from another boot or pid namespace, whether some
 * process has that pid is all that can be told.
 */
export function stillRuns(pid: number, id: string | undefined): boolean {
  const m = id === undefined ? null : /^(\d+)-(\d+)-(.+)$/.exec(id);
  if (!m || Number(m[1]) !== pid || m[3] !== pidSpace()) return isAlive(pid);
  const stat = procStat(pid);
  return !gone(stat) && stat!.start === m[2];
}

/** What this process puts in CARDS_SUPERVISOR of the extension processes it starts for `root` (undefined off Linux). */
export function supervisorToken(root: string): string | undefined {
  const id = selfId();
  return id && `${id}:${realRoot(root)}`;
}

const marksDir = (root: string): string => join(root, ".cards", "supervisors");

/**
 * Marks this process as supervising extension processes of `root`; the returned function
 * unmarks it (call it once they are stopped). A mark left behind names a server that was
 * killed: its processes are orphans.
 */
export function markSupervisor(root: string): () => void {
  const id = selfId();
  if (!id) return () => {};
  const file = join(marksDir(root), id);
  try {
    mkdirSync(marksDir(root), { recursive: true });
    writeFileSync(file, "");
  } catch { /* a read-only workspace: its orphans cannot be told from processes left on purpose */ }
  return () => { try { rmSync(file, { force: true }); } catch { /* another user's folder: the next server cannot judge it either */ } };
}

/** The marks of this pid space whose servers are gone without unmarking (their ids). */
function killedSupervisors(root: string): Set<string> {
  const killed = new Set<string>();
  const s = pidSpace();
  if (!s) return killed;
  let names: string[] = [];
  try { names = readdirSync(marksDir(root)); } catch { /* none yet */ }
  for (const n of names) {
    const m = /^(\d+)-(\d+)-(.+)$/.exec(n);
    // another boot's or another namespace's server is not judged here: its pids are not ours
    if (!m || m[3] !== s) continue;
    const stat = procStat(Number(m[1]));
    if (gone(stat) || stat!.start !== m[2]) killed.add(n);
  }
  return killed;
}

/** This process and its ancestors: a launcher that inherited a killed server's token is not its orphan to stop. */
function ancestry(): Set<number> {
  const chain = new Set<number>([process.pid]);
  for (let pid = process.pid; pid > 1 && chain.size < 64;) {
    const parent = procStat(pid)?.ppid;
    if (!parent || chain.has(parent)) break;
    chain.add(parent);
    pid = parent;
  }
  return chain;
}

interface Orphan { pid: number; start: string }

/** The processes started for `root` by servers in `killed`, with their start times (read with the scan). */
function scanOrphans(root: string, killed: Set<string>): Orphan[] {
  if (killed.size === 0) return [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const key = `${SUPERVISOR_VAR}=`;
  const real = realRoot(root);
  const skip = ancestry();
  const orphans: Orphan[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || skip.has(Number(name))) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${name}/environ`, "latin1"); // another user's: EACCES
    } catch {
      continue;
    }
    let at = 0;
    if (!environ.startsWith(key)) {
      at = environ.indexOf(`\0${key}`) + 1;
      if (at === 0) continue;
    }
    const end = environ.indexOf("\0", at);
    const token = environ.slice(at + key.length, end < 0 ? undefined : end);
    const i = token.indexOf(":");
    if (i < 0 || token.slice(i + 1) !== real || !killed.has(token.slice(0, i))) continue;
    const stat = procStat(Number(name));
    if (!gone(stat)) orphans.push({ pid: Number(name), start: stat!.start });
  }
  return orphans;
}

/** The processes started for `root` by a server that was killed (none off Linux). */
export function findOrphans(root: string): number[] {
  return scanOrphans(root, killedSupervisors(root)).map((o) => o.pid);
}

/**
 * Stops what servers of `root` that are gone left running: SIGTERM, then SIGKILL for
 * what still runs after `graceMs`, then drops their marks. Never throws.
 */
export async function stopOrphans(root: string, log: (message: string) => void, graceMs = ORPHAN_GRACE_MS): Promise<void> {
  const killed = killedSupervisors(root);
  const found = scanOrphans(root, killed);
  const unmark = () => {
    for (const id of killed) {
      try { rmSync(join(marksDir(root), id), { force: true }); } catch { /* another user's folder */ }
    }
  };
  if (found.length === 0) return unmark();
  const pids = found.map((o) => o.pid);
  log(`stopping ${found.length} extension process(es) a server of this workspace left running when it was killed (pid ${pids.join(", ")})`);
  // the same process, still running: a pid reused since the scan has another start time
  const running = (o: Orphan): boolean => {
    const s = procStat(o.pid);
    return !gone(s) && s!.start === o.start;
  };
  const signal = (o: Orphan, sig: NodeJS.Signals) => { if (running(o)) try { process.kill(o.pid, sig); } catch { /* gone */ } };
  for (const o of found) signal(o, "SIGTERM");
  const end = performance.now() + graceMs; // monotonic: a clock step must not cut or stretch the grace
  while (found.some(running) && performance.now() < end) await new Promise((r) => setTimeout(r, 50));
  const lingering = found.filter(running);
  for (const o of lingering) signal(o, "SIGKILL");
  if (lingering.length) log(`killed (SIGKILL) ${lingering.length} that ignored SIGTERM for ${graceMs} ms (pid ${lingering.map((o) => o.pid).join(", ")})`);
  unmark();
}
