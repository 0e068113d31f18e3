/**
 * Definitions on a running server: POST /workspace/reload swaps in re-read definitions
 * without touching cards; POST /boards writes a board file and reloads, restoring the
 * file when the reload rejects it. On failure the prior definitions stay live and every
 * problem is reported (422 invalid_definitions, definition_reload_failed).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { CardsError, isCardsError } from "../domain/errors.ts";
import { nowIso } from "../domain/card.ts";
import { doneColumn } from "../domain/transitions.ts";
import type { Board, CardEvent, Definitions } from "../domain/types.ts";
import { definitionsFingerprint } from "../definitions/read.ts";
import { affectedBoards } from "../definitions/diff.ts";
import { DEFINITIONS_FAILED_KEY, DEFINITIONS_SYNCED_KEY, reloadedMarker, reloadedTo } from "../definitions/cache.ts";
import { hash128 } from "../domain/hash.ts";
import { MAX_ID_LENGTH } from "../domain/ids.ts";
import { assertSchemaFloor, recordLoadedSet } from "./schema-floor.ts";
import type { OpContext, Service } from "./service.ts";
import { registerUsersIn, searchConfig } from "./workspace.ts";
import { laneCrossings } from "./lanes.ts";
import { parseShape, ReloadBody } from "./shapes.ts";

let queue: Promise<unknown> = Promise.resolve();
/** Reloads run one at a time. */
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

export interface ReloadResult {
  fingerprint: string;
  changed: boolean;
  boards: string[];
}

/** Callbacks run after each successful reload (extensions reconcile, tool lists refresh). */
const afterReload = new WeakMap<Service, Set<(defs: Definitions) => void>>();

export function onReload(svc: Service, fn: (defs: Definitions) => void): () => void {
  let set = afterReload.get(svc);
  if (!set) afterReload.set(svc, (set = new Set()));
  set.add(fn);
  return () => { set!.delete(fn); };
}

/** POST /workspace/reload: the body, if any, is an empty object (an option it does not take is refused, not ignored). */
export function reloadRequested(svc: Service, body: unknown, ctx: OpContext): Promise<ReloadResult> {
  parseShape(ReloadBody, body, "reload");
  return reloadDefinitions(svc, ctx);
}

/**
 * `announce: false` for a process following another's reload: the set was announced
 * already, and a second announcement would reach every stream twice.
 */
/**
 * `announce: false` with `following`: a process following another's announcement of that
 * set; it announces only a newer set it finds on disk (files edited again meanwhile).
 */
export function reloadDefinitions(svc: Service, ctx: OpContext, opts: { announce?: boolean; following?: string } = {}): Promise<ReloadResult> {
  return serial(() => answerOnce(svc, ctx, () => reloadNow(svc, ctx, opts.announce !== false, opts.following)));
}

/**
 * Idempotency-Key for the writes that are files and a swap, not one transaction: a
 * replay answers what the first call did; the answer is stored once the work is done
 * (a crash in between leaves the key unused, and a retry does the work again, which for
 * a reload or the same board file changes nothing more).
 */
async function answerOnce<T>(svc: Service, ctx: OpContext, work: () => Promise<T>): Promise<T> {
  const prior = svc.priorAnswer<T>(ctx);
  if (prior !== undefined) return prior;
  const answer = await work();
  return ctx.idempotency ? svc.mutate(ctx, () => answer) : answer;
}

