/**
 * Ownership: claim (compare-and-set on version), release, and take-next (the oldest
 * unowned candidate, claimed in one transaction with an unowned guard).
 */
import { CardsError, isCardsError, unknownUser, versionConflict } from "../domain/errors.ts";
import { andFilters, parseFilter, resolveMe, type FilterNode } from "../domain/filters.ts";
import { ME } from "../domain/ids.ts";
import { assertActorName } from "../domain/text.ts";
import { assertColumn, assertStatusAllowed, assertTransition } from "../domain/transitions.ts";
import { allowedNext, isEnforced } from "../domain/moves.ts";
import type { Board, Card, CardEvent, CardType } from "../domain/types.ts";
import type { ListQuery, StoreReads } from "../store/port.ts";
import { BlockWatch } from "./blocking.ts";
import { LaneWatch } from "./lanes.ts";
import { boardFor, commitUpdate, loadForWrite, withParts } from "./cards.ts";
import { filterContextOf, userFieldPaths, verifyHeld, type HeldCheck } from "./list.ts";
import { scopeOf } from "./lanes.ts";
import { ClaimBody, ReleaseBody, TakeNextBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

/** take-next tries this many candidates in one call (SPEC Limits: 3 race retries). */
export const TAKE_NEXT_ATTEMPTS = 1 + 3;

/**
 * A move that claim or release was asked to make and the governing board refused:
 * `transition_rejected` when the board emits rejections, as PATCH does.
 */
async function rejected<T>(svc: Service, id: string, to: string | undefined, ctx: OpContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (to !== undefined && isCardsError(e) && e.code === "transition_illegal") {
      const card = svc.store.getCard(id);
      const board = card ? boardFor(svc, svc.cardType(card.type_id)) : undefined;
      if (card && board?.monitors?.emit_rejections) {
        await svc.signal(ctx, {
          type: "transition_rejected", card_id: id,
          diff: { board_id: board.id, before: card.status, after: to, valid_options: e.extra.valid_options ?? [] },
        });
      }
    }
    throw e;
  }
}

export async function claimCard(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const body = parseShape(ClaimBody, input, "claim");
  return rejected(svc, id, body.status, ctx, () => svc.mutate(ctx, (w) => {
    if (!w.tx.getUser(ctx.actor)) throw unknownUser("actor", ctx.actor);
    const cur = loadForWrite(w.tx, id, undefined);
    if (cur.owner && cur.owner !== ctx.actor) {
      // a retry can never win: say what can
      throw versionConflict(withParts(w.tx, cur), `card ${id} is owned by ${cur.owner}`,
        `${cur.owner} holds it: take another card, or take this one over by releasing it with force (CLI: cards cards release ${id} --force; HTTP and tools: force: true), then claim it`);
    }
    if (cur.version !== body.version) throw versionConflict(withParts(w.tx, cur));
    const type = svc.cardType(cur.type_id);
    const events: Array<Pick<CardEvent, "type" | "diff">> = [];
    const next: Card = { ...cur };
    if (cur.owner !== ctx.actor) {
      next.owner = ctx.actor;
      events.push({ type: "owner_changed", diff: { before: null, after: ctx.actor } });
    }
    if (body.status !== undefined) moveStatus(svc, w.now, type, cur, next, body.status, false, events, false);
    if (events.length === 0) return withParts(w.tx, cur);
    return withParts(w.tx, commitUpdate(w, cur, next, events, svc));
  }));
}

