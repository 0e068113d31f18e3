/**
 * The edges of pages and limits, each where a rule turns: a page that ends exactly at its
 * limit, the largest page a list and the feed hold, a lane exactly at its WIP limit, and
 * take-next's order among cards changed in the same millisecond.
 */
import { describe, expect, test } from "bun:test";
import { createCard, restoreWorkspace, takeNext } from "../../src/service/index.ts";
import { testApi } from "../helpers/http.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" };

describe("pages", () => {
  test("a page that ends exactly at the last card or event gives no next_cursor (SPEC: absent when exhausted)", async () => {
    const api = await testApi();
    try {
      for (let i = 0; i < 4; i++) await api.task({ title: `c${i}` });
      const cards = (await api.get("/cards?limit=4")).body;
      expect([cards.items.length, cards.next_cursor]).toEqual([4, undefined]);
      const events = (await api.get("/events?limit=4")).body;
      expect(events.items.length).toBe(4);
      expect(events.next_cursor ?? "").toBe("");
      // one more on each, and the page says so
      expect((await api.get("/cards?limit=3")).body.next_cursor).toBeString();
      expect((await api.get("/events?limit=3")).body.next_cursor).toBe(events.items[2].id);
    } finally {
      api.close();
    }
  });

  test("a list page holds at most 200 cards and a feed page 500 events, whatever limit asks", async () => {
    const api = await testApi();
    try {
      for (let i = 0; i < 510; i++) await createCard(api.svc, { type_id: "task", title: `bulk ${i}` }, ada);
      const cards = (await api.get("/cards?limit=500")).body;
      expect(cards.items.length).toBe(200);
      expect(cards.next_cursor).toBeString();
      const events = (await api.get("/events?limit=1000")).body;
      expect(events.items.length).toBe(500);
      expect(events.next_cursor).toBe(events.items[499].id);
    } finally {
      api.close();
    }
  }, 30_000);
});

describe("WIP limits", () => {
  test("a lane exactly at its limit is no breach; one card more is (SPEC: above the limit)", async () => {
    const api = await testApi();
    try {
      // main: doing holds at most 3
      for (let i = 0; i < 3; i++) await api.task({ title: `w${i}`, status: "doing" });
      const at = (await api.get("/breaches?board_id=main&type=wip_exceeded")).body.items;
      expect(at).toEqual([]);
      await api.task({ title: "one more", status: "doing" });
      const over = (await api.get("/breaches?board_id=main&type=wip_exceeded")).body.items;
      expect(over.map((b: any) => [b.column, b.count, b.limit])).toEqual([["doing", 4, 3]]);
    } finally {
      api.close();
    }
  });
});

describe("take-next order", () => {
  test("cards last changed in the same millisecond go by id, lowest first (SPEC: updated_at ascending, id ascending)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    try {
      const at = "2025-01-01T00:00:00.000Z";
      const ids = ["card_00000000000000c3", "card_00000000000000a1", "card_00000000000000b2"];
      const card = (id: string) => JSON.stringify({ record: "card", card: {
        id, type_id: "task", schema_version: 2, title: id, status: "todo", fields: { priority: "normal" }, tags: [], links: [], comments: [],
        version: 1, created_at: at, updated_at: at, status_since: at, created_by: "ada",
      } });
      const event = (n: number, id: string) => JSON.stringify({ record: "event", event: { id: String(n).padStart(12, "0"), type: "card_created", actor: "ada", at, card_id: id, scope: "card", diff: {} } });
      const lines = [JSON.stringify({ record: "header", format: "cards-dump", format_version: 1 }), ...ids.map(card), ...ids.map((id, i) => event(i + 1, id))];
      await restoreWorkspace(svc, (async function* () { yield* lines; })());
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        order.push((await takeNext(svc, { type_id: "task" }, { actor: "agent-1" })).card!.id);
      }
      expect(order).toEqual([...ids].sort());
    } finally {
      svc.close();
    }
  });
});