async function reloadNow(svc: Service, ctx: OpContext, announceIt = true, following?: string): Promise<ReloadResult> {
  const root = svc.origin;
  const old = root.defs;
  let next: Definitions;
  try {
    // NOTE: loaded on demand: the loader pulls in every schema and the YAML parser (cold-path cost)
    const { loadDefinitions } = await import("../definitions/load.ts");
    next = await loadDefinitions(root.root);
    assertSchemaFloor(root.store, next, old);
  } catch (e) {
    if (isCardsError(e) && e.code === "invalid_definitions") await announceFailure(root, ctx, [...old.boards.keys()], e);
    throw e;
  }
  if (next.fingerprint === old.fingerprint) {
    await forgetRefusedSet(root);
    return { fingerprint: next.fingerprint, changed: false, boards: [] };
  }
  const boards = affectedBoards(old, next);
  // swap while no write is in flight: a write sees all old or all new definitions; the
  // database no longer follows a known set until an open checks it again (a new token, so
  // an open that checked before this reload cannot record its set over it)
  let first = true;
  await root.store.write((tx) => {
    root.defs = next;
    // another process (a server, `cards mcp`, a one-shot call that opened the new files)
    // loaded and announced this set already
    first = !reloadedTo(tx.getMeta(DEFINITIONS_SYNCED_KEY) ?? undefined, next.fingerprint);
    tx.setMeta(DEFINITIONS_SYNCED_KEY, reloadedMarker(next.fingerprint));
    tx.deleteMeta(DEFINITIONS_FAILED_KEY);
    // users newly declared in workspace.json are registered with the swap (as at load)
    registerUsersIn(tx, next.workspace.users ?? []);
    recordLoadedSet(tx, next);
    // lanes the new limits or scopes put over or under their recorded state: whichever
    // process swaps first signals them; the servers that follow find them recorded
    const at = nowIso();
    const persisted = next.workspace.settings.persist_conditions ?? [];
    for (const c of laneCrossings(old, next, tx)) {
      const event = { ...c, actor: ctx.actor, at } as CardEvent;
      if (persisted.includes(c.type)) tx.appendEvent(event);
      else tx.appendSignal(event);
    }
  });
  root.pollFeed();
  await root.store.reconfigure({ workspaceId: next.workspace.id, doneStatus: doneColumn(next.workspace), search: searchConfig(next) });
  // a follower announces a set newer than the one it was told of: no one else may have
  if (first && (announceIt || (following !== undefined && following !== next.fingerprint))) await announce(root, ctx, boards, (board_id) => ({ type: "definition_reloaded", board_id, diff: { fingerprint: next.fingerprint } }));
  for (const fn of afterReload.get(root) ?? []) {
    try { fn(next); } catch { /* a listener's failure never undoes the reload */ }
  }
  return { fingerprint: next.fingerprint, changed: true, boards };
}

/**
 * One signal per affected board. A reload that changes no board (a card type on no board,
 * the extensions, a view) is announced once, without board_id: other processes follow
 * every new set (followReloads), whatever it changed.
 */
async function announce(
  svc: Service, ctx: OpContext, boards: string[], make: (board: string) => { type: CardEvent["type"]; board_id: string; diff: Record<string, unknown> },
  once?: { key: string; value: string },
): Promise<void> {
  const at = nowIso();
  await svc.store.write((tx) => {
    if (once) {
      if (tx.getMeta(once.key) === once.value) return;
      tx.setMeta(once.key, once.value);
    }
    for (const b of boards) tx.appendSignal({ ...make(b), actor: ctx.actor, at, scope: "board" } as CardEvent);
    if (boards.length === 0) {
      const { board_id: _none, ...rest } = make("");
      tx.appendSignal({ ...rest, actor: ctx.actor, at, scope: "board" } as CardEvent);
    }
  });
  svc.pollFeed();
}

/**
 * A set loads (or the live one is on disk again): the next refused set is announced, even
 * one refused before. Best effort: a reload never fails for it (a busy or read-only database).
 */
export async function forgetRefusedSet(svc: Service): Promise<void> {
  try {
    if (svc.store.readMeta(DEFINITIONS_FAILED_KEY) === undefined) return;
    await svc.store.write((tx) => tx.deleteMeta(DEFINITIONS_FAILED_KEY));
  } catch {
    // the next load that can write clears it
  }
}

function announceFailure(svc: Service, ctx: OpContext, boards: string[], e: CardsError): Promise<void> {
  const problems = e.extra.problems ?? [];
  return announce(svc, ctx, boards, (board_id) => ({ type: "definition_reload_failed", board_id, diff: { problems } }),
    { key: DEFINITIONS_FAILED_KEY, value: hash128(JSON.stringify(problems)) });
}

const BoardFile = v.looseObject({ id: v.pipe(v.string(), v.maxLength(MAX_ID_LENGTH), v.regex(/^[a-z0-9][a-z0-9_-]*$/i, "board ids are ASCII letters, digits, - and _")) });

