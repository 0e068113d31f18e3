import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { toEnvelope, type ErrorEnvelope } from "../../src/domain/errors.ts";
import { compareCards, parseSort, type Sort } from "../../src/domain/sort.ts";
import type { Card } from "../../src/domain/types.ts";
import { sortToSql } from "../../src/store/sqlite/sort-sql.ts";

const FIELD_IDS = new Set(["priority", "estimate", "mixed"]);

function err(fn: () => unknown): ErrorEnvelope {
  try { fn(); } catch (e) { return toEnvelope(e); }
  throw new Error("expected an error");
}

describe("parseSort", () => {
  test.each<[string, Sort]>([
    ["created_at", { key: "created_at", desc: false }],
    ["-created_at", { key: "created_at", desc: true }],
    ["updated_at", { key: "updated_at", desc: false }],
    ["-title", { key: "title", desc: true }],
    ["fields.priority", { key: "fields.priority", desc: false }],
    ["-fields.estimate", { key: "fields.estimate", desc: true }],
  ])("%s", (raw, sort) => expect(parseSort(raw, FIELD_IDS)).toEqual(sort));

  test.each([["status"], [""], ["-"], ["--title"], ["fields.nope"], ["fields."], ["+title"], ["title "], ["owner"]])(
    "%j is validation_failed on field sort with the legal keys", (raw) => {
      expect(err(() => parseSort(raw, FIELD_IDS))).toMatchObject({
        error: "validation_failed", field: "sort", value: raw,
        valid_options: ["created_at", "updated_at", "title", "fields.estimate", "fields.mixed", "fields.priority"],
      });
    },
  );

});

// --- ORDER BY on a real database agrees with compareCards ---

const db = new Database(":memory:");
afterAll(() => db.close());
db.exec(`CREATE TABLE cards (id TEXT PRIMARY KEY, title TEXT NOT NULL, fields TEXT NOT NULL,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);

function card(id: string, title: string, fields: Record<string, unknown>, created_at: string, updated_at = created_at): Card {
  return {
    id, workspace_id: "ws", type_id: "task", schema_version: 1, title, status: "todo", fields, tags: [], version: 1,
    created_at, updated_at, status_since: created_at, created_by: "a",
  };
}

const CARDS = [
  card("card_01", "banana", { priority: "b", estimate: 3, mixed: "x" }, "2026-01-03T00:00:00.000Z"),
  card("card_02", "Apple", { estimate: 10, mixed: 2 }, "2026-01-01T00:00:00.000Z"),
  card("card_03", "apple", { priority: "A", estimate: 3, mixed: null }, "2026-01-02T00:00:00.000Z"),
  card("card_04", "cherry", { priority: "a", mixed: "X" }, "2026-01-02T00:00:00.000Z", "2026-01-05T00:00:00.000Z"),
  card("card_05", "Äpfel", { priority: "c", estimate: -1.5 }, "2026-01-04T00:00:00.000Z"),
  card("card_06", "date", {}, "2026-01-04T00:00:00.000Z"),
];
const ins = db.query("INSERT INTO cards VALUES (?,?,?,?,?)");
for (const c of CARDS) ins.run(c.id, c.title, JSON.stringify(c.fields), c.created_at, c.updated_at);

function sqlOrder(sort: Sort): string[] {
  return db.query(`SELECT c.id FROM cards c ORDER BY ${sortToSql(sort)}`).all().map((r) => (r as { id: string }).id);
}
const jsOrder = (sort: Sort) => [...CARDS].sort(compareCards(sort)).map((c) => c.id);
const ids = (...n: number[]) => n.map((i) => `card_0${i}`);

describe("sortToSql and compareCards give the same order", () => {
  test.each<[string, string[]]>([
    ["created_at", ids(2, 3, 4, 1, 5, 6)],
    ["-created_at", ids(6, 5, 1, 4, 3, 2)],
    ["updated_at", ids(2, 3, 1, 5, 6, 4)],
    ["title", ids(2, 3, 1, 4, 6, 5)], // ASCII case-insensitive; ties by id; Ä after ASCII
    ["-title", ids(5, 6, 4, 1, 3, 2)],
    ["fields.priority", ids(3, 4, 1, 5, 2, 6)], // A and a tie: id order; missing last
    ["-fields.priority", ids(5, 1, 4, 3, 6, 2)], // missing still last, ties by id descending
    ["fields.estimate", ids(5, 1, 3, 2, 4, 6)], // numbers numerically, missing last
    ["-fields.estimate", ids(2, 3, 1, 5, 6, 4)],
    ["fields.mixed", ids(2, 1, 4, 3, 5, 6)], // numbers before text; null and absent are missing, by id
    ["-fields.mixed", ids(4, 1, 2, 6, 5, 3)],
  ])("%s", (raw, expected) => {
    const sort = parseSort(raw, FIELD_IDS);
    expect(sqlOrder(sort)).toEqual(expected);
    expect(jsOrder(sort)).toEqual(expected);
  });

  test("the clause has no parameters and names the id tiebreak", () => {
    expect(sortToSql({ key: "fields.priority", desc: true })).toContain("c.id DESC");
    expect(sortToSql({ key: "title", desc: false }, "x")).toBe("x.title COLLATE NOCASE ASC, x.id ASC");
  });

  test("a field id that could break out of the literal is refused", () => {
    expect(() => sortToSql({ key: "fields.a'b", desc: false })).toThrow();
  });
});