describe("GET /breaches: card_blocked is card-scoped", () => {
  test("asked without a board, a blocked card on no board is listed once, without board_id; one on two boards once per board", async () => {
    // review taken off main: its cards are on no board
    const api = await testApi({ edit: (f) => {
      const main = f["definitions/boards/main.json"] as any;
      main.card_type_ids = ["task", "bug"];
      delete main.presentation?.card_preview?.review;
    } });
    try {
      const blocker = await api.task({ title: "blocker" });
      const review = (await api.post("/cards", { type_id: "review", title: "on no board" }, { "x-service-actor": "ada" })).body;
      expect(review.id).toBeString();
      expect((await api.post(`/cards/${review.id}/links`, { type_id: "depends-on", target: blocker.id }, { "x-service-actor": "ada" })).status).toBe(201);
      const made = await api.post("/cards", { type_id: "bug", title: "on two boards", fields: { steps: "1. open it" } }, { "x-service-actor": "ada" });
      expect(made.text).toContain('"id"');
      const bug = made.body;
      expect((await api.post(`/cards/${bug.id}/links`, { type_id: "blocked-by", target: blocker.id }, { "x-service-actor": "ada" })).status).toBe(201);

      const all = (await api.get("/breaches?type=card_blocked")).body.items;
      const shape = (items: any[]) => items.map((b: any) => [b.card_id === review.id ? "review" : "bug", b.board_id ?? null, b.blockers]).sort((a, b) => String(a[1]).localeCompare(String(b[1])));
      expect(shape(all)).toEqual([["bug", "bugs", [blocker.id]], ["bug", "main", [blocker.id]], ["review", null, [blocker.id]]]);
      // a board's breaches are that board's
      expect(shape((await api.get("/breaches?board_id=main&type=card_blocked")).body.items)).toEqual([["bug", "main", [blocker.id]]]);
      // and the unasked-for kinds stay out
      expect((await api.get("/breaches?type=wip_exceeded")).body.items).toEqual([]);
    } finally {
      api.close();
    }
  });
});

describe("query strings and paths clients build", () => {
  test("a list parameter given twice is one list (OpenAPI clients send arrays so); any other parameter twice is 400, never its last value", async () => {
    const api = await testApi();
    try {
      const todo = await api.task({ title: "t", status: "todo" });
      const backlog = await api.task({ title: "b" });
      const ids = (r: any) => r.body.items.map((c: any) => c.id).sort();
      expect(ids(await api.get("/cards?status=todo&status=backlog"))).toEqual([todo.id, backlog.id].sort());
      const types = (await api.get("/events?types=card_created&types=status_changed")).body.items.map((e: any) => e.type);
      expect(new Set(types)).toEqual(new Set(["card_created"]));
      expect(types.length).toBe(2);
      const twice = await api.get("/cards?owner=ada&owner=bob");
      expect([twice.status, twice.body.error, twice.body.field]).toEqual([400, "bad_request", "owner"]);
    } finally {
      api.close();
    }
  });

  test("percent-escapes in the query that are not UTF-8 are 400 naming the parameter, as in the path and the body (before: read as U+FFFD)", async () => {
    const api = await testApi();
    try {
      for (const [path, field] of [["/events?actor=jos%E9", "actor"], ["/cards?q=%FF", "q"], ["/cards?owner=jos%E9", "owner"], ["/cards?limit=5&%FF=1", "%FF"], ["/cards?q=%ED%A0%80", "q"], ["/events/stream?actor=jos%E9", "actor"]]) {
        const r = await api.get(path!);
        expect([path, r.status, r.body.error, r.body.field]).toEqual([path, 400, "bad_request", field]);
        expect(r.body.hint).toStartWith("percent-encode the text's UTF-8 bytes");
      }
      // UTF-8 escapes, U+FFFD itself and a % that starts no escape are read as before
      await api.task({ title: "caf\u00e9 100%" });
      expect((await api.get("/cards?q=caf%C3%A9")).body.items.map((c: any) => c.title)).toEqual(["caf\u00e9 100%"]);
      for (const path of ["/cards?q=%EF%BF%BD", "/cards?q=100%", "/cards?q=a+b%2Bc"]) expect([path, (await api.get(path)).status]).toEqual([path, 200]);
    } finally {
      api.close();
    }
  });

  test("a bad escape is told by its parameter as decoded (+ is a space) and quoted to 100 characters; a % before one hex digit is itself, as URLSearchParams reads it", async () => {
    const api = await testApi();
    try {
      const plus = await api.get("/cards?q+x=%FF");
      expect([plus.status, plus.body.field]).toEqual([400, "q x"]);
      const long = await api.get(`/cards?q=${"a".repeat(150)}%FF`);
      expect([long.status, long.body.message]).toEqual([400, `query parameter "q" holds percent-escapes that are not UTF-8 (${JSON.stringify(`q=${"a".repeat(98)}\u2026`)})`]);
      const card = await api.task({ title: "up 100%A" });
      const one = await api.get("/cards?q=100%A");
      expect([one.status, one.body.items?.map((c: { id: string }) => c.id)]).toEqual([200, [card.id]]);
    } finally {
      api.close();
    }
  });

  test("another method on /cards/take-next is 405 naming POST, not a card called take-next", async () => {
    const api = await testApi();
    try {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const r = await api.call(method, "/cards/take-next", method === "PATCH" ? {} : undefined);
        expect([method, r.status, r.body.error, r.headers.get("allow")]).toEqual([method, 405, "method_not_allowed", "POST"]);
      }
      // a card id there is still a card
      const t = await api.task();
      expect((await api.get(`/cards/${t.id}`)).status).toBe(200);
    } finally {
      api.close();
    }
  });
});
