/**
 * `cards serve` lifecycle: open the workspace, listen, log `listening on URL` to stderr,
 * and shut down cleanly on SIGINT/SIGTERM/SIGHUP (stop accepting, stop extensions, close,
 * checkpoint, exit 0).
 */
import { createConsola } from "consola";
import { CardsError } from "../domain/errors.ts";
import { openService } from "../platform/open.ts";
import { startServer } from "../platform/serve.ts";
import { TemporalMonitor, followReloads, onReload, watchDefinitions, type Service } from "../service/index.ts";
import { startHooks, type Hooks } from "../extensions/hooks.ts";
import { startServices } from "../extensions/services.ts";
import { markSupervisor, stopOrphans } from "../extensions/orphans.ts";
import { pruneRequestDirs, watchServiceRequests } from "../extensions/control.ts";
import { createHttpApp, parsePublicUrl, serverTrouble, toResponse } from "./app.ts";
import { errorResponse } from "../api/dispatch.ts";
import { setInternalErrorLog } from "../api/internal-log.ts";
import { closeAllStreams, setMaxStreams, SSE_MAX_STREAMS } from "./sse.ts";

export interface ServeOptions {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  host: string;
  port: number;
  watch: boolean;
  /** --public-url / CARDS_PUBLIC_URL: the address through a reverse proxy */
  publicUrl?: string;
  /** --access-log / CARDS_ACCESS_LOG=1: one log line per answer */
  accessLog?: boolean;
}

/** How long in-flight requests may take to finish after SIGTERM/SIGINT. */
export const SHUTDOWN_GRACE_MS = 10_000;

export async function startService(o: ServeOptions): Promise<void> {
  // NOTE stack.md §9: consola writes info to stdout unless told otherwise.
  // badges and blank lines around warnings for a person at a terminal; a log file or a
  // pipe gets one `[level] message` line per entry, to read and grep line by line
  // (an object, not a literal: TypeScript resolves consola's browser types, which lack `fancy`)
  const logOptions = { stdout: process.stderr, stderr: process.stderr, fancy: process.stderr.isTTY === true };
  const log = createConsola(logOptions);
  // an error no rule expected: one `[error] internal error in METHOD PATH: ...` line (its stack with CARDS_DEBUG=1)
  setInternalErrorLog((line) => log.error(line), o.env.CARDS_DEBUG === "1");
  const idleTimeoutS = idleTimeout(o.env); // a bad value is a usage error before anything starts
  const publicOrigin = o.publicUrl === undefined ? undefined : parsePublicUrl(o.publicUrl).origin;
  setMaxStreams(streamLimit(o.env));
  const svc = await openService({ dir: o.dir, cwd: o.cwd, env: o.env, mode: "serve" });
  const loopbackOnly = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/.test(o.host);
  const trouble = serverTrouble((m) => log.error(m));
  const app = createHttpApp(svc, {
    trouble, loopbackOnly, ...(publicOrigin ? { publicOrigin } : {}), ...(o.accessLog ? { access: (line: string) => log.info(line) } : {}),
  });
  const monitor = new TemporalMonitor(svc);
  monitor.start();
  const unwatchFiles = o.watch ? watchDefinitions(svc, (m) => log.info(m), 1000, false) : () => {};
  const unlogRefusals = logRefusedSets(svc, (m) => log.warn(m));
  const unfollow = followReloads(svc, (m) => log.warn(m), (m) => log.info(m), (fp) => hooks?.followed(fp));
  const unwatch = () => { unwatchFiles(); unfollow(); unlogRefusals(); };
  /** asynchronous stops run at shutdown (supervised extension services) */
  const stoppers: Array<() => Promise<void>> = [];
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  /** hook runs taken before the shutdown go on during the grace (set once hooks start) */
  let hooks: Hooks | undefined;
  let stopping = false;
  /** a second signal while stopping ends the grace at once */
  let cutGrace = (): void => {};
  const stop = async (signal: string) => {
    if (stopping) {
      cutGrace();
      return;
    }
    stopping = true;
    log.info(`${signal}: shutting down`);
    monitor.stop();
    unwatch();
    const graceEnds = performance.now() + SHUTDOWN_GRACE_MS;
    const graceOver = new Promise<void>((r) => {
      cutGrace = r;
      setTimeout(r, SHUTDOWN_GRACE_MS);
    });
    if (server) {
      // stop accepting, end SSE streams, let in-flight requests finish (bounded), then cut the rest
      const closing = server.close(false).catch(() => {});
      closeAllStreams();
      await Promise.race([closing, graceOver]);
      await server.close(true).catch(() => {});
    }
    // the hooks of the writes answered so far are claimed by now: no new event is taken
    // (another server claims the later ones), and the runs taken finish within the grace
    // (what is left then is dropped, with a log line naming the events)
    if (hooks) {
      const done = hooks.quiesce();
      const busy = hooks.busy();
      const left = Math.max(0, Math.ceil((graceEnds - performance.now()) / 1000));
      if (busy) log.info(`waiting up to ${left} s for ${busy} hook run(s) taken before the shutdown; signal again to stop them now`);
      await Promise.race([done, graceOver]);
    }
    await Promise.all(stoppers.map((s) => s().catch(() => {})));
    trouble.flush(); // the 503s counted and not told yet
    svc.close(); // checkpoints the WAL
    process.exit(0);
  };
  // before anything starts: a signal that comes while services are being started must
  // not find the default action (which would end the server and leave them running).
  // SIGHUP is a closed terminal or a dropped ssh session: services run in their own
  // process groups, so the hangup never reaches them; they are stopped like on SIGTERM
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void stop(sig));
  try {
    server = await startServer(app, { host: o.host, port: o.port, idleTimeoutS, onError: (e) => toResponse(errorResponse(e)) });
  } catch (e) {
    monitor.stop();
    unwatch();
    svc.close();
    throw listenError(e, o.host, o.port);
  }
  if (stopping) return; // a signal came while the server started: stop() exits
  if (!/^(127\.|localhost|\[::1\])/.test(new URL(server.url).hostname) && !server.url.includes("[::1]")) {
    log.warn(`listening on a non-loopback address: the API has no authentication; anyone who can reach ${server.url} can change cards`);
  }
  // unmarked once hooks and services are stopped: a mark left behind says this server was killed
  const unmark = markSupervisor(svc.root);
  const hookRuns = startHooks(svc, { url: server.url, log: (m) => log.warn(m) });
  hooks = hookRuns;
  let services: ReturnType<typeof startServices> | undefined;
  const offReload = onReload(svc, () => { hookRuns.reconcile(); services?.reconcile(); });
  stoppers.push(async () => { offReload(); await Promise.all([hookRuns.stop(), services?.stop()]); unmark(); });
  console.error(`listening on ${server.url}`);
  if (publicOrigin) log.info(`reached as ${publicOrigin} through a reverse proxy (--public-url): the board is ${publicOrigin}/ui`);
  // what a server killed before this one (SIGKILL, out of memory) left running is stopped
  // before services start again: else each would run twice
  await stopOrphans(svc.root, (m) => log.warn(m)).catch((e) => log.warn(`stopping a killed server's extension processes: ${String(e)}`));
  if (stopping) return;
  services = startServices(svc, { url: server.url, log: (m) => log.info(m), warn: (m) => log.warn(m) });
  // `cards ext start|stop|restart` (control.ts)
  const started = services;
  try { pruneRequestDirs(svc.root); } catch { /* only housekeeping */ }
  const unwatchRequests = watchServiceRequests(svc.root, (req) => started.control(req), (m) => log.warn(m));
  // a server beside this one killed outright leaves its extension processes running (this
  // one runs its own copies): they are stopped without waiting for a server to start
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping || stopping) return;
    sweeping = true;
    stopOrphans(svc.root, (m) => log.warn(m)).catch(() => {}).finally(() => { sweeping = false; });
  }, ORPHAN_SWEEP_MS);
  stoppers.unshift(async () => { clearInterval(sweep); unwatchRequests(); });
}