export async function releaseCard(svc: Service, id: string, input: unknown, ctx: OpContext): Promise<Card> {
  const body = parseShape(ReleaseBody, input, "release");
  const force = body.force === true;
  return rejected(svc, id, body.status, ctx, () => svc.mutate(ctx, (w) => {
    const cur = loadForWrite(w.tx, id, undefined);
    if (body.version !== undefined && cur.version !== body.version) throw versionConflict(withParts(w.tx, cur));
    if (cur.owner && cur.owner !== ctx.actor && !force) {
      throw versionConflict(withParts(w.tx, cur), `card ${id} is owned by ${cur.owner}`,
        `release it with force to take it away (CLI: --force; HTTP and tools: force: true)`);
    }
    const type = svc.cardType(cur.type_id);
    const events: Array<Pick<CardEvent, "type" | "diff">> = [];
    const next: Card = { ...cur, owner: undefined };
    if (cur.owner) events.push({ type: "owner_changed", diff: { before: cur.owner, after: null } });
    if (body.status !== undefined) moveStatus(svc, w.now, type, cur, next, body.status, force, events);
    if (events.length === 0) return withParts(w.tx, cur);
    return withParts(w.tx, commitUpdate(w, cur, next, events, svc));
  }));
}

/** Moves `next` to `status` when it differs (status checks 1-3), recording status_changed. */
function moveStatus(
  svc: Service, now: string, type: CardType, cur: Card, next: Card, requested: string, force: boolean,
  events: Array<Pick<CardEvent, "type" | "diff">>, canForce = true,
): void {
  const status = assertStatusAllowed(svc.defs.workspace, type, requested);
  if (status === cur.status) return;
  // claim takes no force: a forced move is a PATCH with force: true
  assertTransition(svc.defs.workspace, boardFor(svc, type), type, cur.status, status, force, canForce ? undefined : "claim without status, then change the status with force (CLI: patch --force; HTTP and tools: force: true) to skip the check");
  next.status = status;
  next.status_since = now;
  events.push({ type: "status_changed", diff: { before: cur.status, after: status } });
}

/**
 * take-next: candidates are unowned cards in scope (board_id, else type_id, else the
 * declared default board) matching `filter`, oldest first. The first that is still
 * unowned at the guarded UPDATE is claimed; `{card: null}` when none is left.
 */
export async function takeNext(svc: Service, input: unknown, ctx: OpContext): Promise<{ card: Card | null; hint?: string }> {
  const body = parseShape(TakeNextBody, input, "take-next");
  if (body.assign_to !== undefined) assertActorName(body.assign_to, "assign_to");
  if (body.filter !== undefined) {
    // values the filter names outside the known ones are looked up first (a server: on its
    // read thread); the scope is then built with them checked
    const held: HeldCheck[] = [];
    takeNextScope(svc, body, ctx.actor, held);
    await verifyHeld(svc, held);
  }
  const query = takeNextScope(svc, body, ctx.actor);
  // "me" names the caller, in writes as in filters (an owner literally "me" strands the card)
  const owner = body.assign_to === undefined || body.assign_to === ME ? ctx.actor : body.assign_to;
  const status = body.status;
  // A dry run answers with the card it would claim. A one-shot process reads it too before
  // it takes the write lock: the lock is then held without compiling those statements or
  // reading those pages, which is what racing CLI processes wait for (docs/decisions.md).
  if (body.dry_run) return whyNoneOutside(svc, body, ctx.actor, { card: await firstCandidate(svc, query) });
  // A caller's filter may cost seconds over many cards (docs/limits.md): its candidates are
  // read before the write lock, and under it only those cards are tested again, by id; the
  // full read under the lock is left for when racers took them all. (A server reads them on
  // its read thread, so its request thread goes on answering meanwhile.)
  const early = body.filter !== undefined ? await svc.store.readCandidates({ ...query, limit: TAKE_NEXT_ATTEMPTS }) : [];
  // none then: the answer a call made a moment earlier would get (a caller cannot tell it
  // from a lost race); with an Idempotency-Key it is recorded like any answer, without
  // reading the filter again under the write lock
  if (body.filter !== undefined && early.length === 0) {
    const none = await whyNoneOutside(svc, body, ctx.actor, { card: null });
    return ctx.idempotency ? svc.mutate(ctx, () => none) : none;
  }
  if (svc.mode === "embedded") {
    if (early[0]) svc.store.getCard(early[0].id, { links: true, comments: true });
    else if (body.filter === undefined) await firstCandidate(svc, query);
  }
  const taken = await svc.mutate(ctx, (w): { card: Card | null; hint?: string } => {
    const still = early.length ? w.tx.takeNextCandidates({ ...query, ids: early.map((c) => c.id), limit: TAKE_NEXT_ATTEMPTS }) : [];
    const candidates = still.length ? still : w.tx.takeNextCandidates({ ...query, limit: TAKE_NEXT_ATTEMPTS });
    for (const cand of candidates) {
      const blocks = status !== undefined && status !== cand.status ? new BlockWatch(w.tx).watchDependentsOf(cand.id) : undefined;
      const lanes = new LaneWatch(svc, w.tx).watch(new Set([cand.status, status ?? cand.status]), (status ?? cand.status) !== cand.status);
      // The candidates were read in this write transaction, so no other writer came between
      // and cand.status is the card's status until this write; the unowned guard still
      // decides, and a card it refuses passes to the next candidate.
      if (!w.tx.claimIfUnowned(cand.id, owner, w.now, status)) continue;
      w.emit({ type: "owner_changed", card_id: cand.id, diff: { before: null, after: owner } });
      if (status !== undefined && status !== cand.status) w.emit({ type: "status_changed", card_id: cand.id, diff: { before: cand.status, after: status } });
      blocks?.flush(w);
      lanes.flush(w);
      return { card: w.tx.getCard(cand.id, { links: true, comments: true }) };
    }
    // a recorded answer (Idempotency-Key) carries its hint, so a replay says the same
    return ctx.idempotency ? whyNone(w.tx, svc, body, ctx.actor, { card: null }) : { card: null };
  });
  return ctx.idempotency ? taken : whyNoneOutside(svc, body, ctx.actor, taken);
}

