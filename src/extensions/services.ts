/**
 * Service extensions: long-running processes supervised by `cards serve`. Each one starts
 * when declared (unless autostart is false) and is restarted by its restart_policy
 * (on-failure, the default: after a non-zero exit, a signal or a failed start; always;
 * never) after a backoff that doubles from `initialMs` to `maxMs` and resets once a run
 * lasted `resetAfterMs`. reconcile() applies a definitions reload: new declarations start,
 * removed ones stop, changed ones (compared as JSON) restart. stop() sends SIGTERM and
 * SIGKILL after the grace. State is mirrored to `.cards/services/<pid>.json` for
 * `cards ext list`.
 */
import type { ExtensionDef } from "../domain/types.ts";
import { spawnSupervised, type ExitStatus, type SupervisedChild } from "../platform/spawn.ts";
import { describeExit, extensionCwd, extensionEnv, stderrNote } from "./env.ts";
import { liveSnapshots, pruneSnapshots, removeSnapshot, stateFile, writeSnapshot, type ServiceState, type ServiceStatus } from "./state.ts";
import { SUPERVISOR_VAR } from "../domain/extension-env.ts";
import { selfId, supervisorToken } from "./orphans.ts";
import type { ServiceRequest } from "./control.ts";

export type { ServiceState, ServiceStatus } from "./state.ts";

/** What the supervisor needs from the service (the Service class satisfies it). */
export interface ServiceHost {
  readonly root: string;
  readonly defs: { readonly extensions: readonly ExtensionDef[] };
}

export interface ServiceOptions {
  /** the server's URL, given to services as CARDS_URL */
  url?: string;
  /** starts, exits, restarts and stops, one line each */
  log: (msg: string) => void;
  /** what the operator should act on (default: log) */
  warn?: (msg: string) => void;
  /** each line a service writes to stdout or stderr (default: logged as `service ID: LINE`) */
  output?: (id: string, stream: "stdout" | "stderr", line: string) => void;
  /** between SIGTERM and SIGKILL when stopping (default 5 s) */
  stopGraceMs?: number;
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  /** the base environment of service processes (default process.env) */
  env?: Record<string, string | undefined>;
  /** where to mirror the state; false: nowhere (default `<root>/.cards/services/<pid>.json`) */
  stateFile?: string | false;
}

export interface Services {
  /** stops every service: SIGTERM, then SIGKILL after the grace; resolves when all have exited */
  stop(): Promise<void>;
  /** after a definitions reload: start new and changed declarations, stop removed and changed ones */
  reconcile(): void;
  /** every declared service and its state */
  list(): ServiceStatus[];
  /**
   * Starts, stops or restarts one service by hand (`cards ext start|stop|restart`).
   * Stopped by hand, it stays stopped (no restart_policy, no reload that leaves its
   * declaration as it is) until started again or the server restarts; started by hand,
   * it starts whatever `autostart` says. Resolves once done.
   */
  control(req: ServiceRequest): Promise<void>;
}

interface Managed {
  def: ExtensionDef;
  key: string;
  state: ServiceState;
  child?: SupervisedChild;
  restarts: number;
  /** consecutive short-lived runs, for the backoff */
  failures: number;
  startedAt?: number;
  /** the same on the monotonic clock: how long it ran, whatever the wall clock did meanwhile */
  startedMono?: number;
  nextStartAt?: number;
  timer?: ReturnType<typeof setTimeout>;
  lastExit?: ServiceStatus["last_exit"];
  /** set once the entry is being stopped for good (removed, changed or shutdown) */
  retired?: Promise<void>;
}

