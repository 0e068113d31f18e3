/**
 * The service supervisors' state, shared with other processes through one file per
 * supervising process under `<root>/.cards/services/`, so that `cards ext list` (a
 * separate process) can show whether each service runs. A file whose process is gone
 * says nothing, whatever it holds.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stillRuns } from "./orphans.ts";

export type ServiceState = "starting" | "running" | "backoff" | "stopping" | "stopped" | "failed";

export interface ServiceStatus {
  id: string;
  kind: "service";
  state: ServiceState;
  pid?: number;
  /** restarts since the declaration was (re)loaded */
  restarts: number;
  started_at?: string;
  /** when the next start is due (state backoff) */
  next_start_at?: string;
  last_exit?: { code: number | null; signal: string | null; error?: string; at: string };
}

export interface SupervisorSnapshot {
  /** the process supervising the services (a `cards serve`) */
  pid: number;
  /** that process as orphans.ts names it (pid, start time, pid space): a later process given its pid is not taken for it */
  supervisor?: string;
  updated_at: string;
  services: ServiceStatus[];
}

/**
 * Where a supervisor keeps its state: one file per supervising process, so two servers
 * on one workspace never overwrite each other's (`.cards/services/<pid>.json`).
 */
export function stateFile(root: string, pid = process.pid): string {
  return join(stateDir(root), `${pid}.json`);
}

const stateDir = (root: string): string => join(root, ".cards", "services");
/** the single file of older versions, read while such a server still runs */
const legacyFile = (root: string): string => join(root, ".cards", "services.json");

/** Replaces the state file atomically (write, then rename). */
export function writeSnapshot(path: string, snap: SupervisorSnapshot): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(snap, null, 2)}\n`);
  renameSync(tmp, path);
}

/** Removes a supervisor's file (it stopped: its services have all exited). */
export function removeSnapshot(path: string): void {
  rmSync(path, { force: true });
}

export function readSnapshot(path: string): SupervisorSnapshot | undefined {
  try {
    const snap = JSON.parse(readFileSync(path, "utf8")) as SupervisorSnapshot;
    return typeof snap?.pid === "number" && Array.isArray(snap.services) ? snap : undefined;
  } catch {
    return undefined;
  }
}

const snapshotNames = (root: string): string[] => {
  try {
    return readdirSync(stateDir(root)).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
};

/** The last snapshots of the supervisors still alive (none when no server runs services). */
export function liveSnapshots(root: string): SupervisorSnapshot[] {
  const snaps: SupervisorSnapshot[] = [];
  for (const path of [...snapshotNames(root).map((n) => join(stateDir(root), n)), legacyFile(root)]) {
    const snap = readSnapshot(path);
    if (snap && stillRuns(snap.pid, snap.supervisor) && !snaps.some((s) => s.pid === snap.pid)) snaps.push(snap);
  }
  return snaps;
}

/** Which state to show when several supervisors report one service: the most alive. */
const RANK: Record<ServiceState, number> = { running: 5, starting: 4, stopping: 3, backoff: 2, failed: 1, stopped: 0 };

type Reported = ServiceStatus & { supervisor_pid: number };

/**
 * Per service id, the most alive state any live supervisor reports, with that
 * supervisor's pid, and every live supervisor's report in `instances` (each server on a
 * workspace runs its own copy: there is no leader election).
 */
export function liveServiceStates(root: string): Map<string, Reported & { instances: Array<Omit<Reported, "id" | "kind">> }> {
  const states = new Map<string, Reported & { instances: Array<Omit<Reported, "id" | "kind">> }>();
  for (const snap of liveSnapshots(root)) {
    for (const s of snap.services) {
      const { id: _id, kind: _kind, ...own } = s;
      const instance = { ...own, supervisor_pid: snap.pid };
      const had = states.get(s.id);
      const instances = [...(had?.instances ?? []), instance];
      states.set(s.id, !had || RANK[s.state] > RANK[had.state] ? { ...s, supervisor_pid: snap.pid, instances } : { ...had, instances });
    }
  }
  return states;
}

/** Removes the state files of supervisors that are gone (a crashed server leaves its file; its pid may be another process's by now). */
export function pruneSnapshots(root: string): void {
  for (const n of snapshotNames(root)) {
    const pid = Number(n.slice(0, -5));
    const path = join(stateDir(root), n);
    if (pid === process.pid || stillRuns(pid, readSnapshot(path)?.supervisor)) continue;
    rmSync(path, { force: true });
    // and its folder of requests (control.ts), which its pid alone no longer tells apart
    try { rmSync(join(stateDir(root), `${pid}.requests`), { recursive: true, force: true }); } catch { /* another user's: left */ }
  }
}

export { isAlive } from "../platform/process.ts";
