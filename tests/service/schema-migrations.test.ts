/**
 * Schema migrations on a database that already holds cards. Migration 5 rebuilds the list
 * indexes ascending: a new card then appends on the rightmost leaf instead of splitting the
 * leftmost one. A database left at version 4 (descending indexes) must open, migrate and
 * list exactly as before.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { createCard, health, listCards, patchCard, takeNext, type CardPage } from "../../src/service/index.ts";
import { MIGRATIONS } from "../../src/store/sqlite/schema.ts";
import { SCHEMA_VERSION } from "../../src/store/sqlite/schema-version.ts";
import { filterToSql } from "../../src/store/sqlite/filter-sql.ts";
import { boardScope } from "../../src/service/list.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const as = (actor: string) => ({ actor }) as never;
const LIST_INDEXES = ["cards_by_updated", "cards_by_status", "cards_by_type", "cards_by_owner"];

/** Each key column of an index with its direction, e.g. "updated_at asc". */
function indexColumns(db: Database, name: string): string[] {
  return (db.query(`PRAGMA index_xinfo(${name})`).all() as Array<{ name: string | null; desc: number; key: number }>)
    .filter((c) => c.key === 1)
    .map((c) => `${c.name} ${c.desc ? "desc" : "asc"}`);
}

describe("schema migrations", () => {
  test("SCHEMA_VERSION (what opening compares with, without loading the SQL) counts the migrations", () => {
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  test("the list indexes are ascending, so new cards append", async () => {
    const dir = makeWorkspace();
    (await openTestService(dir, "embedded")).close();
    const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      expect(Number((db.query("PRAGMA user_version").get() as { user_version: number }).user_version)).toBe(MIGRATIONS.length);
      expect(indexColumns(db, "cards_by_updated")).toEqual(["updated_at asc", "id asc"]);
      expect(indexColumns(db, "cards_by_status")).toEqual(["status asc", "updated_at asc", "id asc"]);
      expect(indexColumns(db, "cards_by_type")).toEqual(["type_id asc", "updated_at asc", "id asc"]);
      expect(indexColumns(db, "cards_by_owner")).toEqual(["owner asc", "updated_at asc", "id asc"]);
    } finally {
      db.close();
    }
  });

  test("a version-4 database with cards migrates and lists in the same order", async () => {
    const dir = makeWorkspace();
    let svc = await openTestService(dir, "embedded");
    for (let i = 0; i < 12; i++) {
      const c = await createCard(svc, { type_id: "task", title: `card ${i}`, status: i % 2 ? "todo" : "doing" }, as("ada"));
      if (i % 3 === 0) await patchCard(svc, c.id, { version: 1, owner: "ada" }, as("ada"));
    }
    const views = [{}, { status: "todo" }, { owner: "ada" }, { type_id: "task", limit: "5" }];
    const before = views.map((p) => (listCards(svc, p) as CardPage).items.map((c) => c.id));
    svc.close();

    // put the database back to version 4: the descending indexes it had then
    const db = new Database(join(dir, ".cards", "cards.db"));
    db.exec(`
      ${LIST_INDEXES.map((n) => `DROP INDEX ${n};`).join("\n")}
      CREATE INDEX cards_by_updated ON cards(updated_at DESC, id DESC);
      CREATE INDEX cards_by_status ON cards(status, updated_at DESC, id DESC);
      CREATE INDEX cards_by_type ON cards(type_id, updated_at DESC, id DESC);
      CREATE INDEX cards_by_owner ON cards(owner, updated_at DESC, id DESC) WHERE owner IS NOT NULL;
      ALTER TABLE signals DROP COLUMN after_seq;
      DROP INDEX once_keys_by_at;
      DROP INDEX cards_by_status_type;
      DROP INDEX events_deleted;
      DROP INDEX cards_unowned_by_type;
      PRAGMA user_version = 4;`);
    expect(indexColumns(db, "cards_by_updated")).toEqual(["updated_at desc", "id desc"]);
    db.close();

    svc = await openTestService(dir, "embedded");
    try {
      expect(views.map((p) => (listCards(svc, p) as CardPage).items.map((c) => c.id))).toEqual(before);
      expect(before[0]).toHaveLength(12);
    } finally {
      svc.close();
    }
    const after = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      expect(Number((after.query("PRAGMA user_version").get() as { user_version: number }).user_version)).toBe(MIGRATIONS.length);
      for (const n of LIST_INDEXES) expect(indexColumns(after, n).every((c) => c.endsWith(" asc"))).toBe(true);
    } finally {
      after.close();
    }
  });

  test("a database from a newer version is refused, untouched", async () => {
    const dir = makeWorkspace();
    (await openTestService(dir, "embedded")).close();
    const db = new Database(join(dir, ".cards", "cards.db"));
    db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    const err = await openTestService(dir, "embedded").then(() => null, (e) => e);
    expect(err?.code).toBe("unavailable");
    expect(err?.message).toContain("newer version of cards");
    const after = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      expect(Number((after.query("PRAGMA user_version").get() as { user_version: number }).user_version)).toBe(MIGRATIONS.length + 1);
    } finally {
      after.close();
    }
  });

  test("a server whose database a newer cards migrates meanwhile refuses writes from then on (before: it went on writing to a schema it does not know)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    try {
      const before = await createCard(svc, { type_id: "task", title: "before the upgrade" }, as("ada"));
      expect((await health(svc, "test")).workspace_id).toBeString();
      const db = new Database(join(dir, ".cards", "cards.db"));
      db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`); // what a newer binary's first open does
      db.close();
      // GET /health says so before any write tries
      await expect(health(svc, "test")).rejects.toThrow(`was migrated to schema ${MIGRATIONS.length + 1}`);
      const err = await createCard(svc, { type_id: "task", title: "after it" }, as("ada")).then(() => null, (e) => e);
      expect(err?.code).toBe("unavailable");
      expect(err?.message).toContain(`was migrated to schema ${MIGRATIONS.length + 1} by another version of cards`);
      expect((await listCards(svc, {}, "ada")).items.map((c) => c.id)).toEqual([before.id]); // nothing written; reads go on
    } finally {
      svc.close();
    }
  });

  test("a write that waited for the lock while a newer cards migrated the file is refused too (before: written into the new schema)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    try {
      await createCard(svc, { type_id: "task", title: "before the upgrade" }, as("ada"));
      const db = new Database(join(dir, ".cards", "cards.db"));
      db.exec("BEGIN IMMEDIATE"); // the newer binary's migration holds the lock
      const waiting = createCard(svc, { type_id: "task", title: "waited" }, as("ada")).then(() => null, (e) => e);
      await new Promise((r) => setTimeout(r, 50));
      db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
      db.exec("COMMIT");
      db.close();
      const err = await waiting;
      expect(err?.code).toBe("unavailable");
      expect(err?.message).toContain(`was migrated to schema ${MIGRATIONS.length + 1}`);
      expect((await listCards(svc, {}, "ada")).items.map((c) => c.title)).toEqual(["before the upgrade"]);
    } finally {
      svc.close();
    }
  });

  test("the old full-text table stays after migration 6, empty, so an older binary's writes still find it", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    await createCard(svc, { type_id: "task", title: "one" }, as("ada"));
    svc.close();
    const db = new Database(join(dir, ".cards", "cards.db"));
    try {
      expect(db.query("SELECT name FROM sqlite_master WHERE name = 'cards_fts'").get()).not.toBeNull();
      db.query("INSERT INTO cards_fts (rowid, title, body) VALUES (1, 'old binary', '')").run(); // what such a write does
    } finally {
      db.close();
    }
  });
  test("a board's lane counts come from an index alone (migration 10)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    svc.close();
    const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      // the board scope (its card types) as the store compiles it, and GROUP BY status, as countBoardCards asks
      const scope = filterToSql(boardScope(svc.board("main"), svc.defs));
      const plan = db.query(`EXPLAIN QUERY PLAN SELECT c.status, count(*) FROM cards c WHERE ${scope.sql} GROUP BY c.status`).all(...scope.params) as Array<{ detail: string }>;
      expect(plan.map((p) => p.detail).join("; ")).toContain("COVERING INDEX cards_by_status_type");
    } finally {
      db.close();
    }
  });

  test("take-next reads its candidates from the unowned index alone (migration 7)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    for (let i = 0; i < 6; i++) await createCard(svc, { type_id: "task", title: `card ${i}`, status: "todo" }, as("ada"));
    const first = await takeNext(svc, {}, as("ada"));
    svc.close();
    const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      expect(indexColumns(db, "cards_unowned")).toEqual(["updated_at asc", "id asc", "type_id asc", "status asc", "owner asc"]);
      // the candidate query of the default board's scope (its card types), in the shape
      // takeNextCandidates builds; a type_id scope goes through cards_by_type instead
      const typeIs = "((c.type_id IS NOT NULL) AND (c.type_id = ? COLLATE BINARY))";
      const plan = (db.query(`EXPLAIN QUERY PLAN SELECT c.id AS id, c.status AS status FROM cards c
        WHERE ((${typeIs} OR ${typeIs} OR ${typeIs})) AND c.owner IS NULL ORDER BY c.updated_at ASC, c.id ASC LIMIT ?`)
        .all("task", "bug", "review", 4) as Array<{ detail: string }>).map((r) => r.detail);
      expect(plan).toEqual(["SCAN c USING COVERING INDEX cards_unowned"]);
      // the oldest card went first (cards made in one millisecond go by id), and left the index once owned
      const oldest = db.query("SELECT id FROM cards ORDER BY created_at, id LIMIT 1").get() as { id: string };
      expect(first.card?.id).toBe(oldest.id);
      expect(first.card?.owner).toBe("ada");
      expect(Number((db.query("SELECT count(*) AS n FROM cards INDEXED BY cards_unowned WHERE owner IS NULL").get() as { n: number }).n)).toBe(5);
    } finally {
      db.close();
    }
  });

  test("take-next scoped to a type walks that type's unowned cards, not its owned history (migration 12)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    // a history: 300 owned tasks older than the one unowned task
    for (let i = 0; i < 300; i++) await createCard(svc, { type_id: "task", title: `done ${i}`, status: "todo" }, as("ada"));
    for (let i = 0; i < 300; i++) await takeNext(svc, { type_id: "task" }, as("ada"));
    const fresh = await createCard(svc, { type_id: "task", title: "fresh", status: "todo" }, as("ada"));
    svc.close();
    const db = new Database(join(dir, ".cards", "cards.db"), { readonly: true });
    try {
      db.exec("ANALYZE"); // the planner as a long-lived workspace would have it
    } catch { /* read-only: the plan without statistics */ }
    try {
      const sql = `SELECT c.id AS id, c.status AS status FROM cards c WHERE ((c.type_id IS NOT NULL) AND (c.type_id = ? COLLATE BINARY)) AND c.owner IS NULL ORDER BY c.updated_at ASC, c.id ASC LIMIT ?`;
      const plan = (db.query(`EXPLAIN QUERY PLAN ${sql}`).all("task", 4) as Array<{ detail: string }>).map((r) => r.detail);
      expect(plan).toEqual(["SEARCH c USING COVERING INDEX cards_unowned_by_type (type_id=?)"]);
      expect((db.query(sql).all("task", 4) as Array<{ id: string }>).map((r) => r.id)).toEqual([fresh.id]);
    } finally {
      db.close();
    }
  });
});
