/**
 * Later pages of a search (`q` with a cursor): the page keeps the order of the first page
 * while matching cards change, and the cards changed since the first page are found from
 * the events since it, never by pairing every search hit with every one of those events
 * (at 100,000 cards that pairing made page 2 of a broad search take minutes).
 */
import { describe, expect, setSystemTime, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { createCard, listCards, patchCard, type Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { SEARCH_SCHEMA_NAME } from "../../src/store/sqlite/search-names.ts";

const ada = { actor: "ada" } as never;

/** Every SQL text the store prepares while `fn` runs (bun:sqlite's statement cache is keyed by it). */
async function statementsDuring(fn: () => unknown): Promise<string[]> {
  const seen: string[] = [];
  const proto = Database.prototype as unknown as { query(sql: string): unknown };
  const original = proto.query;
  proto.query = function (this: unknown, sql: string) {
    seen.push(sql);
    return original.call(this, sql);
  };
  try {
    await fn();
  } finally {
    proto.query = original;
  }
  return seen;
}

async function seed(svc: Service, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await createCard(svc, { type_id: "task", title: `walrus ${i}` }, ada)).id);
  return ids;
}

describe("page 2 of a search", () => {
  test("visits every matching card once while cards on both pages change between pages", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    try {
      const ids = await seed(svc, 30);
      await createCard(svc, { type_id: "task", title: "unrelated" }, ada);
      const first = await listCards(svc, { q: "walrus", limit: "10" }, "ada");
      expect(first.items).toHaveLength(10);
      // touch a card already shown and cards not yet shown: each moves to the top by updated_at
      for (const id of [first.items[3]!.id, ids[2]!, ids[7]!]) {
        const card = first.items.find((c) => c.id === id) ?? (await listCards(svc, { q: id }, "ada")).items[0]!;
        await patchCard(svc, id, { version: card.version, title: `walrus touched ${id}` }, ada);
      }
      const seen = first.items.map((c) => c.id);
      let cursor = first.next_cursor;
      while (cursor) {
        const page = await listCards(svc, { q: "walrus", limit: "10", cursor }, "ada");
        seen.push(...page.items.map((c) => c.id));
        cursor = page.next_cursor;
      }
      expect(seen.length).toBe(30);
      expect(new Set(seen)).toEqual(new Set(ids));
    } finally {
      svc.close();
    }
  });

  test("the changed cards drive the read: search hits are never looked up by rowid for each changed card", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    try {
      const ids = await seed(svc, 12);
      const first = await listCards(svc, { q: "walrus", limit: "5" }, "ada");
      for (const id of ids.slice(0, 6)) await patchCard(svc, id, { version: 1, title: `walrus again ${id}` }, ada);
      const statements = await statementsDuring(() => listCards(svc, { q: "walrus", limit: "5", cursor: first.next_cursor }, "ada"));
      const searches = statements.filter((sql) => sql.includes("cards_fts MATCH") && sql.includes("events"));
      expect(searches.length).toBeGreaterThan(0);
      const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
      try {
        db.exec(`ATTACH DATABASE '${join(dir, ".cards", "search.db")}' AS ${SEARCH_SCHEMA_NAME}`);
        for (const sql of searches) {
          const plan = (db.query(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join("; ");
          // `(id=? AND rowid=?)`: each changed card probed once per search hit (hits x changes)
          expect(plan).not.toContain("(id=? AND rowid=?)");
        }
      } finally {
        db.close();
      }
    } finally {
      svc.close();
    }
  });
});

/** The ids of `first` and of every page after it, two at a time. */
async function everyPage(svc: Service, first: { items: Array<{ id: string }>; next_cursor?: string }): Promise<string[]> {
  const seen = first.items.map((c) => c.id);
  let cursor = first.next_cursor;
  while (cursor) {
    const page = await listCards(svc, { limit: "2", cursor }, "ada");
    seen.push(...page.items.map((c) => c.id));
    cursor = page.next_cursor;
  }
  return seen;
}

describe("pages after the wall clock stepped back", () => {
  test("a card written again between pages is placed by its newest event, not its latest time: none is skipped (before: placed by a time from before the step)", async () => {
    const svc = await openTestService(makeWorkspace(), "embedded");
    const t0 = Date.now();
    try {
      setSystemTime(t0);
      const x = await createCard(svc, { type_id: "task", title: "x" }, ada);
      setSystemTime(t0 - 3_600_000); // NTP steps the clock back an hour
      const patched = await patchCard(svc, x.id, { version: 1, title: "x again" }, ada);
      const ys: string[] = [];
      for (let i = 1; i <= 3; i++) {
        setSystemTime(t0 - 3_600_000 + i * 10);
        ys.push((await createCard(svc, { type_id: "task", title: `y${i}` }, ada)).id);
      }
      const all = (await listCards(svc, {}, "ada")).items.map((c) => c.id);
      const first = await listCards(svc, { limit: "2" }, "ada");
      await patchCard(svc, x.id, { version: patched.version, title: "x once more" }, ada);
      const seen = await everyPage(svc, first);
      expect(seen).toEqual(all);
      expect(new Set(seen)).toEqual(new Set([x.id, ...ys]));
    } finally {
      setSystemTime();
      svc.close();
    }
  });
});

describe("pages while a card is written between them", () => {
  test("a card whose write was the last before the first page, written again, is placed by that write: it is not listed twice", async () => {
    const svc = await openTestService(makeWorkspace(), "embedded");
    const t0 = Date.now();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        setSystemTime(t0 + i * 10);
        ids.push((await createCard(svc, { type_id: "task", title: `c${i}` }, ada)).id);
      }
      setSystemTime(t0 + 100);
      const moved = await patchCard(svc, ids[1]!, { version: 1, title: "c1 again" }, ada); // the newest event when the first page is read
      const all = (await listCards(svc, {}, "ada")).items.map((c) => c.id);
      expect(all).toEqual([ids[1]!, ids[3]!, ids[2]!, ids[0]!]);
      const first = await listCards(svc, { limit: "2" }, "ada");
      setSystemTime(t0 + 200);
      await patchCard(svc, ids[1]!, { version: moved.version, title: "c1 once more" }, ada);
      const seen = await everyPage(svc, first);
      expect(seen).toEqual(all);
    } finally {
      setSystemTime();
      svc.close();
    }
  });
});
