/**
 * Property-based tests over the service layer (fast-check): random sequences of valid and
 * invalid operations keep every invariant: each write bumps the version by exactly one,
 * errors are always structured, owner and status agree with the event log, blocked-ness
 * matches the links, WIP counts match the cards, and take-next never double-assigns.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { isCardsError } from "../../src/domain/errors.ts";
import type { Card } from "../../src/domain/types.ts";
import {
  addComment, addLink, claimCard, createCard, deleteCard, patchCard, releaseCard, removeLink, takeNext, type Service,
} from "../../src/service/index.ts";
import { scopeOf } from "../../src/service/lanes.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const actors = ["ada", "agent-1", "agent-2", "ghost"];
const statuses = ["backlog", "todo", "doing", "review", "done", "nowhere"];
const op = fc.oneof(
  fc.record({ k: fc.constant("create"), type: fc.constantFrom("task", "bug", "review", "epic"), status: fc.option(fc.constantFrom(...statuses)), good: fc.boolean() }),
  fc.record({ k: fc.constant("patch"), i: fc.nat(), status: fc.option(fc.constantFrom(...statuses)), title: fc.option(fc.string({ maxLength: 5 })), owner: fc.option(fc.constantFrom(...actors, "")), stale: fc.boolean(), force: fc.boolean() }),
  fc.record({ k: fc.constant("claim"), i: fc.nat(), actor: fc.constantFrom(...actors), stale: fc.boolean() }),
  fc.record({ k: fc.constant("release"), i: fc.nat(), actor: fc.constantFrom(...actors), force: fc.boolean() }),
  fc.record({ k: fc.constant("take"), actor: fc.constantFrom(...actors), ready: fc.boolean(), status: fc.option(fc.constantFrom("doing", "todo")) }),
  fc.record({ k: fc.constant("link"), i: fc.nat(), j: fc.nat(), type: fc.constantFrom("depends-on", "blocked-by", "related", "nope") }),
  fc.record({ k: fc.constant("unlink"), i: fc.nat(), j: fc.nat(), type: fc.constantFrom("depends-on", "blocked-by") }),
  fc.record({ k: fc.constant("delete"), i: fc.nat(), stale: fc.boolean() }),
  fc.record({ k: fc.constant("comment"), i: fc.nat(), body: fc.string({ maxLength: 4 }) }),
);

async function apply(svc: Service, ids: string[], o: any, versions: Map<string, number>, taken: Map<string, string>): Promise<void> {
  const pick = (n: number) => ids[n % Math.max(ids.length, 1)] ?? "card_0000000000000000";
  const cur = (id: string) => svc.store.getCard(id);
  const seen = (c: Card | null | undefined) => {
    if (!c) return;
    const before = versions.get(c.id);
    if (before !== undefined) expect(c.version - before === 0 || c.version - before === 1).toBe(true);
    versions.set(c.id, c.version);
  };
  const ctx = (actor = "ada") => ({ actor });
  switch (o.k) {
    case "create": {
      const fields = o.type === "bug" && o.good ? { steps: "s" } : {};
      const c = await createCard(svc, { type_id: o.type, title: "t", ...(o.status ? { status: o.status } : {}), fields }, ctx());
      ids.push(c.id);
      expect(c.version).toBe(1);
      versions.set(c.id, 1);
      return;
    }
    case "patch": {
      const id = pick(o.i);
      const v = cur(id)?.version ?? 1;
      return seen(await patchCard(svc, id, {
        version: o.stale ? v + 1 : v, ...(o.status ? { status: o.status } : {}), ...(o.title !== null ? { title: o.title } : {}),
        ...(o.owner !== null ? { owner: o.owner } : {}), ...(o.force ? { force: true } : {}),
      }, ctx()));
    }
    case "claim": {
      const id = pick(o.i);
      const v = cur(id)?.version ?? 1;
      return seen(await claimCard(svc, id, { version: o.stale ? v + 3 : v }, ctx(o.actor)));
    }
    case "release":
      return seen(await releaseCard(svc, pick(o.i), o.force ? { force: true } : {}, ctx(o.actor)));
    case "take": {
      const { card } = await takeNext(svc, { ...(o.ready ? { filter: { blocked: false } } : {}), ...(o.status ? { status: o.status } : {}) }, ctx(o.actor));
      if (card) {
        expect(taken.has(card.id) && cur(card.id)?.owner !== undefined && taken.get(card.id) !== card.owner).toBe(false);
        taken.set(card.id, card.owner!);
        if (o.ready) expect(svc.store.openBlockers(card.id)).toEqual([]);
      }
      return seen(card);
    }
    case "link":
      return seen(await addLink(svc, pick(o.i), { type_id: o.type, target: pick(o.j) }, ctx()));
    case "unlink":
      return seen(await removeLink(svc, pick(o.i), o.type, pick(o.j), ctx()));
    case "delete": {
      const id = pick(o.i);
      await deleteCard(svc, id, o.stale ? 99 : undefined, ctx());
      versions.delete(id);
      return;
    }
    case "comment":
      return seen(await addComment(svc, pick(o.i), { body: o.body }, ctx()));
  }
}

function checkInvariants(svc: Service): void {
  const cards = [...svc.store.iterateCards()];
  const done = "done";
  for (const card of cards) {
    const events = svc.store.listEvents({ cardId: card.id, limit: 500 });
    expect(events[0]!.type).toBe("card_created");
    const lastOwner = events.filter((e) => e.type === "owner_changed").at(-1);
    expect(card.owner ?? null).toBe(lastOwner ? (lastOwner.diff as any).after : null);
    const lastStatus = events.filter((e) => e.type === "status_changed").at(-1);
    expect(card.status).toBe(lastStatus ? (lastStatus.diff as any).after : (events[0]!.diff as any).card.status);
    const blockers = svc.store.listLinks(card.id)
      .filter((l) => l.type_id === "depends-on" || l.type_id === "blocked-by")
      .map((l) => svc.store.getCard(l.target)).filter((t): t is Card => !!t && t.status !== done).map((t) => t.id);
    expect(svc.store.openBlockers(card.id)).toEqual([...new Set(blockers)].sort());
  }
  const blockedIds = svc.store.listCards({ blocked: true, limit: 1000 }).items.map((c) => c.id).sort();
  expect(blockedIds).toEqual(cards.filter((c) => svc.store.openBlockers(c.id).length > 0).map((c) => c.id).sort());
  const main = svc.defs.boards.get("main")!;
  for (const col of main.columns) {
    const expected = cards.filter((c) => c.status === col && main.card_type_ids.includes(c.type_id)).length;
    expect(svc.store.countInStatus(scopeOf(main, svc.defs), col, 1_000_000)).toBe(expected);
  }
}

test("random operation sequences keep every invariant", async () => {
  await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 40 }), async (ops) => {
    const svc = await openTestService(makeWorkspace(), "embedded");
    try {
      const ids: string[] = [];
      const versions = new Map<string, number>();
      const taken = new Map<string, string>();
      for (const o of ops) {
        try {
          await apply(svc, ids, o, versions, taken);
        } catch (e) {
          if (!isCardsError(e)) throw e; // every failure is a structured error
          expect(e.status).toBeLessThan(500);
        }
      }
      checkInvariants(svc);
    } finally {
      svc.close();
    }
  }), { numRuns: 40, seed: 7 });
}, 120_000);