/** The hint reads the queue again: not for a filter of more conditions than this (docs/limits.md). */
const HINT_MAX_CONDITIONS = 8;

/**
 * `{card: null}` for a call with `status` while unowned cards match without it: a hint
 * says none may move there, or an agent reads a stuck queue as an empty one.
 */
function whyNone(reads: StoreReads, svc: Service, body: { status?: string } & Parameters<typeof takeNextScope>[1], actor: string, out: { card: Card | null }): { card: Card | null; hint?: string } {
  if (out.card !== null || body.status === undefined) return out;
  if (body.filter !== undefined && conditionCount(body.filter) > HINT_MAX_CONDITIONS) return out;
  const [stuck] = reads.takeNextCandidates({ ...takeNextScope(svc, { ...body, status: undefined }, actor), limit: 1 });
  return stuck ? { card: null, hint: stuckHint(body.status, stuck) } : out;
}

/** whyNone outside a transaction: its read may take the store's read thread (a server). */
async function whyNoneOutside(svc: Service, body: { status?: string } & Parameters<typeof takeNextScope>[1], actor: string, out: { card: Card | null }): Promise<{ card: Card | null; hint?: string }> {
  if (out.card !== null || body.status === undefined) return out;
  if (body.filter !== undefined && conditionCount(body.filter) > HINT_MAX_CONDITIONS) return out;
  const [stuck] = await svc.store.readCandidates({ ...takeNextScope(svc, { ...body, status: undefined }, actor), limit: 1 });
  return stuck ? { card: null, hint: stuckHint(body.status, stuck) } : out;
}

const stuckHint = (status: string, stuck: Pick<Card, "id" | "status">): string =>
  `unowned cards match, but none may move to ${status} (the oldest, ${stuck.id}, is in ${stuck.status}): take without status, or with a status they may move to`;

/** How many conditions a (parsed, so well-formed) filter object holds: paths and operators. */
function conditionCount(raw: unknown): number {
  if (Array.isArray(raw)) return raw.reduce((n: number, x) => n + conditionCount(x), 0);
  if (raw === null || typeof raw !== "object") return 0;
  let n = 0;
  for (const [k, v] of Object.entries(raw)) {
    if (k === "$and" || k === "$or") n += conditionCount(v);
    else n += v !== null && typeof v === "object" && !Array.isArray(v) ? Math.max(1, Object.keys(v).length) : 1;
  }
  return n;
}