/** How often a running server looks for what a killed server of its workspace left running. */
export const ORPHAN_SWEEP_MS = 10_000;

/** CARDS_IDLE_TIMEOUT_S (1-255 seconds) overrides the idle timeout (docs/limits.md). */
function idleTimeout(env: Record<string, string | undefined>): number | undefined {
  const raw = env.CARDS_IDLE_TIMEOUT_S;
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 255) {
    throw new CardsError("usage", "CARDS_IDLE_TIMEOUT_S must be a whole number of seconds from 1 to 255", { field: "CARDS_IDLE_TIMEOUT_S", value: raw });
  }
  return n;
}

/** CARDS_MAX_STREAMS (1-1,000,000) overrides how many event streams may be open at once (docs/limits.md). */
function streamLimit(env: Record<string, string | undefined>): number {
  const raw = env.CARDS_MAX_STREAMS;
  if (raw === undefined || raw === "") return SSE_MAX_STREAMS;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 1_000_000) {
    throw new CardsError("usage", "CARDS_MAX_STREAMS must be a whole number from 1 to 1000000", { field: "CARDS_MAX_STREAMS", value: raw });
  }
  return n;
}

/** A port in use or not allowed is the caller's to fix: `unavailable` with a hint, not an internal error. */
function listenError(e: unknown, host: string, port: number): CardsError {
  const err = e as { code?: string; message?: string };
  const what = `${host}:${port}`;
  if (err.code === "EADDRINUSE" || /in use/i.test(err.message ?? "")) {
    return new CardsError("unavailable", `cannot listen on ${what}: the address is in use`, { hint: "pick another --port, or --port 0 for a free one" });
  }
  return new CardsError("unavailable", `cannot listen on ${what}: ${err.message ?? String(e)}`, { hint: "check --host and --port" });
}

/**
 * A refused set of definitions, whoever tried it (POST /workspace/reload, --watch, another
 * process opening the edited files), is logged once: the previous set stays live, and the
 * operator sees why the edit did not take. Announced once per board: logged once per set,
 * and again when it comes back after a set that loaded.
 */
function logRefusedSets(svc: { subscribe: Service["subscribe"] }, warn: (m: string) => void): () => void {
  let last = "";
  return svc.subscribe((e) => {
    // a set loaded in between: the same problems met again are news again
    if (e.type === "definition_reloaded") last = "";
    if (e.type !== "definition_reload_failed") return;
    const problems = ((e.diff as { problems?: unknown }).problems ?? []) as Array<{ file?: string; path?: string; message?: string }>;
    const key = JSON.stringify(problems);
    if (key === last) return;
    last = key;
    const first = problems[0];
    const where = first ? `${first.file ?? "?"}${first.path ? ` ${first.path}` : ""}: ${first.message ?? ""}` : "";
    warn(`definitions refused, the previous ones stay live: ${problems.length} problem(s)${where ? `; the first: ${where}` : ""} (cards check lists them all)`);
  }, { types: ["definition_reload_failed", "definition_reloaded"] });
}
