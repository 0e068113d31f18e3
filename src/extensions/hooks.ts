/**
 * Hook extensions: on each matching live event, spawn the hook's `run` (no shell) with the
 * event JSON on stdin. Asynchronous and at most once: the write has committed before a
 * hook sees it; a once-key in the database makes sure one server runs each (hook, event)
 * pair even when several serve the workspace. Failures, crashes and hangs (terminated at
 * `timeoutMs`, killed if still alive after the grace) are logged, never thrown. Each hook
 * runs at most `maxConcurrent` processes at a time; up to `maxQueue` more wait, the rest
 * are dropped with a log line. Runs of one hook may finish out of order.
 */
import type { CardEvent, ExtensionDef } from "../domain/types.ts";
import { hash128 } from "../domain/hash.ts";
import { signalSeq } from "../events/signal-seq.ts";
import { spawnSupervised, type SupervisedChild } from "../platform/spawn.ts";
import { describeExit, extensionCwd, extensionEnv, stderrNote } from "./env.ts";
import { consumedTypes, hookMatches, type MatchContext } from "./match.ts";
import { SUPERVISOR_VAR, supervisorToken } from "./orphans.ts";

/** What hooks need from the service (the Service class satisfies it). */
export interface HookHost {
  readonly root: string;
  readonly defs: {
    readonly extensions: readonly ExtensionDef[];
    readonly boards: ReadonlyMap<string, { readonly card_type_ids: readonly string[] }>;
  };
  readonly store: {
    getCard(id: string): { type_id: string } | null;
    write<T>(fn: (tx: { claimOnce(key: string, at: string): boolean }) => T | Promise<T>): Promise<T>;
  };
  subscribe(fn: (e: CardEvent) => void, sub?: { types?: readonly string[] }): () => void;
}

export interface HookOptions {
  /** the server's URL, given to hooks as CARDS_URL */
  url?: string;
  /** one line per failure, drop or shutdown note */
  log: (msg: string) => void;
  /** a hook still running after this is terminated (default 30 s) */
  timeoutMs?: number;
  /** between SIGTERM and SIGKILL, on timeout and on stop (default 5 s) */
  killGraceMs?: number;
  /** processes per hook at once (default 8) */
  maxConcurrent?: number;
  /** runs per hook waiting for a slot before new ones are dropped (default 256) */
  maxQueue?: number;
  /** the base environment of hook processes (default process.env) */
  env?: Record<string, string | undefined>;
}

export interface Hooks {
  /** stops taking events, drops the queue, terminates running hooks (SIGTERM, SIGKILL after the grace) */
  stop(): Promise<void>;
  /** after a definitions reload: use the new hook list and re-declare the consumed event types */
  reconcile(): void;
  /** the event types the declared hooks consume (a hook without `on`: every type) */
  consumers(): Set<string>;
}

interface Job { hook: ExtensionDef; event: CardEvent }
interface Lane { running: Set<SupervisedChild>; queue: Job[] }

const TYPE_CACHE_MAX = 10_000;

