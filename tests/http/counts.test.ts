/** GET /boards/{id}/counts: exact per-column counts within the board's scope, narrowed like GET /cards. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";

let api: TestApi;
const ada = { "x-service-actor": "ada" };

beforeAll(async () => {
  api = await testApi();
  for (let i = 0; i < 3; i++) await api.task({ title: `plain task ${i}` });
  await api.task({ title: "urgent walrus", status: "todo", fields: { priority: "urgent" } });
  const mine = await api.task({ title: "claimed one", status: "todo" });
  expect((await api.post(`/cards/${mine.id}/claim`, { version: mine.version }, ada)).status).toBe(200);
  await api.post("/cards", { type_id: "bug", title: "a bug", fields: { severity: "major", steps: "run it" } });
  const wontfix = await api.post("/cards", { type_id: "bug", title: "not fixing", fields: { severity: "minor", steps: "run it", resolution: "wontfix" } });
  expect(wontfix.status).toBe(201);
});
afterAll(() => api.close());

describe("GET /boards/{id}/counts", () => {
  test("every column of the board, 0 included, and the total", async () => {
    const r = await api.get("/boards/main/counts");
    expect(r.status).toBe(200);
    // JSON answers are never sniffed as HTML by a browser (card text is caller-written)
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.body).toEqual({ board_id: "main", counts: { backlog: 5, todo: 2, doing: 0, review: 0, done: 0 }, total: 7 });
    // the same numbers a full listing gives, lane by lane
    for (const [status, n] of Object.entries(r.body.counts)) {
      const page = await api.get(`/cards?board_id=main&status=${status}&limit=200`);
      expect(page.body.items.length).toBe(n);
    }
  });

  test("the board's default_filter applies (bugs leaves wontfix out)", async () => {
    const r = await api.get("/boards/bugs/counts");
    expect(r.body.counts.backlog).toBe(1);
    expect(r.body.total).toBe(1);
  });

  test("narrowed like GET /cards: q, a saved filter with me, type_id, owner", async () => {
    expect((await api.get("/boards/main/counts?q=walrus")).body.total).toBe(1);
    expect((await api.get("/boards/main/counts?filter=urgent")).body.counts).toMatchObject({ todo: 1, backlog: 0 });
    expect((await api.get("/boards/main/counts?filter=mine", ada)).body.counts.todo).toBe(1);
    expect((await api.get("/boards/main/counts?type_id=bug")).body.total).toBe(2);
    expect((await api.get("/boards/main/counts?owner=ada")).body.total).toBe(1);
  });

  test("bad input: unknown board 404 with the boards; status, sort or a typo 400 with the valid parameters", async () => {
    const miss = await api.get("/boards/nope/counts");
    expect(miss.status).toBe(404);
    expect(miss.body.valid_options).toEqual(expect.arrayContaining(["main", "bugs"]));
    const status = await api.get("/boards/main/counts?status=todo");
    expect(status.status).toBe(400);
    expect(status.body).toMatchObject({ error: "bad_request", field: "status", hint: expect.stringContaining("per column") });
    const sort = await api.get("/boards/main/counts?sort=title");
    expect(sort.status).toBe(400);
    expect(sort.body.valid_options).toContain("q");
    const typo = await api.get("/boards/main/counts?type_id=tsak");
    expect(typo.status).toBe(422);
    // a saved filter's name is a value of a closed set (the board's): 422 with the names
    const unknownFilter = await api.get("/boards/main/counts?filter=nope");
    expect([unknownFilter.status, unknownFilter.body.error, unknownFilter.body.field, unknownFilter.body.valid_options]).toEqual([422, "validation_failed", "filter", ["mine", "urgent"]]);
    const listed = await api.get("/cards?board_id=main&filter=nope");
    expect([listed.status, listed.body.error, listed.body.message]).toEqual([422, "validation_failed", 'board main has no saved filter "nope"']);
  });
});
