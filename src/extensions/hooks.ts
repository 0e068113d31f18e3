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
import { eventCardType, type CardTypeReads } from "../events/card-type.ts";
import { spawnSupervised, type SupervisedChild } from "../platform/spawn.ts";
import { describeExit, extensionCwd, extensionEnv, stderrNote } from "./env.ts";
import { consumedTypes, hookMatches, type MatchContext } from "./match.ts";
import { SUPERVISOR_VAR } from "../domain/extension-env.ts";
import { supervisorToken } from "./orphans.ts";

/** How long events wait for this server to load a set another process announced. */
const HOLD_MAX_MS = 3_000;

/** What hooks need from the service (the Service class satisfies it). */
export interface HookHost {
  readonly root: string;
  readonly defs: {
    /** names the loaded set (definition_reloaded carries the fingerprint of the set it announces) */
    readonly fingerprint: string;
    readonly extensions: readonly ExtensionDef[];
    readonly boards: ReadonlyMap<string, { readonly card_type_ids: readonly string[] }>;
  };
  readonly store: CardTypeReads & {
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
  /**
   * Shutdown, first step: stops taking events (another server on the workspace claims the
   * ones that come after) and resolves once the runs taken so far have finished.
   */
  quiesce(): Promise<void>;
  /** runs matched and being claimed, queued or running now */
  busy(): number;
  /** stops taking events, drops the queue, terminates running hooks (SIGTERM, SIGKILL after the grace) */
  stop(): Promise<void>;
  /** after a definitions reload: use the new hook list and re-declare the consumed event types */
  reconcile(): void;
  /** after this server followed another process's announcement of `fingerprint` (followReloads), whether it loaded that set or not */
  followed(fingerprint: string | undefined): void;
  /** the event types the declared hooks consume (a hook without `on`: every type) */
  consumers(): Set<string>;
}

interface Job { hook: ExtensionDef; event: CardEvent }
/** `claiming`: runs being claimed now, counted against the lane's room before they are won */
interface Lane { running: Set<SupervisedChild>; queue: Job[]; claiming: number }

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
  /** matched pairs in a claim not finished yet */
  let claimsInFlight = 0;
  let stopped = false;
  /** set by quiesce: no new event is taken; the runs taken go on */
  let quiescing = false;
  /** resolves quiesce once no run is claimed, queued or running */
  let idle: (() => void) | undefined;
  /** what quiesce answers (every call the same promise) */
  let quiet: Promise<void> | undefined;
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
      // a card's type never changes: once known, it is not read again
      const known = e.card_id ? typeCache.get(e.card_id) : undefined;
      return known ?? remember(e.card_id, eventCardType(host.store, e));
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

  /**
   * Another process announced a set this server has not loaded yet (definition_reloaded
   * with another fingerprint): the writes after it were made under that set, so they wait
   * for this server to follow (followReloads, then reconcile) and are matched against its
   * hooks. Else a hook added with the set missed the write that came next, and a removed
   * one ran once more. At most HOLD_MAX_MS: a set this server cannot load releases them.
   */
  let awaiting: string | undefined;
  let held: CardEvent[] = [];
  let holdTimer: ReturnType<typeof setTimeout> | undefined;
  /**
   * Ends the hold. The held events go through `onEvent` again: one of them may announce a
   * newer set (a second edit while this server loaded the first), and the events after it
   * are then held for that set. `final` (a shutdown): matched against the hooks loaded now.
   */
  const releaseHeld = (final = false): void => {
    const released = awaiting;
    awaiting = undefined;
    if (holdTimer) clearTimeout(holdTimer);
    holdTimer = undefined;
    const events = held;
    held = [];
    if (stopped) {
      // as events that arrive then: not taken (another server on the workspace may), and said
      if (events.length) opts.log(`hooks: shutting down, ${events.length} event(s) held for definitions another process announced not taken (${eventRange(events.map((event) => ({ event })))})`);
      return;
    }
    for (const e of events) {
      if (final || (e.type === "definition_reloaded" && announced(e) === released)) matchEvent(e);
      else onEvent(e);
    }
  };
  const announced = (e: CardEvent): unknown => (e.diff as { fingerprint?: unknown } | undefined)?.fingerprint;