/** Subscribes the declared hooks to the service's live events. */
export function startHooks(host: HookHost, opts: HookOptions): Hooks {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const graceMs = opts.killGraceMs ?? 5_000;
  const maxConcurrent = opts.maxConcurrent ?? 8;
  const maxQueue = opts.maxQueue ?? 256;
  const baseEnv = opts.env ?? (process.env as Record<string, string | undefined>);
  /** in every process started here: a server started after this one is killed stops them (orphans.ts) */
  const supervisor = supervisorToken(host.root);
  const lanes = new Map<string, Lane>();
  const typeCache = new Map<string, string>();
  let source: readonly ExtensionDef[] | undefined;
  let hooks: ExtensionDef[] = [];
  let pending: Job[] = [];
  let claimScheduled = false;
  let stopped = false;
  let unsubscribe: (() => void) | undefined;
  /** the consumed types declared with the subscription (re-declared by reconcile) */
  let subscribedTypes = "";

  const current = (): ExtensionDef[] => {
    if (host.defs.extensions !== source) {
      source = host.defs.extensions;
      hooks = source.filter((e) => e.kind === "hook");
    }
    return hooks;
  };

  const match: MatchContext = {
    cardType(e) {
      const fromDiff = (e.diff as { card?: { type_id?: unknown } }).card?.type_id;
      if (typeof fromDiff === "string") return remember(e.card_id, fromDiff);
      if (!e.card_id) return undefined;
      return typeCache.get(e.card_id) ?? remember(e.card_id, host.store.getCard(e.card_id)?.type_id);
    },
    boardTypes: (id) => host.defs.boards.get(id)?.card_type_ids,
  };
  const remember = (cardId: string | undefined, type: string | undefined): string | undefined => {
    if (cardId && type && !typeCache.has(cardId)) {
      if (typeCache.size >= TYPE_CACHE_MAX) typeCache.delete(typeCache.keys().next().value!);
      typeCache.set(cardId, type);
    }
    return type;
  };

  const label = (j: Job) => `hook ${j.hook.id}: event ${j.event.id ?? "(signal)"} ${j.event.type}`;

  // The bus drops a listener that throws; this one never does.
  const onEvent = (event: CardEvent): void => {
    if (stopped) return;
    try {
      for (const hook of current()) if (hookMatches(hook, event, match)) pending.push({ hook, event });
    } catch (e) {
      opts.log(`hooks: event ${event.id ?? "(signal)"} ${event.type}: matching failed: ${String(e)}`);
    }
    if (pending.length && !claimScheduled) {
      claimScheduled = true;
      queueMicrotask(() => void claim());
    }
  };

  /** One write claims every matched (hook, event) pair of a burst; only claimed pairs run. */
  const claim = async (): Promise<void> => {
    const jobs = pending;
    pending = [];
    claimScheduled = false;
    if (stopped || jobs.length === 0) return;
    let won: boolean[];
    try {
      const at = new Date().toISOString();
      won = await host.store.write((tx) => jobs.map((j) => tx.claimOnce(onceKey(j), at)));
    } catch (e) {
      for (const j of jobs) opts.log(`${label(j)}: skipped, could not record the run: ${String(e)}`);
      return;
    }
    jobs.forEach((j, i) => { if (won[i]) enqueue(j); });
  };

  const enqueue = (j: Job): void => {
    if (stopped) return;
    let lane = lanes.get(j.hook.id);
    if (!lane) lanes.set(j.hook.id, (lane = { running: new Set(), queue: [] }));
    if (lane.running.size < maxConcurrent) void runJob(j, lane);
    else if (lane.queue.length < maxQueue) lane.queue.push(j);
    else opts.log(`${label(j)}: dropped, ${maxConcurrent} running and ${maxQueue} queued`);
  };

  const runJob = async (j: Job, lane: Lane): Promise<void> => {
    const { hook, event } = j;
    const child = spawnSupervised({
      argv: hook.run,
      cwd: extensionCwd(host.root, hook),
      env: extensionEnv(baseEnv, hook, {
        CARDS_URL: opts.url ?? baseEnv.CARDS_URL ?? "",
        CARDS_WORKSPACE: host.root,
        CARDS_ACTOR: event.actor,
        CARDS_EVENT_ID: event.id ?? "",
        CARDS_EVENT_TYPE: event.type,
        [SUPERVISOR_VAR]: supervisor,
      }),
      input: `${JSON.stringify(event)}\n`,
      output: "tail",
    });
    lane.running.add(child);
    const timeout: { ending?: Promise<{ killed: boolean }> } = {};
    const timer = setTimeout(() => { timeout.ending = child.terminate(graceMs); }, timeoutMs);
    const status = await child.exited;
    clearTimeout(timer);
    lane.running.delete(child);
    const ok = status.code === 0 && !timeout.ending;
    if (!ok && stopped && status.signal) {
      opts.log(`${label(j)}: terminated at shutdown`);
    } else if (timeout.ending) {
      const { killed } = await timeout.ending;
      opts.log(`${label(j)}: timed out after ${timeoutMs} ms; ${killed ? `killed (SIGKILL) after ignoring SIGTERM for ${graceMs} ms` : `terminated (${status.signal ?? `exit code ${status.code}`})`}`);
    } else if (!ok) {
      opts.log(`${label(j)}: ${describeExit(status, hook.run[0]!)}${stderrNote(child.stderrTail())}`);
    }
    const next = lane.queue.shift();
    if (next && !stopped) void runJob(next, lane);
  };

  const resubscribe = (): void => {
    if (stopped) return;
    const types = [...consumedTypes(current())].sort();
    const key = types.join(",");
    if (unsubscribe && key === subscribedTypes) return;
    unsubscribe?.();
    unsubscribe = host.subscribe(onEvent, { types });
    subscribedTypes = key;
  };

  resubscribe();
  return {
    reconcile: () => {
      current();
      // not inside a publish loop: a listener added while the bus iterates would see that event again
      queueMicrotask(resubscribe);
    },
    consumers: () => consumedTypes(current()),
    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      unsubscribe = undefined;
      let dropped = pending.length;
      pending = [];
      const running: SupervisedChild[] = [];
      for (const lane of lanes.values()) {
        dropped += lane.queue.length;
        lane.queue = [];
        running.push(...lane.running);
      }
      if (dropped) opts.log(`hooks: shutting down, ${dropped} queued hook run(s) dropped`);
      await Promise.all(running.map((c) => c.terminate(graceMs)));
    },
  };
}

/**
 * The once-key of a (hook, event) pair: the event's id, or for a condition signal its
 * row in the shared signals table (every server publishes a signal rebuilt from that row,
 * or, in the writing process, the object it built: only the row number is the same).
 */
function onceKey(j: Job): string {
  if (j.event.id) return `hook:${j.hook.id}:${j.event.id}`;
  const seq = signalSeq(j.event);
  return `hook:${j.hook.id}:signal:${seq ?? hash128(JSON.stringify(j.event))}`;
}
