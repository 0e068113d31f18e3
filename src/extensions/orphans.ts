/**
 * Extension processes a killed server left running. Services and hooks run in process
 * groups of their own, so a server ended by SIGKILL (or the OOM killer) cannot stop
 * them, and the next server would start second copies beside them. Every process a
 * server starts for an extension therefore carries CARDS_SUPERVISOR (the server's pid,
 * its start time and the workspace root), which whatever it starts inherits. A server
 * marks itself in `.cards/supervisors/` while it runs and unmarks itself when it stops
 * cleanly (having stopped its services and hooks; what they detached on purpose is
 * theirs); a server starting on a workspace stops the processes of marked servers that
 * are gone (SIGTERM, SIGKILL after the grace) before it starts services. Read from
 * /proc: Linux only.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const SUPERVISOR_VAR = "CARDS_SUPERVISOR";

/** How long an orphan gets between SIGTERM and SIGKILL (as a service at shutdown). */
export const ORPHAN_GRACE_MS = 5_000;

interface ProcStat { state: string; start: string }

/** A process's state letter and start time (clock ticks since boot); undefined when gone or without /proc. */
function procStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) may hold spaces and parentheses: fields count from its end
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0]!, start: rest[19]! };
  } catch {
    return undefined;
  }
}

/** What this process puts in CARDS_SUPERVISOR of the extension processes it starts for `root`. */
export function supervisorToken(root: string): string {
  return `${process.pid}:${procStat(process.pid)?.start ?? "0"}:${root}`;
}

const marksDir = (root: string): string => join(root, ".cards", "supervisors");
/** `pid:start` as a file name */
const markName = (supervisor: string): string => supervisor.replace(":", "-");

/**
 * Marks this process as supervising extension processes of `root`; the returned function
 * unmarks it (call it once they are stopped). A mark left behind names a server that was
 * killed: its processes are orphans.
 */
export function markSupervisor(root: string): () => void {
  const supervisor = supervisorToken(root).split(":", 2).join(":");
  const file = join(marksDir(root), markName(supervisor));
  try {
    mkdirSync(marksDir(root), { recursive: true });
    writeFileSync(file, "");
  } catch { /* a read-only workspace: its orphans cannot be told from processes left on purpose */ }
  return () => rmSync(file, { force: true });
}

/** Whether the process a `pid:start` names still runs (the same pid with the same start time). */
function supervisorAlive(supervisor: string): boolean {
  const [pid, start] = supervisor.split(":", 2);
  return procStat(Number(pid))?.start === start;
}

/** The marks of servers of `root` that are gone without unmarking: `pid:start` of each. */
function killedSupervisors(root: string): Set<string> {
  const gone = new Set<string>();
  let names: string[] = [];
  try { names = readdirSync(marksDir(root)); } catch { /* none yet */ }
  for (const n of names) {
    const m = /^(\d+)-(\d+)$/.exec(n);
    if (m && !supervisorAlive(`${m[1]}:${m[2]}`)) gone.add(`${m[1]}:${m[2]}`);
  }
  return gone;
}

/** The processes started for `root` by a server that was killed (none without /proc). */
export function findOrphans(root: string): number[] {
  return scanOrphans(root, killedSupervisors(root));
}

function scanOrphans(root: string, killed: Set<string>): number[] {
  if (killed.size === 0) return [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const key = `${SUPERVISOR_VAR}=`;
  const orphans: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
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
    const i = token.indexOf(":", token.indexOf(":") + 1);
    if (i < 0 || token.slice(i + 1) !== root) continue;
    if (killed.has(token.slice(0, i))) orphans.push(Number(name));
  }
  return orphans;
}

/**
 * Stops what servers of `root` that are gone left running: SIGTERM, then SIGKILL for
 * what still runs after `graceMs`. Resolves when they are gone (or killed).
 */
export async function stopOrphans(root: string, log: (message: string) => void, graceMs = ORPHAN_GRACE_MS): Promise<void> {
  const killed = killedSupervisors(root);
  const found = scanOrphans(root, killed);
  const unmark = () => { for (const s of killed) rmSync(join(marksDir(root), markName(s)), { force: true }); };
  if (found.length === 0) return unmark();
  log(`stopping ${found.length} extension process(es) a server of this workspace left running when it was killed (pid ${found.join(", ")})`);
  const starts = new Map(found.map((pid) => [pid, procStat(pid)?.start]));
  // the same process, still running (a zombie has ended; its parent reaps it)
  const running = (pid: number): boolean => {
    const s = procStat(pid);
    return s !== undefined && s.start === starts.get(pid) && s.state !== "Z" && s.state !== "X";
  };
  const signal = (pid: number, sig: NodeJS.Signals) => { try { process.kill(pid, sig); } catch { /* gone */ } };
  for (const pid of found) signal(pid, "SIGTERM");
  const end = Date.now() + graceMs;
  while (found.some(running) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  const stubborn = found.filter(running);
  for (const pid of stubborn) signal(pid, "SIGKILL");
  if (stubborn.length) log(`killed (SIGKILL) ${stubborn.length} that ignored SIGTERM for ${graceMs} ms (pid ${stubborn.join(", ")})`);
  unmark();
}