  // The bus drops a listener that throws; this one never does.
  const onEvent = (event: CardEvent): void => {
    if (stopped || quiescing) return;
    // the set held for is loaded: release first, so that this event, when it announces a
    // newer set (published by the poll right after the swap, before reconcile), holds anew
    if (awaiting !== undefined && host.defs.fingerprint === awaiting) releaseHeld();
    if (event.type === "definition_reloaded") {
      const fp = announced(event);
      if (typeof fp === "string" && fp !== host.defs.fingerprint && awaiting === undefined) {
        awaiting = fp;
        holdTimer = setTimeout(() => {
          opts.log(`hooks: definitions ${fp.slice(0, 12)} announced by another process were not loaded within ${HOLD_MAX_MS} ms; ${held.length} event(s) matched against the hooks loaded now`);
          releaseHeld();
        }, HOLD_MAX_MS);
        (holdTimer as { unref?: () => void }).unref?.();
      }
    }
    if (awaiting !== undefined) {
      held.push(event);
      return;
    }
    matchEvent(event);
  };

  const matchEvent = (event: CardEvent): void => {
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

  const laneOf = (hookId: string): Lane => {
    let lane = lanes.get(hookId);
    if (!lane) lanes.set(hookId, (lane = { running: new Set(), queue: [], claiming: 0 }));
    return lane;
  };

  /**
   * One write claims the matched (hook, event) pairs of a burst; only claimed pairs run.
   * A pair is claimed only while its hook has room to run or queue it: a full hook leaves
   * the event to another server on the workspace (which claims it when its feed brings
   * it), instead of taking it from them and dropping it. Room is counted inside the
   * transaction, so a pair another server holds already takes none.
   */
  const claim = async (): Promise<void> => {
    const matched = pending;
    pending = [];
    claimScheduled = false;
    if (stopped || matched.length === 0) return;
    claimsInFlight += matched.length;
    try {
      await claimNow(matched);
    } finally {
      claimsInFlight -= matched.length;
      settle();
    }
  };

  const claimNow = async (matched: Job[]): Promise<void> => {
    const room = maxConcurrent + maxQueue;
    /** won in the transaction and not yet queued: they hold room meanwhile */
    let reserved: Job[] = [];
    const release = (): void => {
      for (const j of reserved) laneOf(j.hook.id).claiming--;
      reserved = [];
    };
    let outcome: Array<"won" | "lost" | "full" | "stopped">;
    try {
      const at = new Date().toISOString();
      outcome = await host.store.write((tx) => {
        release(); // a transaction run again starts over
        return matched.map((j) => {
          // stopped while this waited for the write lock (left unclaimed, for another
          // server), or the hook was removed by a reload meanwhile
          if (stopped || !current().some((h) => h.id === j.hook.id)) return "stopped";
          const lane = laneOf(j.hook.id);
          if (lane.running.size + lane.queue.length + lane.claiming >= room) return "full";
          if (!tx.claimOnce(onceKey(j), at)) return "lost";
          lane.claiming++;
          reserved.push(j);
          return "won";
        });
      });
    } catch (e) {
      release();
      for (const j of matched) opts.log(`${label(j)}: skipped, could not record the run: ${String(e)}`);
      return;
    }
    release();
    const taken = matched.filter((_, i) => outcome[i] === "won");
    const full = new Map<string, Job[]>();
    matched.forEach((j, i) => {
      if (outcome[i] !== "full") return;
      const left = full.get(j.hook.id);
      if (left) left.push(j);
      else full.set(j.hook.id, [j]);
    });
    for (const [hookId, left] of full) {
      opts.log(`hook ${hookId}: ${left.length} run(s) not taken (${eventRange(left)}): ${maxConcurrent} running and ${maxQueue} queued here; another server on this workspace may run them`);
    }
    if (stopped) {
      // claimed while the server stopped: recorded as run, so say which never ran
      if (taken.length) opts.log(`hooks: shutting down, ${taken.length} claimed hook run(s) dropped (${eventRange(taken)})`);
    } else {
      for (const j of taken) enqueue(j);
    }
  };

  const enqueue = (j: Job): void => {
    const lane = laneOf(j.hook.id);
    if (lane.running.size < maxConcurrent) void runJob(j, lane);
    else lane.queue.push(j);
  };

  /** resolves a quiesce once nothing is claimed, queued or running */
  const settle = (): void => {
    if (!idle || pending.length > 0 || claimScheduled || claimsInFlight > 0) return;
    for (const lane of lanes.values()) if (lane.running.size || lane.queue.length) return;
    idle();
    idle = undefined;
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
    settle();
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
      // a reload happened: the events held for the set it loaded are matched against it (a
      // hold for a newer set, announced meanwhile, goes on)
      queueMicrotask(() => { if (awaiting !== undefined && awaiting === host.defs.fingerprint) releaseHeld(); });
      // the queued runs of a hook the reload removed do not run (those running finish)
      const declared = new Set(current().map((h) => h.id));
      for (const [id, lane] of lanes) {
        if (declared.has(id) || lane.queue.length === 0) continue;
        opts.log(`hook ${id}: removed by a reload, ${lane.queue.length} queued run(s) dropped (${eventRange(lane.queue)})`);
        lane.queue = [];
      }
      settle();
      // not inside a publish loop: a listener added while the bus iterates would see that event again
      queueMicrotask(resubscribe);
    },
    consumers: () => consumedTypes(current()),
    busy() {
      let n = pending.length + claimsInFlight + held.length;
      for (const lane of lanes.values()) n += lane.running.size + lane.queue.length;
      return n;
    },
    followed(fingerprint) {
      // this server followed the announcement of `fingerprint`, and loaded it, found the
      // files unchanged, or was refused them: what was held for it is matched now, not after
      // HOLD_MAX_MS (a hold for another set, announced meanwhile, goes on)
      queueMicrotask(() => { if (awaiting !== undefined && awaiting === fingerprint) releaseHeld(); });
    },
    quiesce() {
      if (quiet) return quiet;
      unsubscribe?.();
      unsubscribe = undefined;
      // events held for an announced set were taken: writes answered before the shutdown
      // (matched now against the hooks loaded, and claimed like the others)
      releaseHeld(true);
      quiescing = true;
      quiet = new Promise<void>((resolve) => { idle = resolve; });
      settle();
      return quiet;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe?.();
      unsubscribe = undefined;
      releaseHeld();
      // matched, not claimed: another server may still claim them
      pending = [];
      const dropped: Job[] = [];
      const running: SupervisedChild[] = [];
      for (const lane of lanes.values()) {
        dropped.push(...lane.queue);
        lane.queue = [];
        running.push(...lane.running);
      }
      if (dropped.length) opts.log(`hooks: shutting down, ${dropped.length} queued hook run(s) dropped (${eventRange(dropped)})`);
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

/** Which events, for a log line: the first and last ids (signals have none), and how many. */
function eventRange(jobs: ReadonlyArray<{ event: CardEvent }>): string {
  const ids = jobs.map((j) => j.event.id).filter((id): id is string => id !== undefined).sort();
  const signals = jobs.length - ids.length;
  const parts: string[] = [];
  if (ids.length) parts.push(ids.length === 1 ? `event ${ids[0]}` : `events ${ids[0]} to ${ids.at(-1)}`);
  if (signals) parts.push(`${signals} condition signal(s)`);
  return parts.join(", ");
}