/** POST /boards: writes definitions/boards/<id>.json, reloads, and restores the file if the reload fails. */
export function putBoard(svc: Service, input: unknown, ctx: OpContext): Promise<{ board: Board; created: boolean }> {
  return serial(() => answerOnce(svc, ctx, async () => {
    const parsed = v.safeParse(BoardFile, input);
    if (!parsed.success) {
      throw new CardsError("validation_failed", `a board definition needs an id of letters, digits, - and _, at most ${MAX_ID_LENGTH} characters`, { field: "id", value: (input as { id?: unknown })?.id });
    }
    const id = parsed.output.id;
    const dir = join(svc.root, "definitions", "boards");
    const file = join(dir, `${id}.json`);
    const text = `${JSON.stringify(input, null, 2)}\n`;
    // checked with the new file in memory first: a board the load would refuse never
    // lands in definitions/, where other processes (and a restart) would meet it
    await checkWithBoard(svc, ctx, `definitions/boards/${id}.json`, text);
    const before = existsSync(file) ? readFileSync(file, "utf8") : undefined;
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
    try {
      await reloadNow(svc, ctx);
    } catch (e) {
      if (before === undefined) unlinkSync(file);
      else writeFileSync(file, before);
      throw e;
    }
    return { board: svc.origin.defs.boards.get(id)!, created: before === undefined };
  }));
}

/** Loads today's definition files with `rel` replaced by `text`; refuses (and announces) as a failed reload would. */
async function checkWithBoard(svc: Service, ctx: OpContext, rel: string, text: string): Promise<void> {
  const root = svc.origin;
  try {
    const { readDefinitionFiles, parseDefinitions, definitionsError } = await import("../definitions/load.ts");
    const { files, problems } = await readDefinitionFiles(root.root);
    if (problems.length > 0) throw definitionsError(problems);
    files.set(rel, text);
    assertSchemaFloor(root.store, parseDefinitions(files), root.defs);
  } catch (e) {
    if (isCardsError(e) && e.code === "invalid_definitions") await announceFailure(root, ctx, [...root.defs.boards.keys()], e);
    throw e;
  }
}

/**
 * A server follows the reloads of the other processes on its workspace (`cards mcp`,
 * another server, `--watch` elsewhere): when one announces `definition_reloaded`, this
 * one reloads too, so it never relays an announcement about definitions it does not
 * serve, and every surface validates against one set. Its own announcements find the
 * files unchanged (a no-op). Returns a stop function.
 */
export function followReloads(svc: Service, log: (msg: string) => void, info: (msg: string) => void = log, followed: (fingerprint: string | undefined) => void = () => {}): () => void {
  let pending = false;
  // the bus hands every listener every event: `types` only declares what this one consumes
  return svc.subscribe((e) => {
    if (e.type !== "definition_reloaded" || pending) return; // one reload for the per-board announcements of one reload
    if ((e.diff as { fingerprint?: unknown }).fingerprint === svc.origin.defs.fingerprint) return; // already this set
    pending = true;
    setTimeout(() => {
      pending = false;
      const following = (e.diff as { fingerprint?: string }).fingerprint;
      reloadDefinitions(svc, { actor: "cards" }, { announce: false, following })
        .then((r) => { if (r.changed) info(`definitions reloaded, as another process announced (${r.boards.length ? `boards ${r.boards.join(", ")}` : "no board affected"})`); })
        .catch((e) => log(`definitions not reloaded after another process reloaded them: ${(e as Error).message}`))
        // loaded, found unchanged (the files went back) or refused: nothing more to wait for
        .finally(() => followed(following));
    }, 0);
  }, { types: ["definition_reloaded"] });
}

/**
 * `cards serve --watch`: polls the definitions' content fingerprint and reloads on change
 * through the same path as POST /workspace/reload. Returns a stop function.
 */
export function watchDefinitions(svc: Service, log: (msg: string) => void, intervalMs = 1000, logRefusals = true): () => void {
  let busy = false;
  let lastFailed: string | undefined;
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const fp = await definitionsFingerprint(svc.root);
      if (fp === svc.origin.defs.fingerprint && lastFailed !== undefined) {
        // the refused edit was undone: the last line said the files and the live set differ
        lastFailed = undefined;
        log("definitions on disk match the live set again");
        await forgetRefusedSet(svc.origin);
        return;
      }
      if (fp === svc.origin.defs.fingerprint || fp === lastFailed) return;
      const r = await reloadDefinitions(svc, { actor: "cards" });
      lastFailed = undefined;
      if (r.changed) log(`definitions reloaded (${r.boards.length ? `boards ${r.boards.join(", ")}` : "no board affected"})`);
    } catch (e) {
      if (isCardsError(e) && e.code === "invalid_definitions") {
        lastFailed = await definitionsFingerprint(svc.root).catch(() => undefined);
        // (a server logs every refusal from its announcement, whoever tried the set)
        if (logRefusals) log(`definitions not reloaded, the previous ones stay live: ${e.message}`);
      } else {
        log(`definitions watch: ${(e as Error).message}`);
      }
    } finally {
      busy = false;
    }
  }, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