/** Starts the declared services and supervises them until stop(). */
export function startServices(host: ServiceHost, opts: ServiceOptions): Services {
  const graceMs = opts.stopGraceMs ?? 5_000;
  const initialMs = opts.backoff?.initialMs ?? 500;
  const maxMs = opts.backoff?.maxMs ?? 30_000;
  const resetAfterMs = opts.backoff?.resetAfterMs ?? 60_000;
  const baseEnv = opts.env ?? (process.env as Record<string, string | undefined>);
  /** in every process started here: a server started after this one is killed stops them (orphans.ts) */
  const supervisor = supervisorToken(host.root);
  const sink = opts.output ?? ((id, _stream, line) => opts.log(`service ${id}: ${line}`));
  const budgets = new Map<string, (stream: "stdout" | "stderr", line: string) => void>();
  /** each service's lines go to the sink at most OUTPUT_LINES_PER_SECOND; the rest are counted */
  const output = (id: string, stream: "stdout" | "stderr", line: string): void => {
    let pass = budgets.get(id);
    if (!pass) budgets.set(id, (pass = lineBudget(OUTPUT_LINES_PER_SECOND, (st, l) => sink(id, st, l), (n) => opts.log(`service ${id}: ${n} more output line(s) not logged (over ${OUTPUT_LINES_PER_SECOND} a second)`))));
    pass(stream, line);
  };
  const statePath = opts.stateFile === false ? undefined : (opts.stateFile ?? stateFile(host.root));
  const managed = new Map<string, Managed>();
  /** per id: resolves once every earlier process of that service has exited */
  const gone = new Map<string, Promise<void>>();
  let stopped = false;

  const iso = (ms: number) => new Date(ms).toISOString();
  const status = (m: Managed): ServiceStatus => ({
    id: m.def.id, kind: "service", state: m.state,
    ...(m.child?.pid !== undefined && m.child.running ? { pid: m.child.pid } : {}),
    restarts: m.restarts,
    ...(m.startedAt !== undefined && m.state === "running" ? { started_at: iso(m.startedAt) } : {}),
    ...(m.nextStartAt !== undefined && m.state === "backoff" ? { next_start_at: iso(m.nextStartAt) } : {}),
    ...(m.lastExit ? { last_exit: m.lastExit } : {}),
  });
  const list = (): ServiceStatus[] => [...managed.values()].map(status);

  const self = statePath ? selfId() : undefined;
  const mirror = (): void => {
    // written with no service too: `cards ext start` finds the server by it, to start one
    // declared after the server started
    if (!statePath) return;
    try {
      writeSnapshot(statePath, { pid: process.pid, ...(self ? { supervisor: self } : {}), updated_at: new Date().toISOString(), services: list() });
    } catch (e) {
      opts.log(`services: could not write ${statePath}: ${String(e)}`);
    }
  };
  const setState = (m: Managed, s: ServiceState): void => {
    m.state = s;
    mirror();
  };

  const start = (m: Managed): void => {
    m.timer = undefined;
    m.nextStartAt = undefined;
    if (stopped || m.retired) return;
    const { def } = m;
    const child = spawnSupervised({
      argv: def.run,
      cwd: extensionCwd(host.root, def),
      env: extensionEnv(baseEnv, def, { CARDS_URL: opts.url ?? baseEnv.CARDS_URL, CARDS_WORKSPACE: host.root, [SUPERVISOR_VAR]: supervisor }),
      output: (stream, line) => output(def.id, stream, line),
    });
    m.child = child;
    m.startedAt = Date.now();
    m.startedMono = performance.now();
    if (child.pid !== undefined) opts.log(`service ${def.id}: started (pid ${child.pid})`);
    setState(m, "running");
    void child.exited.then((s) => exited(m, child, s));
  };

  const exited = (m: Managed, child: SupervisedChild, s: ExitStatus): void => {
    if (m.child !== child) return;
    const ranMs = performance.now() - (m.startedMono ?? performance.now());
    m.lastExit = { code: s.code, signal: s.signal, ...(s.error !== undefined ? { error: s.error } : {}), at: new Date().toISOString() };
    if (m.retired) return; // stopEntry reports it
    const how = `${describeExit(s, m.def.run[0]!)}${s.error === undefined ? ` after ${seconds(ranMs)}` : ""}${stderrNote(child.stderrTail())}`;
    const failed = s.code !== 0;
    const policy = m.def.restart_policy ?? "on-failure";
    if (policy === "never" || (policy === "on-failure" && !failed)) {
      opts.log(`service ${m.def.id}: ${how}; not restarting (restart_policy ${policy})`);
      setState(m, failed ? "failed" : "stopped");
      return;
    }
    if (ranMs >= resetAfterMs) m.failures = 0;
    const delay = Math.min(initialMs * 2 ** m.failures, maxMs);
    m.failures++;
    m.nextStartAt = Date.now() + delay;
    opts.log(`service ${m.def.id}: ${how}; restarting in ${seconds(delay)} (restart ${m.restarts + 1})`);
    m.timer = setTimeout(() => {
      m.restarts++;
      start(m);
    }, delay);
    setState(m, "backoff");
  };

  /** Stops one entry for good; resolves once its process has exited. */
  const stopEntry = (m: Managed, why: string): Promise<void> => {
    if (m.retired) return m.retired;
    if (m.timer) clearTimeout(m.timer);
    m.timer = undefined;
    const child = m.child?.running ? m.child : undefined;
    // an entry that never started (waiting for its predecessor) is gone once that one is
    const before = gone.get(m.def.id) ?? Promise.resolve();
    if (!child) {
      m.retired = before;
      if (m.state !== "failed") setState(m, "stopped");
      return m.retired;
    }
    setState(m, "stopping");
    const ended = child.terminate(graceMs).then(({ status: s, killed }) => {
      const how = killed ? `killed (SIGKILL) after ignoring SIGTERM for ${graceMs} ms` : s.signal ? `terminated (${s.signal})` : `exited with code ${s.code}`;
      opts.log(`service ${m.def.id}: stopped (${why}): ${how}`);
      setState(m, "stopped");
    });
    m.retired = Promise.all([before, ended]).then(() => {});
    gone.set(m.def.id, m.retired);
    return m.retired;
  };

  /**
   * A new entry for `def`; it starts once every earlier process of that id has exited
   * (unless autostart is false and no one asked: `byHand`). Resolves once started.
   */
  const declare = (def: ExtensionDef, byHand = false): Promise<void> => {
    const m: Managed = { def, key: JSON.stringify(def), state: "stopped", restarts: 0, failures: 0 };
    managed.set(def.id, m);
    const after = gone.get(def.id);
    if (def.autostart === false && !byHand) {
      opts.log(`service ${def.id}: not started (autostart false)`);
      mirror();
      return Promise.resolve();
    }
    if (!after) {
      start(m);
      return Promise.resolve();
    }
    setState(m, "starting");
    return after.then(() => {
      if (gone.get(def.id) === after) gone.delete(def.id);
      if (managed.get(def.id) === m) start(m);
    });
  };

  const control = async (req: ServiceRequest): Promise<void> => {
    const m = managed.get(req.id);
    if (stopped || !m) return; // a reload removed it meanwhile
    if (req.action !== "start") {
      await stopEntry(m, "stopped by hand");
      if (req.action === "stop") return;
    }
    // never beside an earlier process of it that is still within its grace (a reload's restart)
    await gone.get(req.id);
    const cur = managed.get(req.id);
    if (stopped || !cur) return;
    if (!cur.retired) {
      if (cur.state === "running" || cur.state === "starting" || cur.state === "stopping") return;
      // waiting out a backoff, exited under its restart_policy, or never started (autostart false)
      if (cur.timer) clearTimeout(cur.timer);
      cur.failures = 0;
      opts.log(`service ${cur.def.id}: started by hand`);
      return start(cur);
    }
    opts.log(`service ${cur.def.id}: started by hand`);
    await declare(cur.def, true);
  };

  const reconcile = (): void => {
    if (stopped) return;
    const declared = new Map(host.defs.extensions.filter((e) => e.kind === "service").map((e) => [e.id, e]));
    for (const [id, m] of managed) {
      const def = declared.get(id);
      if (!def) {
        managed.delete(id);
        void stopEntry(m, "no longer declared").then(mirror);
      } else if (JSON.stringify(def) !== m.key) {
        opts.log(`service ${id}: declaration changed; restarting`);
        void stopEntry(m, "declaration changed");
        void declare(def);
      }
    }
    for (const [id, def] of declared) if (!managed.has(id)) void declare(def);
    mirror();
  };

  if (statePath) {
    try { pruneSnapshots(host.root); } catch { /* only housekeeping */ }
    // this one's file first: of two servers starting at once, each then finds the other's
    mirror();
    // there is no leader election: say so where the operator looks, before the copies start
    const others = liveSnapshots(host.root).map((s) => s.pid).filter((pid) => pid !== process.pid);
    const declared = host.defs.extensions.filter((e) => e.kind === "service").map((e) => e.id);
    if (others.length > 0 && declared.length > 0) {
      (opts.warn ?? opts.log)(`another cards serve on this workspace (pid ${others.join(", ")}) supervises services too: each server runs its own copy of ${declared.join(", ")} (docs/extensions.md)`);
    }
  }
  reconcile();
  return {
    reconcile,
    list,
    control,
    async stop() {
      if (stopped) return;
      stopped = true;
      // and for the ones a reload removed that are still inside their grace
      await Promise.all([...managed.values()].map((m) => stopEntry(m, "shutdown")).concat([...gone.values()]));
      // every service has exited: the file would only say so until another supervisor pruned it
      if (statePath) {
        try { removeSnapshot(statePath); } catch { /* only housekeeping */ }
      }
    },
  };
}

/**
 * Lines of output a service may log per second. A service printing a flood (a debug
 * mode, `yes`) would otherwise keep the server's one thread formatting log lines: 7 MB
 * of output held GET /v1/health for 11 s.
 */
export const OUTPUT_LINES_PER_SECOND = 200;

/** Passes at most `perSecond` lines a second to `emit`; reports the count of the others once each second they occur. */
function lineBudget(perSecond: number, emit: (stream: "stdout" | "stderr", line: string) => void, dropped: (n: number) => void) {
  let windowStart = 0;
  let used = 0;
  let over = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const report = (): void => {
    timer = undefined;
    if (over > 0) dropped(over);
    over = 0;
  };
  return (stream: "stdout" | "stderr", line: string): void => {
    // the monotonic clock: a wall clock stepped back would hold the window open (muting the log that long)
    const now = performance.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      used = 0;
    }
    if (used < perSecond) {
      used++;
      emit(stream, line);
      return;
    }
    over++;
    if (!timer) {
      timer = setTimeout(report, 1000 - (now - windowStart));
      (timer as { unref?: () => void }).unref?.();
    }
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