/**
 * The oldest unowned card in scope with its links and comments, read outside any
 * transaction. Candidates read on a server's read thread are tested again here, by id,
 * right before the card is read: this process's writes may have claimed them meanwhile.
 */
async function firstCandidate(svc: Service, query: Omit<ListQuery, "sort" | "after">): Promise<Card | null> {
  const read = svc.store.readCandidates({ ...query, limit: TAKE_NEXT_ATTEMPTS });
  let cand: Pick<Card, "id" | "status"> | undefined;
  if (read instanceof Promise) {
    const early = await read;
    [cand] = early.length ? svc.store.takeNextCandidates({ ...query, ids: early.map((c) => c.id), limit: 1 }) : [];
    // all taken meanwhile: the queue as it is now
    if (!cand && early.length) [cand] = svc.store.takeNextCandidates({ ...query, limit: 1 });
  } else {
    [cand] = read;
  }
  return cand ? svc.store.getCard(cand.id, { links: true, comments: true }) : null;
}

/** `held`: collects the filter's values to look up (else they were: takeNext checks first). */
function takeNextScope(svc: Service, body: { filter?: Record<string, unknown>; status?: string; type_id?: string; board_id?: string }, actor: string, held: HeldCheck[] | "checked" = "checked"): Omit<ListQuery, "sort" | "after"> {
  const { workspace } = svc.defs;
  const filters: FilterNode[] = [];
  const query: Omit<ListQuery, "sort" | "after"> = { limit: TAKE_NEXT_ATTEMPTS };
  let board: Board | undefined;
  if (body.board_id !== undefined) {
    board = svc.board(body.board_id);
    filters.push(scopeOf(board, svc.defs));
  }
  if (body.type_id !== undefined) {
    const type = svc.cardType(body.type_id);
    query.typeIds = [type.id];
    board ??= boardFor(svc, type);
  } else if (body.board_id === undefined && workspace.settings.default_board) {
    board = svc.board(workspace.settings.default_board);
    filters.push(scopeOf(board, svc.defs));
  }
  if (body.filter !== undefined) {
    // the fields of the types in scope: the type asked for, else the board's (default board included)
    const scope = query.typeIds ?? board?.card_type_ids;
    filters.push(resolveMe(parseFilter(body.filter, filterContextOf(svc, scope, held, actor), "filter"), actor, userFieldPaths(svc, scope)));
  }
  if (body.status !== undefined) {
    assertColumn(workspace, body.status);
    // Only cards that may move to `status` are candidates: the type allows it, and the graph
    // that governs the card's type (the same one a PATCH or claim meets, whatever board
    // scopes the call) has the edge when it is enforced
    const to = body.status;
    const inScope = query.typeIds ?? board?.card_type_ids;
    const types = [...svc.defs.cardTypes.values()].filter((t) => (!inScope || inScope.includes(t.id)) && (!t.allowed_columns || t.allowed_columns.includes(to)));
    // one branch per governing board (few), not per type: the types it governs, from the
    // columns with an edge to `to`; types whose board enforces no graph in one branch
    const free: string[] = [];
    const byBoard = new Map<Board, string[]>();
    for (const t of types) {
      const governing = boardFor(svc, t);
      if (governing && isEnforced(workspace, governing) && governing.transitions) byBoard.set(governing, [...(byBoard.get(governing) ?? []), t.id]);
      else free.push(t.id);
    }
    const anyOf: FilterNode[] = free.length ? [parseFilter({ type_id: { $in: free } })] : [];
    for (const [governing, ids] of byBoard) {
      const from = governing.columns.filter((s) => s === to || allowedNext(governing, s).includes(to));
      anyOf.push(parseFilter({ type_id: { $in: ids }, status: { $in: from } }));
    }
    filters.push(anyOf.length === 1 ? anyOf[0]! : anyOf.length ? { kind: "or", nodes: anyOf } : parseFilter({ type_id: { $in: [] } }));
  }
  if (filters.length) query.filter = andFilters(...filters);
  return query;
}
