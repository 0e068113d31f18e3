/** Ownership, links and blocking, comments, entries, history and search over HTTP (SPEC + DECISIONS). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { testApi, type TestApi } from "../helpers/http.ts";
import type { CardEvent } from "../../src/domain/types.ts";

let api: TestApi;
beforeAll(async () => { api = await testApi(); });
afterAll(() => api.close());

const as = (actor: string) => ({ "x-service-actor": actor });

describe("claim", () => {
  test("compare-and-set on version: owner set, version +1, owner_changed", async () => {
    const c = await api.task();
    const r = await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    expect(r.status).toBe(200);
    expect(r.body.owner).toBe("agent-1");
    expect(r.body.version).toBe(2);
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items.at(-1);
    expect([ev.type, ev.diff, ev.actor]).toEqual(["owner_changed", { before: null, after: "agent-1" }, "agent-1"]);
  });

  test("a stale version is 409 with the current card", async () => {
    const c = await api.task();
    const r = await api.post(`/cards/${c.id}/claim`, { version: 3 }, as("agent-1"));
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("version_conflict");
    expect(r.body.card.version).toBe(1);
  });

  test("every version conflict carries the card as GET answers it, with links and comments", async () => {
    const c = await api.task();
    await api.post(`/cards/${c.id}/comments`, { body: "hello" });
    const full = (await api.get(`/cards/${c.id}`)).body;
    const conflicts = [
      await api.post(`/cards/${c.id}/claim`, { version: 9 }, as("agent-1")),
      await api.patch(`/cards/${c.id}`, { version: 9, title: "x" }),
      await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 9, entry: { note: "n" } }),
      await api.del(`/cards/${c.id}?version=9`),
    ];
    for (const r of conflicts) {
      expect(r.status).toBe(409);
      expect(r.body.card).toEqual(full);
    }
  });

  test("an illegal move on claim hints at PATCH with force (claim takes no force)", async () => {
    const c = await api.task();
    const r = await api.post(`/cards/${c.id}/claim`, { version: 1, status: "done" }, as("agent-1"));
    expect(r.body.error).toBe("transition_illegal");
    expect(r.body.hint).toContain("claim without status, then change the status with force (CLI: patch --force; HTTP and tools: force: true)");
    const p = await api.patch(`/cards/${c.id}`, { version: 1, status: "done" });
    expect(p.body.hint).toContain("force skips the check (CLI: --force; HTTP and tools: force: true)");
  });

  test("a move claim or release is refused emits transition_rejected, as a refused PATCH does (emit_rejections)", async () => {
    const fresh = await testApi();
    const seen: CardEvent[] = [];
    fresh.svc.subscribe((e) => { if (e.type === "transition_rejected") seen.push(e); });
    try {
      const c = await fresh.task({ status: "todo" });
      expect((await fresh.post(`/cards/${c.id}/claim`, { version: 1, status: "review" }, as("agent-1"))).body.error).toBe("transition_illegal");
      const held = await fresh.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
      expect((await fresh.post(`/cards/${c.id}/release`, { version: held.body.version, status: "review" }, as("agent-1"))).body.error).toBe("transition_illegal");
      for (let i = 0; i < 20 && seen.length < 2; i++) await Bun.sleep(10);
      expect(seen.map((e) => [e.card_id, (e.diff as any).before, (e.diff as any).after, (e.diff as any).board_id])).toEqual([
        [c.id, "todo", "review", "main"], [c.id, "todo", "review", "main"],
      ]);
    } finally {
      fresh.close();
    }
  });

  test("transition_rejected listed in persist_conditions is a durable event of the card (with an id); otherwise a live signal only; a dry run records neither", async () => {
    const rejections = (r: { body: { items: CardEvent[] } }) => r.body.items.filter((e) => e.type === "transition_rejected");
    const persisted = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.persist_conditions.push("transition_rejected"); } });
    try {
      const c = await persisted.task({ status: "todo" });
      expect((await persisted.patch(`/cards/${c.id}`, { version: 1, status: "review", dry_run: true })).body.error).toBe("transition_illegal");
      expect(rejections(await persisted.get(`/cards/${c.id}/events`))).toEqual([]);
      expect((await persisted.patch(`/cards/${c.id}`, { version: 1, status: "review" })).body.error).toBe("transition_illegal");
      const items = rejections(await persisted.get(`/cards/${c.id}/events`));
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ type: "transition_rejected", card_id: c.id, actor: "ada", diff: { board_id: "main", before: "todo", after: "review" } });
      expect(items[0]!.id).toMatch(/^\d{12}$/);
      expect(persisted.svc.store.listSignals(0, 100).filter((s) => s.event.type === "transition_rejected")).toEqual([]);
    } finally {
      persisted.close();
    }
    const live = await testApi();
    try {
      const c = await live.task({ status: "todo" });
      expect((await live.patch(`/cards/${c.id}`, { version: 1, status: "review" })).body.error).toBe("transition_illegal");
      expect(rejections(await live.get(`/cards/${c.id}/events`))).toEqual([]);
      expect(live.svc.store.listSignals(0, 100).filter((s) => s.event.type === "transition_rejected")).toHaveLength(1);
    } finally {
      live.close();
    }
  });

  test("without emit_rejections a refused move emits no transition_rejected (SPEC: only with emit_rejections)", async () => {
    const fresh = await testApi({ edit: (f) => { (f["definitions/boards/main.json"] as any).monitors.emit_rejections = false; } });
    const seen: CardEvent[] = [];
    fresh.svc.subscribe((e) => { if (e.type === "transition_rejected") seen.push(e); });
    try {
      const c = await fresh.task({ status: "todo" });
      expect((await fresh.patch(`/cards/${c.id}`, { version: 1, status: "review" })).body.error).toBe("transition_illegal");
      expect((await fresh.post(`/cards/${c.id}/claim`, { version: 1, status: "review" }, as("agent-1"))).body.error).toBe("transition_illegal");
      await Bun.sleep(100);
      expect(seen).toEqual([]);
    } finally {
      fresh.close();
    }
  });

  test("claiming a card another actor owns is 409 with the current card", async () => {
    const c = await api.task();
    await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    const r = await api.post(`/cards/${c.id}/claim`, { version: 2 }, as("agent-2"));
    expect(r.status).toBe(409);
    expect(r.body.card.owner).toBe("agent-1");
    // a retry with the new version can never win: the hint says what can
    expect(r.body.hint).toContain("agent-1 holds it: take another card, or take this one over");
    expect(r.body.hint).not.toContain("retry");
  });

  test("an actor that cannot be a user id (josé) is told to register an ASCII id with its name as display_name, and that works (before: \"register it first\", which POST /users refuses)", async () => {
    const c = await api.task();
    const utf8 = (s: string) => String.fromCharCode(...new TextEncoder().encode(s));
    const r = await api.post(`/cards/${c.id}/claim`, { version: 1 }, as(utf8("jos\u00e9")));
    expect([r.status, r.body.error, r.body.value]).toEqual([422, "unknown_user", "jos\u00e9"]);
    expect(r.body.hint).toStartWith('"jos\u00e9" cannot be a user id (user ids are 1-64 ASCII letters');
    const body = JSON.parse(/POST \/v1\/users (\{.*?\})\)/.exec(r.body.hint)![1]!);
    expect(body).toEqual({ id: "jose", kind: "agent", display_name: "jos\u00e9" });
    expect(r.body.hint).toEndWith("then act as jose");
    expect((await api.post("/users", body)).status).toBe(201);
    expect((await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("jose"))).body.owner).toBe("jose");
    // a registrable name keeps the plain hint
    const ghost = await api.post(`/cards/${c.id}/claim`, { version: 2 }, as("ghost-2"));
    expect(ghost.body.hint).toStartWith("register it first");
  });

  test("the id offered for a name that cannot be a user id drops the accents inside words and is ID when no ASCII is left; an owner is told to name it, not to act as it", async () => {
    const c = await api.task();
    const utf8 = (s: string) => String.fromCharCode(...new TextEncoder().encode(s));
    const hint = async (actor: string) => (await api.post(`/cards/${c.id}/claim`, { version: 1 }, as(utf8(actor)))).body.hint as string;
    expect(await hint("Zo\u00eb \u00c5ngstr\u00f6m")).toContain("`cards users add Zoe-Angstrom --kind agent");
    expect(await hint("\u674e\u96f7")).toContain("`cards users add ID --kind agent");
    const owner = await api.patch(`/cards/${c.id}`, { version: 1, owner: "m\u00fcller" });
    expect([owner.status, owner.body.error]).toEqual([422, "unknown_user"]);
    expect(owner.body.hint).toEndWith("then name muller here");
  });

  test("the claimer must be registered; with status the card moves too", async () => {
    const c = await api.task({ status: "todo" });
    const ghost = await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("ghost"));
    expect(ghost.status).toBe(422);
    expect(ghost.body.error).toBe("unknown_user");
    const r = await api.post(`/cards/${c.id}/claim`, { version: 1, status: "doing" }, as("agent-1"));
    expect(r.body.status).toBe("doing");
    expect(r.body.version).toBe(2);
    const types = (await api.get(`/cards/${c.id}/events`)).body.items.map((e: CardEvent) => e.type);
    expect(types).toEqual(["card_created", "owner_changed", "status_changed"]);
  });

  test("a claim with a status the graph forbids is refused and nothing changes", async () => {
    const c = await api.task(); // backlog: only todo allowed next
    const r = await api.post(`/cards/${c.id}/claim`, { version: 1, status: "done" }, as("agent-1"));
    expect(r.body.error).toBe("transition_illegal");
    expect((await api.get(`/cards/${c.id}`)).body.owner).toBeUndefined();
  });
});

describe("no-ops and refusals that change nothing", () => {
  test("the owner claiming again, and releasing an unowned card, keep the version and emit nothing (DECISIONS: no-op writes)", async () => {
    const c = await api.task();
    const claimed = (await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"))).body;
    const again = await api.post(`/cards/${c.id}/claim`, { version: claimed.version }, as("agent-1"));
    expect([again.status, again.body.version, again.body.updated_at]).toEqual([200, claimed.version, claimed.updated_at]);
    const free = await api.task();
    const released = await api.post(`/cards/${free.id}/release`, {}, as("agent-1"));
    expect([released.status, released.body.version]).toEqual([200, 1]);
    const types = async (id: string) => (await api.get(`/cards/${id}/events`)).body.items.map((e: CardEvent) => e.type);
    expect(await types(c.id)).toEqual(["card_created", "owner_changed"]);
    expect(await types(free.id)).toEqual(["card_created"]);
  });

  test("a card cannot link to itself, whatever the link type; its version stays", async () => {
    const c = await api.task();
    const r = await api.post(`/cards/${c.id}/links`, { type_id: "related", target: c.id });
    expect([r.status, r.body.error, r.body.field]).toEqual([422, "validation_failed", "target"]);
    expect((await api.get(`/cards/${c.id}`)).body.version).toBe(1);
  });
});

describe("release", () => {
  test("clears the owner; optional version and status", async () => {
    const c = await api.task({ status: "todo" });
    await api.post(`/cards/${c.id}/claim`, { version: 1, status: "doing" }, as("agent-1"));
    const stale = await api.post(`/cards/${c.id}/release`, { version: 1 }, as("agent-1"));
    expect(stale.status).toBe(409);
    const r = await api.post(`/cards/${c.id}/release`, { status: "todo" }, as("agent-1"));
    expect(r.status).toBe(200);
    expect(r.body.owner).toBeUndefined();
    expect(r.body.status).toBe("todo");
    expect(r.body.version).toBe(3);
    const last = (await api.get(`/cards/${c.id}/events`)).body.items.slice(-2).map((e: CardEvent) => [e.type, e.diff]);
    expect(last).toEqual([["owner_changed", { before: "agent-1", after: null }], ["status_changed", { before: "doing", after: "todo" }]]);
  });

  test("another actor's card needs force", async () => {
    const c = await api.task();
    await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    expect((await api.post(`/cards/${c.id}/release`, {}, as("agent-2"))).status).toBe(409);
    expect((await api.post(`/cards/${c.id}/release`, { force: true }, as("agent-2"))).body.owner).toBeUndefined();
  });
});

describe("take-next", () => {
  test("a filter on a field no card type in scope has is refused, listing the fields in scope", async () => {
    const r = await api.post("/cards/take-next", { board_id: "bugs", filter: { "fields.estimate_hours": 1 } });
    expect(r.status).toBe(422);
    expect(r.body.field).toContain("fields.estimate_hours");
    expect(r.body.valid_options).toContain("fields.steps");
    expect(r.body.valid_options).not.toContain("fields.estimate_hours");
    // in the task type's scope the same filter is fine
    expect((await api.post("/cards/take-next", { type_id: "task", filter: { "fields.estimate_hours": 1 }, dry_run: true })).status).toBe(200);
  });

  test("{card: null} with a hint when unowned cards match but none may move to the status asked for", async () => {
    const fresh = await testApi();
    try {
      const stuck = await fresh.task({ title: "stuck", status: "backlog" });
      const body = { filter: { status: "backlog" }, status: "doing" };
      for (const dry_run of [true, false]) {
        const r = await fresh.post("/cards/take-next", { ...body, dry_run });
        expect([r.status, r.body.card]).toEqual([200, null]);
        expect(r.body.hint).toContain(`none may move to doing (the oldest, ${stuck.id}, is in backlog)`);
      }
      // an answer recorded under an Idempotency-Key keeps its hint on replay
      const key = { "idempotency-key": "stuck-1" };
      const first = await fresh.post("/cards/take-next", body, key);
      const replay = await fresh.post("/cards/take-next", body, key);
      expect([first.body.hint, replay.text, replay.headers.get("idempotent-replayed")]).toEqual([expect.stringContaining("none may move to doing"), first.text, "true"]);
      // a filter of many conditions is not read a second time for the hint
      const big = { $and: [{ status: "backlog" }, ...Array.from({ length: 8 }, (_, i) => ({ title: { $ne: `x${i}` } }))] };
      expect((await fresh.post("/cards/take-next", { filter: big, status: "doing" })).body).toEqual({ card: null });
      // an empty queue has no hint; nor has a call without status
      expect((await fresh.post("/cards/take-next", { filter: { status: "review" }, status: "done" })).body).toEqual({ card: null });
      expect((await fresh.post("/cards/take-next", { filter: { status: "backlog" }, status: "todo" })).body.card.id).toBe(stuck.id);
    } finally {
      fresh.close();
    }
  });

  test("oldest unowned first (updated_at, then id); {card: null} when nothing is left", async () => {
    const fresh = await testApi();
    try {
      const a = await fresh.task({ title: "a" });
      await Bun.sleep(2);
      const b = await fresh.task({ title: "b" });
      const r1 = (await fresh.post("/cards/take-next", {}, as("agent-1"))).body.card;
      expect(r1.id).toBe(a.id);
      expect(r1.owner).toBe("agent-1");
      expect((await fresh.post("/cards/take-next", {}, as("agent-2"))).body.card.id).toBe(b.id);
      const none = await fresh.post("/cards/take-next", {}, as("agent-1"));
      expect(none.status).toBe(200);
      expect(none.body).toEqual({ card: null });
    } finally {
      fresh.close();
    }
  });

  test("cards changed at the same moment are taken in id order (a dump restored with one date, a batch committed together)", async () => {
    const fresh = await testApi();
    try {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await fresh.task({ title: `tie ${i}` })).id);
      // one updated_at for all, as a migration that keeps dates may leave them
      const db = new Database(join(fresh.dir, ".cards", "cards.db"));
      db.exec("UPDATE cards SET updated_at = '2026-01-01T00:00:00.000Z'");
      db.close();
      const taken: string[] = [];
      for (let i = 0; i < 4; i++) taken.push((await fresh.post("/cards/take-next", {}, as("agent-1"))).body.card.id);
      expect(taken).toEqual([...ids].sort());
    } finally {
      fresh.close();
    }
  });

  test("assign_to sets the owner without a registry lookup; status moves it", async () => {
    const fresh = await testApi();
    try {
      await fresh.task({ status: "todo" });
      const r = (await fresh.post("/cards/take-next", { assign_to: "unregistered-bot", status: "doing" })).body.card;
      expect(r.owner).toBe("unregistered-bot");
      expect(r.status).toBe("doing");
      const ev = (await fresh.get(`/cards/${r.id}/events`)).body.items.map((e: CardEvent) => e.type);
      expect(ev).toEqual(["card_created", "owner_changed", "status_changed"]);
    } finally {
      fresh.close();
    }
  });

  test("assign_to an owner who could never act as itself (\", \", a control character, too long, spaced) is refused, nothing taken", async () => {
    const fresh = await testApi();
    try {
      await fresh.task({ status: "todo" });
      const refusals = [
        ["ann, bee", 'assign_to "ann, bee" holds ", "', 'name one actor, without ", "'],
        ["bot\u001b[31m", "assign_to holds a control character (U+001B)", "name the owner in printable text (assign_to, the owner who will act on the card)"],
        ["b".repeat(201), "assign_to is 201 characters; at most 200", "see docs/limits.md"],
        [" bob ", 'assign_to " bob " starts or ends with a space', "an actor arrives trimmed over HTTP; name it without the spaces (assign_to, the owner who will act on the card)"],
        [" bob", 'assign_to " bob" starts or ends with a space', "an actor arrives trimmed over HTTP; name it without the spaces (assign_to, the owner who will act on the card)"],
        ["bob\u00a0", 'assign_to "bob\u00a0" starts or ends with a space', "an actor arrives trimmed over HTTP; name it without the spaces (assign_to, the owner who will act on the card)"],
      ] as const;
      for (const [owner, says, hint] of refusals) {
        const r = await fresh.post("/cards/take-next", { assign_to: owner });
        expect([r.status, r.body.error, r.body.field]).toEqual([400, "bad_request", "assign_to"]);
        // it names the value that was wrong, not the caller's actor (--actor, X-Service-Actor)
        expect(r.body.message).toStartWith(says);
        expect(r.body.hint).toBe(hint);
      }
      expect((await fresh.get("/cards")).body.items.every((c: { owner?: string }) => c.owner === undefined)).toBe(true);
      // the longest actor is an owner too
      expect((await fresh.post("/cards/take-next", { assign_to: "b".repeat(200) })).body.card.owner).toBe("b".repeat(200));
    } finally {
      fresh.close();
    }
  });

  test("with status, the graph that governs the card's type applies, whatever board scopes the call", async () => {
    const fresh = await testApi();
    try {
      // bugs are shown on main (the default board, its graph enforced) and on bugs (no graph)
      const bug = (await fresh.post("/cards", { type_id: "bug", title: "b", status: "todo", fields: { steps: "s" } })).body;
      expect((await fresh.post(`/cards/${bug.id}/claim`, { version: bug.version, status: "done" })).body.error).toBe("transition_illegal");
      expect((await fresh.post("/cards/take-next", { board_id: "bugs", status: "done" })).body.card).toBeNull();
      const moved = (await fresh.post("/cards/take-next", { board_id: "bugs", status: "doing" })).body.card;
      expect(moved).toMatchObject({ id: bug.id, status: "doing" });
    } finally {
      fresh.close();
    }
  });

  test("with status, 70 card types under one enforced board still make a small filter (one branch per board)", async () => {
    const many = await testApi({ edit: (f) => {
      const main = f["definitions/boards/main.json"];
      for (let i = 0; i < 70; i++) {
        f[`definitions/card-types/t${i}.json`] = { id: `t${i}`, name: `T${i}`, schema_version: 1, fields: [] };
        main.card_type_ids.push(`t${i}`);
      }
    } });
    try {
      const card = (await many.post("/cards", { type_id: "t69", title: "x", status: "todo" })).body;
      const r = await many.post("/cards/take-next", { status: "doing" });
      expect(r.status).toBe(200);
      expect(r.body.card.id).toBe(card.id);
    } finally {
      many.close();
    }
  });

  test("with status, only cards the graph lets move there are candidates", async () => {
    const fresh = await testApi();
    try {
      await fresh.task({ status: "backlog" }); // backlog -> doing is not an edge
      expect((await fresh.post("/cards/take-next", { status: "doing" })).body.card).toBeNull();
      const todo = await fresh.task({ status: "todo" });
      expect((await fresh.post("/cards/take-next", { status: "doing" })).body.card.id).toBe(todo.id);
    } finally {
      fresh.close();
    }
  });

  test("scoping: default board when neither type nor board; explicit type_id is its own scope", async () => {
    const fresh = await testApi((() => ({
      edit: (f: Record<string, any>) => {
        f["definitions/card-types/note.json"] = { id: "note", name: "Note", schema_version: 1, fields: [] };
      },
    }))());
    try {
      await fresh.post("/cards", { type_id: "note", title: "not on any board" });
      expect((await fresh.post("/cards/take-next", {})).body.card).toBeNull();
      expect((await fresh.post("/cards/take-next", { type_id: "note" })).body.card.title).toBe("not on any board");
    } finally {
      fresh.close();
    }
  });

  test("board_id applies the board's scope and default_filter", async () => {
    const fresh = await testApi();
    try {
      await fresh.task();
      await fresh.post("/cards", { type_id: "bug", title: "wontfix", fields: { steps: "s", resolution: "wontfix" } });
      expect((await fresh.post("/cards/take-next", { board_id: "bugs" })).body.card).toBeNull();
      const bug = (await fresh.post("/cards", { type_id: "bug", title: "real", fields: { steps: "s" } })).body;
      expect((await fresh.post("/cards/take-next", { board_id: "bugs" })).body.card.id).toBe(bug.id);
      expect((await fresh.post("/cards/take-next", { board_id: "nope" })).status).toBe(404);
    } finally {
      fresh.close();
    }
  });

  test("filter narrows the pool; {blocked: false} never hands out a blocked card", async () => {
    const fresh = await testApi();
    try {
      const blocker = await fresh.task({ title: "blocker", fields: { priority: "low" } });
      await Bun.sleep(2);
      const waiting = await fresh.task({ title: "waiting", fields: { priority: "high" } });
      await fresh.post(`/cards/${waiting.id}/links`, { type_id: "depends-on", target: blocker.id });
      // waiting is now the newest-updated, but also blocked
      const hi = (await fresh.post("/cards/take-next", { filter: { "fields.priority": "high", blocked: false }, dry_run: true })).body;
      expect(hi.card).toBeNull();
      const ready = (await fresh.post("/cards/take-next", { filter: { blocked: false } })).body.card;
      expect(ready.id).toBe(blocker.id);
      expect((await fresh.post("/cards/take-next", { filter: { blocked: false } })).body.card).toBeNull();
    } finally {
      fresh.close();
    }
  });

  test("`me` means the actor in user-typed fields too; without an actor, a filter that says `me` is refused", async () => {
    const fresh = await testApi();
    const nobody = await testApi({ edit: (f) => { delete f["definitions/workspace.json"].settings.default_user; } });
    try {
      const review = (await fresh.post("/cards", { type_id: "review", title: "r", fields: { reviewers: ["agent-1"] } }, { "x-service-actor": "ada" })).body;
      const mine = { "fields.reviewers": { $has: "me" } };
      const taken = (await fresh.post("/cards/take-next", { type_id: "review", filter: mine, dry_run: true }, { "x-service-actor": "agent-1" })).body.card;
      expect(taken?.id).toBe(review.id);
      expect((await fresh.post("/cards/take-next", { type_id: "review", filter: mine, dry_run: true }, { "x-service-actor": "ada" })).body.card).toBeNull();
      // no actor at all (no header, no CARDS_ACTOR, no default_user)
      for (const path of ["/cards?owner=me", "/cards?board_id=main&filter=mine"]) {
        const r = await nobody.get(path);
        expect(r.status).toBe(422);
        expect(r.body).toMatchObject({ error: "validation_failed", value: "me" });
      }
    } finally {
      fresh.close();
      nobody.close();
    }
  });

  test("a saved filter's `me` is the viewer only where a user is named: in a string field it is the word", async () => {
    const fresh = await testApi({
      edit: (f) => {
        f["definitions/boards/main.json"].presentation.filters.says_me = { "fields.branch": "me" };
        f["definitions/boards/main.json"].presentation.filters.mine_or_me = { $or: [{ owner: "me" }, { "fields.branch": "me" }] };
      },
    });
    try {
      const as = { "x-service-actor": "ada" };
      const literal = await fresh.task({ title: "literal", fields: { priority: "low", branch: "me" } });
      await fresh.task({ title: "named", fields: { priority: "low", branch: "ada" } });
      const owned = await fresh.task({ title: "owned" });
      await fresh.post(`/cards/${owned.id}/claim`, { version: owned.version }, as);
      const ids = async (name: string) => (await fresh.get(`/cards?board_id=main&filter=${name}`, as)).body.items.map((c: { id: string }) => c.id).sort();
      expect(await ids("says_me")).toEqual([literal.id]);
      expect(await ids("mine_or_me")).toEqual([literal.id, owned.id].sort());
    } finally {
      fresh.close();
    }
  });

  test("a write that says `me` in a user-typed field stores the writer, so `me` in a filter finds it (before: stored as the literal \"me\")", async () => {
    const fresh = await testApi();
    try {
      const as = (actor: string) => ({ "x-service-actor": actor });
      const review = (await fresh.post("/cards", { type_id: "review", title: "r", fields: { reviewers: ["me", "ada"] } }, as("agent-1"))).body;
      expect(review.fields.reviewers).toEqual(["agent-1", "ada"]);
      const mine = { "fields.reviewers": { $has: "me" } };
      expect((await fresh.post("/cards/take-next", { type_id: "review", filter: mine, dry_run: true }, as("agent-1"))).body.card?.id).toBe(review.id);
      const bug = (await fresh.post("/cards", { type_id: "bug", title: "b", fields: { severity: "minor", steps: "x" } }, as("ada"))).body;
      const patched = (await fresh.patch(`/cards/${bug.id}`, { version: bug.version, fields: { reported_by: "me" } }, as("agent-2"))).body;
      expect(patched.fields.reported_by).toBe("agent-2");
      const task = (await fresh.post("/cards", { type_id: "task", title: "t", fields: { priority: "low" } }, as("ada"))).body;
      const appended = (await fresh.post(`/cards/${task.id}/fields/evidence/append`, { version: task.version, entry: { note: "n", by: "me" } }, as("agent-3"))).body;
      expect(appended.card.fields.evidence[0].by).toBe("agent-3");
      // "me" beside the writer's own id is one value given twice
      const twice = await fresh.post("/cards", { type_id: "review", title: "r2", fields: { reviewers: ["me", "agent-1"] } }, as("agent-1"));
      expect([twice.status, twice.body.error]).toEqual([422, "validation_failed"]);
    } finally {
      fresh.close();
    }
  });

  test("a status or card type that the workspace does not have is refused with the valid options, not an empty answer", async () => {
    const fresh = await testApi();
    try {
      const columns = ["backlog", "todo", "doing", "review", "done"];
      for (const [body, field, value, options] of [
        [{ filter: { status: "ready", blocked: false }, status: "doing" }, "filter.status", "ready", columns],
        [{ filter: { type_id: { $in: ["task", "tsk"] } } }, "filter.type_id.$in[1]", "tsk", ["bug", "review", "task"]],
        // $has on a single-value path is equality: the same typo, the same answer
        [{ filter: { status: { $has: "ready" } }, dry_run: true }, "filter.status.$has", "ready", columns],
      ] as const) {
        const r = await fresh.post("/cards/take-next", body);
        expect(r.status).toBe(422);
        expect(r.body).toMatchObject({ error: "validation_failed", field, value, valid_options: [...options] });
      }
      for (const [q, field] of [["status=ready", "status"], ["type_id=task,tsk", "type_id"]] as const) {
        const r = await fresh.get(`/cards?${q}`);
        expect([r.status, r.body.field, r.body.valid_options?.length]).toEqual([422, field, field === "status" ? 5 : 3]);
      }
      // excluding a value the workspace lacks is harmless: $nin / $ne are not checked
      expect((await fresh.post("/cards/take-next", { filter: { status: { $nin: ["archived"] } }, dry_run: true })).status).toBe(200);

      // a JSON filter given where a saved filter's name goes says where expressions go
      const json = await fresh.get(`/cards?filter=${encodeURIComponent('{"status":"doing"}')}`);
      expect([json.status, json.body.field]).toEqual([400, "filter"]);
      expect(json.body.hint).toContain("take-next");
      // with board_id too (before: "board main has no saved filter {...}")
      const withBoard = await fresh.get(`/cards?board_id=main&filter=${encodeURIComponent('{"owner":"me"}')}`);
      expect([withBoard.status, withBoard.body.message]).toEqual([400, "filter here names a board's saved filter, not a filter expression"]);
      // a saved filter's name without a board: the hint names the boards that save it (before: no hint)
      const named = await fresh.get("/cards?filter=mine");
      expect(named.body.hint).toContain("--board main --filter mine");
      expect((await fresh.get("/cards?filter=nosuch")).body.hint).toContain("no board saves a filter");
      // a status a reload removed from the columns while cards held it can still be listed
      const stranded = await fresh.task({ status: "review" });
      await fresh.svc.store.write((tx) => { tx.insertCard({ ...fresh.svc.store.getCard(stranded.id)!, id: "card_00000000000000aa", status: "archived" }); });
      expect((await fresh.get("/cards?status=archived")).body.items.map((c: any) => c.id)).toEqual(["card_00000000000000aa"]);
    } finally {
      fresh.close();
    }
  });

  test("a bad filter is 422 with the path of the problem", async () => {
    const r = await api.post("/cards/take-next", { filter: { $and: [{ status: { $near: 1 } }] } });
    expect(r.status).toBe(422);
    expect(r.body.field).toContain("$and[0].status");
    const f = await api.post("/cards/take-next", { filter: { "fields.nope": 1 } });
    expect(f.status).toBe(422);
  });

  test("dry_run answers the card it would claim and claims nothing", async () => {
    const fresh = await testApi();
    try {
      const c = await fresh.task();
      const r = await fresh.post("/cards/take-next", { dry_run: true });
      expect(r.headers.get("dry-run")).toBe("true");
      expect(r.body.card.id).toBe(c.id);
      expect(r.body.card.owner).toBeUndefined();
      expect((await fresh.get(`/cards/${c.id}`)).body.version).toBe(1);
    } finally {
      fresh.close();
    }
  });

  test("an Idempotency-Key replay returns the same card", async () => {
    const fresh = await testApi();
    try {
      await fresh.task();
      await fresh.task();
      const h = { "idempotency-key": "tn-1", ...as("agent-1") };
      const a = (await fresh.post("/cards/take-next", {}, h)).body.card;
      const b = (await fresh.post("/cards/take-next", {}, h)).body.card;
      expect(b.id).toBe(a.id);
      expect(b.version).toBe(a.version);
    } finally {
      fresh.close();
    }
  });
});

describe("links and blocking", () => {
  test("add: 201, version +1, link_added; twice is idempotent", async () => {
    const a = await api.task();
    const b = await api.task();
    const r = await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id, note: "see also" });
    expect(r.status).toBe(201);
    expect(r.body.version).toBe(2);
    expect(r.body.links).toEqual([{ type_id: "related", target: b.id, note: "see also", created_by: "ada", created_at: expect.any(String) }]);
    const again = await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id, note: "see also" });
    expect(again.body.version).toBe(2);
    expect(again.body.links.length).toBe(1);
    const ev = (await api.get(`/cards/${a.id}/events`)).body.items.filter((e: CardEvent) => e.type === "link_added");
    expect(ev.map((e: CardEvent) => e.diff)).toEqual([{ type_id: "related", target: b.id, note: "see also" }]);
  });

  test("unknown type lists the link types; missing target is target_card_missing", async () => {
    const a = await api.task();
    const bad = await api.post(`/cards/${a.id}/links`, { type_id: "likes", target: a.id });
    expect(bad.status).toBe(422);
    expect(bad.body.valid_options).toContain("depends-on");
    const miss = await api.post(`/cards/${a.id}/links`, { type_id: "related", target: "card_0000000000000001" });
    expect(miss.body.error).toBe("target_card_missing");
  });

  test("typed link types check both endpoints and echo the valid set", async () => {
    const typed = await testApi({
      edit: (f) => {
        (f["definitions/workspace.json"] as any).link_types.push({ id: "reviews", name: "Reviews", type: "directional", source_types: ["review"], target_types: ["task"] });
      },
    });
    try {
      const t = await typed.task();
      const rv = (await typed.post("/cards", { type_id: "review", title: "r" })).body;
      const wrongSource = await typed.post(`/cards/${t.id}/links`, { type_id: "reviews", target: rv.id });
      expect(wrongSource.body.error).toBe("target_card_type_mismatch");
      expect(wrongSource.body.valid_options).toEqual(["review"]);
      const bug = (await typed.post("/cards", { type_id: "bug", title: "b", fields: { steps: "s" } })).body;
      const wrongTarget = await typed.post(`/cards/${rv.id}/links`, { type_id: "reviews", target: bug.id });
      expect(wrongTarget.body.valid_options).toEqual(["task"]);
      expect((await typed.post(`/cards/${rv.id}/links`, { type_id: "reviews", target: t.id })).status).toBe(201);
    } finally {
      typed.close();
    }
  });

  test("remove: 200, version +1, link_removed; a missing link is 404", async () => {
    const a = await api.task();
    const b = await api.task();
    await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id });
    const r = await api.del(`/cards/${a.id}/links/related/${b.id}`);
    expect(r.status).toBe(200);
    expect(r.body.links).toEqual([]);
    expect(r.body.version).toBe(3);
    expect((await api.del(`/cards/${a.id}/links/related/${b.id}`)).status).toBe(404);
    // a link type the workspace does not have is the mistake, as on add: 422 with the link types
    const typo = await api.del(`/cards/${a.id}/links/relatd/${b.id}`);
    expect([typo.status, typo.body.error, typo.body.field]).toEqual([422, "validation_failed", "type_id"]);
    expect(typo.body.valid_options).toContain("related");
  });

  test("removing a link from its other end is 404 naming the card that holds it and the call that removes it there", async () => {
    const a = await api.task();
    const b = await api.task();
    const c = await api.task();
    await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id });
    await api.post(`/cards/${b.id}/links`, { type_id: "depends-on", target: c.id });
    const r = await api.del(`/cards/${b.id}/links/related/${a.id}`);
    expect(r.status).toBe(404);
    expect(r.body.valid_options).toEqual([`depends-on/${c.id}`]);
    // before: no hint, and b shows no related link to tell why
    expect(r.body.hint).toContain(`cards cards links remove ${a.id} related ${b.id}`);
    expect(r.body.hint).toContain(`DELETE /cards/${a.id}/links/related/${b.id}`);
    expect((await api.del(`/cards/${a.id}/links/related/${b.id}`)).status).toBe(200);
    const none = await api.del(`/cards/${b.id}/links/related/${c.id}`);
    expect(none.status).toBe(404);
    expect(none.body.hint).not.toContain("stored on");
  });

  test("blocked while a depends-on or blocked-by target is not done; other types are inert", async () => {
    const fresh = await testApi();
    const signals: CardEvent[] = [];
    fresh.svc.subscribe((e) => { if (e.type === "card_blocked" || e.type === "card_unblocked") signals.push(e); });
    try {
      const a = await fresh.task({ title: "a" });
      const dep = await fresh.task({ title: "dep", status: "review" });
      const other = await fresh.task({ title: "other" });
      await fresh.post(`/cards/${a.id}/links`, { type_id: "related", target: other.id });
      expect(signals).toEqual([]);
      expect((await fresh.get("/cards?blocked=true")).body.items).toEqual([]);
      await fresh.post(`/cards/${a.id}/links`, { type_id: "depends-on", target: dep.id });
      expect(signals.map((e) => [e.type, e.card_id, e.diff])).toEqual([["card_blocked", a.id, { blockers: [dep.id] }]]);
      expect((await fresh.get("/cards?blocked=true")).body.items.map((c: any) => c.id)).toEqual([a.id]);
      // a second blocker does not re-fire
      const dep2 = await fresh.task({ title: "dep2" });
      await fresh.post(`/cards/${a.id}/links`, { type_id: "blocked-by", target: dep2.id });
      expect(signals.length).toBe(1);
      // blocker reaches done: still blocked by dep2
      await fresh.patch(`/cards/${dep.id}`, { version: 1, status: "done" });
      expect(signals.length).toBe(1);
      // last blocker deleted: unblocked, once
      await fresh.del(`/cards/${dep2.id}`);
      expect(signals.map((e) => e.type)).toEqual(["card_blocked", "card_unblocked"]);
      expect((await fresh.get("/cards?blocked=false&limit=200")).body.items.map((c: any) => c.id)).toContain(a.id);
      // blocker moves out of done: blocked again
      await fresh.patch(`/cards/${dep.id}`, { version: 2, status: "todo" });
      expect(signals.map((e) => e.type)).toEqual(["card_blocked", "card_unblocked", "card_blocked"]);
      // removing the link unblocks
      await fresh.del(`/cards/${a.id}/links/depends-on/${dep.id}`);
      expect(signals.map((e) => e.type)).toEqual(["card_blocked", "card_unblocked", "card_blocked", "card_unblocked"]);
    } finally {
      fresh.close();
    }
  });

  test("blocking signals are not in the durable feed unless persisted", async () => {
    const fresh = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.persist_conditions = ["card_blocked"]; } });
    try {
      const a = await fresh.task();
      const b = await fresh.task();
      await fresh.post(`/cards/${a.id}/links`, { type_id: "depends-on", target: b.id });
      expect((await fresh.get("/events?types=card_blocked")).body.items.length).toBe(1);
      await fresh.del(`/cards/${a.id}/links/depends-on/${b.id}`);
      expect((await fresh.get("/events?types=card_unblocked")).body.items.length).toBe(0);
    } finally {
      fresh.close();
    }
  });

  test("has_link and link_target filter the list", async () => {
    const a = await api.task();
    const b = await api.task();
    await api.post(`/cards/${a.id}/links`, { type_id: "parent", target: b.id });
    expect((await api.get("/cards?has_link=parent&limit=200")).body.items.map((c: any) => c.id)).toContain(a.id);
    expect((await api.get(`/cards?link_target=${b.id}`)).body.items.map((c: any) => c.id)).toEqual([a.id]);
  });

  test("has_link with link_target means one link of that type to that card: the children of an epic (before: any parent link and any link to it)", async () => {
    const [e1, e2, child, other] = [await api.task(), await api.task(), await api.task(), await api.task()];
    await api.post(`/cards/${child.id}/links`, { type_id: "parent", target: e1.id });
    await api.post(`/cards/${other.id}/links`, { type_id: "parent", target: e2.id });
    await api.post(`/cards/${other.id}/links`, { type_id: "related", target: e1.id });
    expect((await api.get(`/cards?has_link=parent&link_target=${e1.id}`)).body.items.map((c: any) => c.id)).toEqual([child.id]);
    expect((await api.get(`/cards?link_target=${e1.id}`)).body.items.map((c: any) => c.id).sort()).toEqual([child.id, other.id].sort());
    expect((await api.get(`/boards/main/counts?has_link=parent&link_target=${e1.id}`)).body.total).toBe(1);
  });

  test("has_link still finds the links of a type the definitions no longer declare; an unknown type is 422", async () => {
    const ws = await testApi({
      edit: (f) => { (f["definitions/workspace.json"] as any).link_types.push({ id: "mentions", name: "Mentions", type: "directional" }); },
    });
    try {
      const a = await ws.task();
      const b = await ws.task();
      expect((await ws.post(`/cards/${a.id}/links`, { type_id: "mentions", target: b.id })).status).toBe(201);
      const file = `${ws.dir}/definitions/workspace.json`;
      const def = JSON.parse(readFileSync(file, "utf8"));
      def.link_types = def.link_types.filter((t: { id: string }) => t.id !== "mentions");
      writeFileSync(file, JSON.stringify(def));
      expect((await ws.post("/workspace/reload")).status).toBe(200);
      // the link stays (history), and a filter on its type still finds it
      const held = await ws.get("/cards?has_link=mentions");
      expect([held.status, held.body.items.map((c: any) => c.id)]).toEqual([200, [a.id]]);
      const typo = await ws.get("/cards?has_link=mentoins");
      expect([typo.status, typo.body.error, typo.body.valid_options.includes("mentions")]).toEqual([422, "validation_failed", false]);
    } finally {
      ws.close();
    }
  });
});

describe("blocking loops", () => {
  test("a blocking link that would close a loop is refused naming the loop; other link types, and loops of them, are not", async () => {
    const chain = [await api.task(), await api.task(), await api.task(), await api.task()];
    // 0 waits on 1 (depends-on), 1 on 2 (blocked-by), 2 on 3
    for (let i = 0; i < 3; i++) expect((await api.post(`/cards/${chain[i]!.id}/links`, { type_id: i % 2 ? "blocked-by" : "depends-on", target: chain[i + 1]!.id })).status).toBe(201);
    for (const type_id of ["depends-on", "blocked-by"]) {
      const loop = await api.post(`/cards/${chain[3]!.id}/links`, { type_id, target: chain[0]!.id });
      expect([loop.status, loop.body.error, loop.body.field]).toEqual([422, "validation_failed", "target"]);
      expect(loop.body.message).toBe(`${chain[3]!.id} would wait on ${chain[0]!.id}, which already waits on it (${chain.map((c) => c.id).join(" -> ")}): every card of that loop would stay blocked for good`);
    }
    const two = await api.post(`/cards/${chain[1]!.id}/links`, { type_id: "depends-on", target: chain[0]!.id });
    expect(two.status).toBe(422);
    // nothing was written: the last card is not blocked by the first
    expect((await api.get(`/cards/${chain[3]!.id}`)).body.links).toEqual([]);
    // a link that closes no loop, and a loop of links that block nothing, are fine
    expect((await api.post(`/cards/${chain[3]!.id}/links`, { type_id: "related", target: chain[0]!.id })).status).toBe(201);
    expect((await api.post(`/cards/${chain[0]!.id}/links`, { type_id: "depends-on", target: chain[3]!.id })).status).toBe(201);
  });
});

describe("comments", () => {
  test("add 201 and edit 200, each version +1 with comment_id in the diff", async () => {
    const c = await api.task();
    const a = await api.post(`/cards/${c.id}/comments`, { body: "handoff: tests pass" }, as("agent-1"));
    expect(a.status).toBe(201);
    expect(a.body.version).toBe(2);
    const comment = a.body.comments[0];
    expect(comment).toMatchObject({ author: "agent-1", body: "handoff: tests pass" });
    expect(comment.id).toMatch(/^cmt_/);
    const e = await api.patch(`/cards/${c.id}/comments/${comment.id}`, { body: "handoff: all tests pass" });
    expect(e.status).toBe(200);
    expect(e.body.version).toBe(3);
    expect(e.body.comments[0].edited_at).toBeString();
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items.slice(1);
    expect(ev.map((x: CardEvent) => [x.type, x.diff.comment_id])).toEqual([["comment_added", comment.id], ["comment_edited", comment.id]]);
  });

  test("an empty body is 422, an unknown comment 404, over 64 KiB 413", async () => {
    const c = await api.task();
    expect((await api.post(`/cards/${c.id}/comments`, { body: "  " })).status).toBe(422);
    expect((await api.patch(`/cards/${c.id}/comments/cmt_nope`, { body: "x" })).status).toBe(404);
    expect((await api.post(`/cards/${c.id}/comments`, { body: "x".repeat(65 * 1024) })).status).toBe(413);
  });

  test("a body of zero-width characters is empty; control characters are refused (tab and line breaks are fine)", async () => {
    const c = await api.task();
    for (const body of ["\u200b", "\u200b \ufeff"]) expect((await api.post(`/cards/${c.id}/comments`, { body })).body.message).toBe("comment body is empty");
    for (const [body, code] of [["nul\u0000", "U+0000"], ["\u001b]0;pwned\u0007", "U+001B"], ["c1 \u009b2J", "U+009B"]]) {
      const r = await api.post(`/cards/${c.id}/comments`, { body });
      expect([r.status, r.body.error, r.body.message]).toEqual([422, "validation_failed", `comment body holds a control character (${code}); tabs and line breaks are fine`]);
    }
    const ok = await api.post(`/cards/${c.id}/comments`, { body: "line one\n\tindented\r\nthree" });
    expect(ok.status).toBe(201);
    const first = ok.body.comments[0];
    expect((await api.patch(`/cards/${c.id}/comments/${first.id}`, { body: "\u001b[2J" })).status).toBe(422); // an edit too
  });
});

describe("repeating entries", () => {
  test("append returns {entry_id, card}; update merges; remove; version +1 each", async () => {
    const c = await api.task();
    const a = await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { note: "tried X" } });
    expect(a.status).toBe(201);
    expect(a.body.entry_id).toMatch(/^ent_/);
    expect(a.body.card.version).toBe(2);
    expect(a.body.card.fields.evidence).toEqual([{ entry_id: a.body.entry_id, note: "tried X" }]);
    const u = await api.patch(`/cards/${c.id}/fields/evidence/${a.body.entry_id}`, { version: 2, entry: { by: "agent-1" } });
    expect(u.status).toBe(200);
    expect(u.body.fields.evidence).toEqual([{ entry_id: a.body.entry_id, note: "tried X", by: "agent-1" }]);
    const d = await api.del(`/cards/${c.id}/fields/evidence/${a.body.entry_id}?version=3`);
    expect(d.status).toBe(200);
    expect(d.body.fields.evidence).toBeUndefined();
    expect(d.body.version).toBe(4);
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items.slice(1);
    expect(ev.map((x: CardEvent) => x.type)).toEqual(["item_appended", "item_updated", "item_removed"]);
    expect(ev[1].diff).toMatchObject({ field: "evidence", entry_id: a.body.entry_id, before: { note: "tried X" }, after: { by: "agent-1" } });
  });

  test("entries are validated against item_fields; wrong field, stale version, unknown entry", async () => {
    const c = await api.task();
    const missing = await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { at: "yesterday" } });
    expect(missing.status).toBe(422);
    const unknownKey = await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { note: "x", mood: "good" } });
    expect(unknownKey.body.error).toBe("unknown_field");
    const notRepeating = await api.post(`/cards/${c.id}/fields/priority/append`, { version: 1, entry: { note: "x" } });
    expect(notRepeating.status).toBe(422);
    expect(notRepeating.body.valid_options).toEqual(["evidence"]);
    expect((await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 9, entry: { note: "x" } })).status).toBe(409);
    expect((await api.patch(`/cards/${c.id}/fields/evidence/ent_nope`, { version: 1, entry: { note: "y" } })).status).toBe(404);
    // an unknown entry id names the card's entries (before: no options)
    const one = (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { note: "x" } })).body;
    const nope = await api.patch(`/cards/${c.id}/fields/evidence/ent_nope`, { version: 2, entry: { note: "y" } });
    expect([nope.status, nope.body.valid_options]).toEqual([404, [one.entry_id]]);
    expect((await api.del(`/cards/${c.id}/fields/evidence/ent_nope?version=2`)).body.valid_options).toEqual([one.entry_id]);
  });

  test("append, update and remove require the version (DECISIONS: {version, entry}, ?version=N)", async () => {
    const c = await api.task();
    const a = await api.post(`/cards/${c.id}/fields/evidence/append`, { entry: { note: "x" } });
    expect([a.status, a.body.error, a.body.field]).toEqual([422, "validation_failed", "version"]);
    const added = (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 1, entry: { note: "x" } })).body;
    const u = await api.patch(`/cards/${c.id}/fields/evidence/${added.entry_id}`, { entry: { note: "y" } });
    expect([u.status, u.body.error, u.body.field]).toEqual([422, "validation_failed", "version"]);
    const d = await api.del(`/cards/${c.id}/fields/evidence/${added.entry_id}`);
    expect([d.status, d.body.error, d.body.field]).toEqual([422, "validation_failed", "version"]);
    expect(d.body.hint).toContain("?version=");
    expect((await api.get(`/cards/${c.id}`)).body).toMatchObject({ version: 2, fields: { evidence: [{ note: "x" }] } });
  });
});

describe("history and search", () => {
  test("history without since is the card's latest events (oldest first); since pages forward", async () => {
    const c = await api.task({ title: "long-lived" });
    for (let i = 1; i <= 104; i++) await api.post(`/cards/${c.id}/comments`, { body: `note ${i}` });
    const latest = (await api.get(`/cards/${c.id}/history`)).body.items;
    expect(latest.length).toBe(100);
    expect(latest.at(-1).summary).toContain("note 104");
    expect(latest[0].summary).toContain("note 5");
    const first = (await api.get(`/cards/${c.id}/events?limit=1`)).body.items[0];
    const forward = (await api.get(`/cards/${c.id}/history?since=${first.id}&limit=2`)).body.items;
    expect(forward.map((h: any) => h.summary)).toEqual([expect.stringContaining("note 1"), expect.stringContaining("note 2")]);
  });

  test("history: {at, actor, type, summary} in id order", async () => {
    const c = await api.task({ title: "history" });
    await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    await api.patch(`/cards/${c.id}`, { version: 2, status: "todo" }, as("agent-1"));
    const h = (await api.get(`/cards/${c.id}/history`)).body.items;
    expect(h.map((x: any) => x.summary)).toEqual(['created task "history" in backlog', "claimed by agent-1", "moved from backlog to todo"]);
    expect(Object.keys(h[0])).toEqual(["at", "actor", "type", "summary"]);
    expect((await api.get("/cards/card_0000000000000002/history")).status).toBe(404);
  });

  test("history words owner changes from the owner's side: another actor assigns and releases", async () => {
    const c = await api.task({ title: "assigned" });
    await api.post("/cards/take-next", { type_id: "task", filter: { id: c.id }, assign_to: "agent-2" }, as("agent-1"));
    await api.post(`/cards/${c.id}/release`, { force: true }, as("agent-1"));
    await api.post(`/cards/${c.id}/claim`, { version: 3 }, as("agent-2"));
    await api.post(`/cards/${c.id}/release`, {}, as("agent-2"));
    const h = (await api.get(`/cards/${c.id}/history`)).body.items.slice(1);
    // before: "claimed by agent-2" and "released by agent-2" under agent-1's name
    expect(h.map((x: any) => [x.actor, x.summary])).toEqual([
      ["agent-1", "assigned to agent-2"], ["agent-1", "released agent-2's claim"],
      ["agent-2", "claimed by agent-2"], ["agent-2", "released by agent-2"],
    ]);
  });

  test("q matches title and searchable fields only, and full or short ids", async () => {
    const c = await api.task({ title: "Zebra migration", fields: { description: "move the quokka tables" } });
    await api.post("/cards", { type_id: "bug", title: "Unrelated", fields: { steps: "the quokka bites", environment: "okapi" } });
    const ids = async (q: string) => (await api.get(`/cards?q=${encodeURIComponent(q)}&limit=200`)).body.items.map((x: any) => x.id);
    expect(await ids("zebra")).toEqual([c.id]);
    expect((await ids("quokka")).length).toBe(2); // bug has no searchable_fields: every value indexed
    expect(await ids("okapi")).not.toContain(c.id);
    expect(await ids(c.id)).toEqual([c.id]);
    expect(await ids(c.id.slice(5, 13))).toEqual([c.id]);
    // ids match in any case, as words do
    expect(await ids(c.id.slice(5, 13).toUpperCase())).toEqual([c.id]);
    expect(await ids(c.id.toUpperCase())).toEqual([c.id]);
  });
});
