/**
 * A caller's filter may cost seconds over many cards (docs/limits.md). take-next reads
 * its candidates before the write lock and re-checks only those cards under it, so the
 * lock, which every other process's writes wait for, is not held while the filter runs.
 * Here another connection holds the write lock: what needs no lock must not wait for it.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createCard, takeNext } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const as = (actor: string) => ({ actor }) as never;

test("a filter that matches no card answers {card: null} without the write lock", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "embedded");
  const other = new Database(join(dir, ".cards", "cards.db"));
  try {
    await createCard(svc, { type_id: "task", title: "low one", fields: { priority: "low" } }, as("ada"));
    other.exec("BEGIN IMMEDIATE");
    const t0 = performance.now();
    const r = await takeNext(svc, { type_id: "task", filter: { "fields.priority": "urgent" } }, as("agent-1"));
    expect(r.card).toBeNull();
    // waiting for the lock would have taken the 5 s busy timeout and failed
    expect(performance.now() - t0).toBeLessThan(2000);
    other.exec("ROLLBACK");
    // with the lock free, a matching filter claims as before
    expect((await takeNext(svc, { type_id: "task", filter: { "fields.priority": "low" } }, as("agent-1"))).card?.owner).toBe("agent-1");
  } finally {
    other.close();
    svc.close();
  }
});

test("under the lock the early candidates are looked up by id, not by scanning the type", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "embedded");
  const seen: string[] = [];
  const proto = Database.prototype as unknown as { query(sql: string): unknown };
  const original = proto.query;
  try {
    for (let i = 0; i < 30; i++) await createCard(svc, { type_id: "task", title: `t${i}`, fields: { priority: i === 29 ? "urgent" : "low" } }, as("ada"));
    proto.query = function (this: unknown, sql: string) { seen.push(sql); return original.call(this, sql); };
    const { card } = await takeNext(svc, { type_id: "task", filter: { "fields.priority": "urgent" } }, as("agent-1"));
    proto.query = original;
    expect(card?.title).toBe("t29");
    const recheck = seen.filter((sql) => sql.includes("json_each(?) j CROSS JOIN cards c"));
    expect(recheck.length).toBe(1);
    const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      const plan = (db.query(`EXPLAIN QUERY PLAN ${recheck[0]}`).all() as Array<{ detail: string }>).map((r) => r.detail).join("; ");
      expect(plan).toContain("SEARCH c USING INDEX sqlite_autoindex_cards_1 (id=?)");
      expect(plan).not.toContain("type_id=?");
    } finally {
      db.close();
    }
  } finally {
    proto.query = original;
    svc.close();
  }
});

test("with an Idempotency-Key the empty answer is recorded, so a replay stays empty", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const ctx = { actor: "agent-1", idempotency: { key: "k1", hash: "h1", status: 200 } } as never;
    expect((await takeNext(svc, { type_id: "task", filter: { "fields.priority": "low" } }, ctx)).card).toBeNull();
    await createCard(svc, { type_id: "task", title: "now low", fields: { priority: "low" } }, as("ada"));
    const again = { actor: "agent-1", idempotency: { key: "k1", hash: "h1", status: 200 } } as never;
    expect((await takeNext(svc, { type_id: "task", filter: { "fields.priority": "low" } }, again)).card).toBeNull();
  } finally {
    svc.close();
  }
});
