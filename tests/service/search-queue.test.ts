/**
 * Full-text writes are queued until the transaction commits (one FTS5 segment per group
 * commit instead of one per card). The queue must follow the transaction exactly: a
 * write rolled back inside a shared transaction leaves nothing in the index, and a
 * search inside a transaction sees what that transaction wrote before it.
 */
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createCard, listCards, type Service } from "../../src/service/index.ts";
import { newCardId } from "../../src/domain/ids.ts";
import type { Card } from "../../src/domain/types.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;

/** Runs `fn` against a server-mode service (group commit) on a fresh sample workspace. */
async function withServer(fn: (svc: Service, dir: string) => Promise<void>): Promise<void> {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    await fn(svc, dir);
  } finally {
    svc.close();
  }
}

function ftsRowids(dir: string, term: string): number[] {
  const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
  try {
    return (db.query("SELECT rowid FROM cards_fts WHERE cards_fts MATCH ?").all(term) as Array<{ rowid: number }>).map((r) => r.rowid);
  } finally {
    db.close();
  }
}

describe("queued full-text writes", () => {
  test("writes sharing one group commit are all searchable; a rolled-back one (a dry run) leaves no trace", () => withServer(async (svc, dir) => {
    // issued together, these run in one transaction, each in its own savepoint
    const [dry, bravo, charlie] = await Promise.all([
      createCard(svc, { type_id: "task", title: "alpha zebrafoo", dry_run: true }, ada),
      createCard(svc, { type_id: "task", title: "bravo quuxbar" }, ada),
      createCard(svc, { type_id: "task", title: "charlie quuxbar" }, ada),
    ]);
    expect(dry.title).toBe("alpha zebrafoo");
    const hits = await listCards(svc, { q: "quuxbar" }, "ada");
    expect(hits.items.map((c) => c.id).sort()).toEqual([bravo.id, charlie.id].sort());
    // the dry run's row was rolled back and its rowid reused: its words must not point at another card
    expect((await listCards(svc, { q: "zebrafoo" }, "ada")).items).toEqual([]);
    expect(ftsRowids(dir, "zebrafoo")).toEqual([]);
  }));

  test("a big write flushes the queue inside its savepoint; when it rolls back, the earlier write's queued words survive", () => withServer(async (svc, dir) => {
    const base = await createCard(svc, { type_id: "task", title: "template" }, ada);
    const copy = (title: string): Card => ({ ...base, id: newCardId(), title });
    // issued together: one transaction, the keeper's index write still queued when the big one starts
    const [keeper, big] = await Promise.allSettled([
      svc.store.write((tx) => { const c = copy("keeper yakish"); tx.insertCard(c); return c.id; }),
      svc.store.write((tx) => {
        for (let i = 0; i < 600; i++) tx.insertCard(copy(`doomed platypusy ${i}`)); // past the queue bound: applied inside the savepoint
        throw new Error("roll this write back");
      }),
    ]);
    expect(keeper.status).toBe("fulfilled");
    expect(big.status).toBe("rejected");
    expect(ftsRowids(dir, "yakish")).toHaveLength(1);
    expect(ftsRowids(dir, "platypusy")).toEqual([]);
    expect((await listCards(svc, { q: "yakish" }, "ada")).items.map((c) => c.id)).toEqual([(keeper as PromiseFulfilledResult<string>).value]);
  }));

  test("a search inside a write transaction sees the cards that transaction wrote before it", () => withServer(async (svc, dir) => {
    const base = await createCard(svc, { type_id: "task", title: "template" }, ada);
    const found = await svc.store.write((tx) => {
      const card: Card = { ...base, id: newCardId(), title: "inside wombatish" };
      tx.insertCard(card);
      return tx.listCards({ q: "wombatish", limit: 10 }).items.map((c) => c.id);
    });
    expect(found).toHaveLength(1);
    expect(ftsRowids(dir, "wombatish")).toHaveLength(1);
  }));

  test("a deleted card leaves the index in the same transaction as its row", () => withServer(async (svc, dir) => {
    const card = await createCard(svc, { type_id: "task", title: "ephemeral gnuish" }, ada);
    expect(ftsRowids(dir, "gnuish")).toHaveLength(1);
    await svc.store.write((tx) => tx.deleteCard(card.id));
    expect(ftsRowids(dir, "gnuish")).toEqual([]);
    expect((await listCards(svc, { q: "gnuish" }, "ada")).items).toEqual([]);
  }));
});
