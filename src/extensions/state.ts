/**
 * The service supervisor's state, shared with other processes through
 * `<root>/.cards/services.json` so that `cards ext list` (a separate process) can show
 * whether each service runs. The file names the supervising process; when that process
 * is gone, nothing runs, whatever the file says.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

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
  updated_at: string;
  services: ServiceStatus[];
}

/** Where the supervisor's state is kept. */
export function stateFile(root: string): string {
  return join(root, ".cards", "services.json");
}

/** Replaces the state file atomically (write, then rename). */
export function writeSnapshot(path: string, snap: SupervisorSnapshot): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(snap, null, 2)}\n`);
  renameSync(tmp, path);
}

/** The last snapshot of a supervisor that is still alive; undefined when none runs. */
export function liveSnapshot(root: string): SupervisorSnapshot | undefined {
  let snap: SupervisorSnapshot;
  try {
    snap = JSON.parse(readFileSync(stateFile(root), "utf8")) as SupervisorSnapshot;
  } catch {
    return undefined;
  }
  return typeof snap?.pid === "number" && isAlive(snap.pid) && Array.isArray(snap.services) ? snap : undefined;
}

/** True when a process with this id exists (signal 0 probes without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
