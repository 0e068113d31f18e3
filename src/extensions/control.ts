/**
 * Starting and stopping a supervised service by hand (`cards ext start|stop|restart ID`).
 * Services run under `cards serve`, a process of its own, so a request is a file in the
 * supervisor's request folder (`.cards/services/<pid>.requests/`, made by the server
 * itself, so it can always remove what is put there): the server looks there every
 * CONTROL_POLL_MS, carries the request out, and removes the file once done; its state
 * file (state.ts) then says what runs. Every live supervisor that takes requests gets it
 * (two servers on one workspace each run their own copy of each service).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CardsError } from "../domain/errors.ts";
import { liveSnapshots, readSnapshot, stateFile } from "./state.ts";
import { stillRuns } from "./orphans.ts";

export type ServiceAction = "start" | "stop" | "restart";
export const SERVICE_ACTIONS: readonly ServiceAction[] = ["start", "stop", "restart"];

export interface ServiceRequest { action: ServiceAction; id: string }

/** How often a supervisor looks for requests. */
export const CONTROL_POLL_MS = 200;

const requestDir = (root: string, pid: number): string => join(root, ".cards", "services", `${pid}.requests`);

/**
 * Hands `req` to every live supervisor of `root` and waits until each has carried it out
 * (removed its file), at most `timeoutMs`. Returns the supervisors' pids, and those that
 * did not answer in time; none when no server supervises the workspace.
 */
export async function requestService(root: string, req: ServiceRequest, timeoutMs: number): Promise<{ asked: number[]; late: number[]; old: number[] }> {
  const pending = new Map<number, string>();
  const ids = new Map<number, string | undefined>();
  const old: number[] = [];
  for (const snap of liveSnapshots(root)) {
    const dir = requestDir(root, snap.pid);
    // a server that takes requests made its folder; an older one has none (it never looks)
    if (!existsSync(dir)) {
      old.push(snap.pid);
      continue;
    }
    const name = `${Date.now()}-${process.pid}-${Math.random().toString(36).slice(2)}.json`;
    // written under another name and renamed: the supervisor never reads half a request
    try {
      writeFileSync(join(dir, `${name}.tmp`), JSON.stringify(req));
      renameSync(join(dir, `${name}.tmp`), join(dir, name));
    } catch (e) {
      // (what could not be written may not be removable either: a folder of another user)
      try { rmSync(join(dir, `${name}.tmp`), { force: true }); } catch { /* nothing was written there */ }
      // all or none: the servers already asked are not left to carry it out unreported
      for (const file of pending.values()) try { rmSync(file, { force: true }); } catch { /* taken meanwhile */ }
      throw new CardsError("unavailable", `cannot hand the request to the server (pid ${snap.pid}): ${(e as Error).message}`, {
        hint: "run the command as the user the server runs as",
      });
    }
    pending.set(snap.pid, join(dir, name));
    ids.set(snap.pid, snap.supervisor);
  }
  const asked = [...pending.keys()];
  const end = performance.now() + timeoutMs; // monotonic: a clock step must not end or stretch the wait
  while (pending.size > 0 && performance.now() < end) {
    await new Promise((r) => setTimeout(r, 50));
    for (const [pid, file] of pending) {
      let there = true;
      try { readFileSync(file); } catch { there = false; }
      // taken, or its server is gone (its state file says nothing any more)
      if (!there || !stillRuns(pid, ids.get(pid))) pending.delete(pid);
    }
  }
  const late = [...pending.keys()];
  for (const file of pending.values()) rmSync(file, { force: true }); // not carried out later, unasked
  return { asked, late, old };
}

/**
 * The supervisor's side: carries out each request in its folder with `handle`, one at a
 * time in the order they came, and removes the file once done. Returns the stop function
 * (which removes the folder).
 */
export function watchServiceRequests(root: string, handle: (req: ServiceRequest) => Promise<void>, log: (m: string) => void): () => void {
  const dir = requestDir(root, process.pid);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    log(`services: cannot make ${dir}: ${String(e)}; \`cards ext start|stop|restart\` will not reach this server`);
    return () => {};
  }
  let busy = false;
  let stopped = false;
  /** requests carried out whose file could not be removed: never carried out twice */
  const done = new Set<string>();
  const poll = async (): Promise<void> => {
    if (busy || stopped) return;
    busy = true;
    try {
      let names: string[];
      try {
        names = readdirSync(dir).filter((n) => n.endsWith(".json") && !done.has(n)).sort();
      } catch {
        try { mkdirSync(dir, { recursive: true }); } catch { /* tried again at the next look */ }
        return; // removed meanwhile (by hand, or by a server that took this one for gone): made again
      }
      for (const name of names) {
        const file = join(dir, name);
        try {
          const req = JSON.parse(readFileSync(file, "utf8")) as ServiceRequest;
          if (SERVICE_ACTIONS.includes(req.action) && typeof req.id === "string") await handle(req);
        } catch (e) {
          log(`services: request ${name}: ${String(e)}`);
        }
        try {
          rmSync(file, { force: true });
        } catch (e) {
          done.add(name);
          log(`services: cannot remove the request ${file} (${String(e)}); it is not carried out again`);
        }
      }
    } catch (e) {
      log(`services: requests: ${String(e)}`); // never an unhandled rejection in the server
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void poll(), CONTROL_POLL_MS);
  (timer as { unref?: () => void }).unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
    try { rmSync(dir, { recursive: true, force: true }); } catch { /* only housekeeping */ }
  };
}

/** Removes the request folders of supervisors that are gone (a killed server leaves its folder). */
export function pruneRequestDirs(root: string): void {
  let names: string[];
  try {
    names = readdirSync(join(root, ".cards", "services"));
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(/^(\d+)\.requests$/.exec(n)?.[1]);
    if (!pid || pid === process.pid || stillRuns(pid, readSnapshot(stateFile(root, pid))?.supervisor)) continue;
    try { rmSync(join(root, ".cards", "services", n), { recursive: true, force: true }); } catch { /* another user's: left */ }
  }
}
