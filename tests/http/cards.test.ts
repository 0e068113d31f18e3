/** Card writes over HTTP: SPEC "Card", "States and transitions", POST/GET/PATCH/DELETE /cards. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";

let api: TestApi;
beforeAll(async () => { api = await testApi(); });
afterAll(() => api.close());

describe("POST /cards", () => {
  test("creates with version 1, created_by the actor, timestamps equal, 201", async () => {
    const r = await api.post("/cards", { type_id: "task", title: "Write docs" }, { "x-service-actor": "agent-1" });
    expect(r.status).toBe(201);
    const c = r.body;
    expect(c.id).toMatch(/^card_[0-9a-f]{16}$/);
    expect(c.version).toBe(1);
    expect(c.created_by).toBe("agent-1");
    expect(c.created_at).toBe(c.updated_at);
    expect(c.status_since).toBe(c.created_at);
    expect(c.workspace_id).toBe("agent-queue");
    expect(c.schema_version).toBe(2);
    expect(c.owner).toBeUndefined();
    expect(c.fields).toEqual({ priority: "normal" }); // default applied
  });

  test("a missing required key is named as missing; an unknown key as unknown, with the allowed keys", async () => {
    const noType = await api.post("/cards", { title: "no type" });
    expect(noType.status).toBe(422);
    expect(noType.body).toEqual({ error: "validation_failed", message: "create card: type_id is required", field: "type_id" });
    const bogus = await api.post("/cards", { type_id: "task", title: "x", bogus: 1 });
    expect(bogus.status).toBe(422);
    expect(bogus.body.message).toBe('create card: unknown key "bogus"');
    expect(bogus.body.field).toBe("bogus");
    expect(bogus.body.valid_options).toContain("type_id");
    const made = await api.post("/cards", { type_id: "task", title: "to patch" });
    const noVersion = await api.patch(`/cards/${made.body.id}`, { title: "renamed" });
    expect(noVersion.status).toBe(422);
    expect(noVersion.body).toMatchObject({ error: "validation_failed", message: "patch card: version is required", field: "version" });
    expect(noVersion.body.hint).toContain("current version");
  });

  test("an unknown key is named before the missing one it explains; a field sent at the top level is pointed into fields", async () => {
    const typo = await api.post("/cards", { type: "task", title: "x" });
    expect(typo.body).toMatchObject({ error: "validation_failed", message: 'create card: unknown key "type"', field: "type" });
    const top = await api.post("/cards", { type_id: "task", title: "x", priority: "high" });
    expect(top.body).toMatchObject({ message: 'create card: unknown key "priority"', field: "priority" });
    expect(top.body.hint).toContain('priority is a field (of task): send it inside fields');
    const made = await api.task();
    const patchTop = await api.patch(`/cards/${made.id}`, { version: made.version, severity: "major" });
    expect(patchTop.body.hint).toContain("severity is a field (of bug)");
    expect((await api.post("/cards", { type_id: "task", title: "x", bogus: 1 })).body.hint).toBeUndefined();
  });

  test('"me" as an owner or assign_to names the caller; no user may be called "me"', async () => {
    const made = await api.task();
    const owned = await api.patch(`/cards/${made.id}`, { version: made.version, owner: "me" }, { "x-service-actor": "agent-1" });
    expect([owned.status, owned.body.owner]).toEqual([200, "agent-1"]);
    await api.task({ title: "for me", status: "todo" });
    const taken = await api.post("/cards/take-next", { assign_to: "me", filter: { title: "for me" } }, { "x-service-actor": "agent-2" });
    expect(taken.body.card?.owner).toBe("agent-2");
    const reg = await api.post("/users", { id: "me", kind: "human" });
    expect([reg.status, reg.body.error, reg.body.field]).toEqual([422, "validation_failed", "id"]);
    const kind = await api.post("/users", { id: "robo", kind: "robot" });
    expect(kind.body).toMatchObject({ message: 'register user: kind: must be "human" or "agent"', valid_options: ["human", "agent"] });
    // a missing kind names its options too (before: "kind is required" alone)
    expect((await api.post("/users", { id: "robo" })).body).toMatchObject({ message: "register user: kind is required", field: "kind", valid_options: ["human", "agent"] });
  });

  test('a multiple user default naming "me" beside a user is that set for the writer, each once (it loaded, then refused every create by that user)', async () => {
    const own = await testApi({
      edit: (f) => {
        const review = f["definitions/card-types/review.json"];
        review.fields.find((x: { id: string }) => x.id === "reviewers").default = ["me", "ada"];
      },
    });
    try {
      const by = (actor: string) => own.post("/cards", { type_id: "review", title: "r" }, { "x-service-actor": actor });
      const ada = await by("ada");
      expect([ada.status, ada.body.fields.reviewers]).toEqual([201, ["ada"]]);
      expect((await by("agent-1")).body.fields.reviewers).toEqual(["agent-1", "ada"]);
      // given by the writer, the same two are one value twice
      const given = await own.post("/cards", { type_id: "review", title: "r", fields: { reviewers: ["me", "ada"] } }, { "x-service-actor": "ada" });
      expect([given.status, given.body.message]).toEqual([422, 'duplicate value "ada" in reviewers']);
    } finally {
      own.close();
    }
  });

  test("status defaults to the first workspace column, or the first allowed column", async () => {
    expect((await api.post("/cards", { type_id: "task", title: "t" })).body.status).toBe("backlog");
    expect((await api.post("/cards", { type_id: "review", title: "r" })).body.status).toBe("todo");
  });

  test("a requested status must be a column and allowed for the type", async () => {
    expect((await api.post("/cards", { type_id: "task", title: "t", status: "doing" })).body.status).toBe("doing");
    const bad = await api.post("/cards", { type_id: "task", title: "t", status: "nope" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("validation_failed");
    expect(bad.body.field).toBe("status");
    expect(bad.body.valid_options).toEqual(["backlog", "todo", "doing", "review", "done"]);
    const notAllowed = await api.post("/cards", { type_id: "review", title: "r", status: "backlog" });
    expect(notAllowed.status).toBe(422);
    expect(notAllowed.body.valid_options).toEqual(["todo", "doing", "review", "done"]);
  });

  test("type_id and title are required; unknown type lists the types", async () => {
    const noType = await api.post("/cards", { title: "x" });
    expect(noType.status).toBe(422);
    expect(noType.body.field).toBe("type_id");
    const noTitle = await api.post("/cards", { type_id: "task" });
    expect(noTitle.status).toBe(422);
    expect(noTitle.body.field).toBe("title");
    const unknown = await api.post("/cards", { type_id: "epic", title: "x" });
    expect(unknown.status).toBe(422);
    expect(unknown.body.valid_options.sort()).toEqual(["bug", "review", "task"]);
  });

  test("required fields are enforced at create", async () => {
    const r = await api.post("/cards", { type_id: "bug", title: "crash" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_failed");
    expect(r.body.field).toBe("steps");
  });

  test("owner cannot be set at create", async () => {
    const r = await api.post("/cards", { type_id: "task", title: "x", owner: "ada" });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("owner");
    // says how to get an owner, not only that the key is unknown
    expect(r.body.message).toBe("owner cannot be set at create");
    expect(r.body.hint).toContain("claim");
  });

  test("an unknown body key is rejected with the allowed keys", async () => {
    const r = await api.post("/cards", { type_id: "task", title: "x", colour: "red" });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("colour");
    expect(r.body.valid_options).toContain("fields");
  });

  test("schema_version must be the type's current version", async () => {
    const r = await api.post("/cards", { type_id: "task", title: "x", schema_version: 1 });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("schema_version_mismatch");
    expect(r.body.valid_options).toEqual([2]);
    expect((await api.post("/cards", { type_id: "task", title: "x", schema_version: 2 })).status).toBe(201);
  });

  test("dry_run answers 200 with Dry-Run: true and stores nothing", async () => {
    const before = (await api.get("/events?limit=500")).body.items.length;
    const r = await api.post("/cards", { type_id: "task", title: "dry", dry_run: true });
    expect(r.status).toBe(200);
    expect(r.headers.get("dry-run")).toBe("true");
    expect(r.body.title).toBe("dry");
    expect((await api.get(`/cards/${r.body.id}`)).status).toBe(404);
    expect((await api.get("/events?limit=500")).body.items.length).toBe(before);
  });

  test("a failed dry run reports the same error as the real write", async () => {
    const r = await api.post("/cards", { type_id: "task", title: "x", fields: { priority: "meh" }, dry_run: true });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("unknown_enum");
  });

  test("card_link targets must exist and match target_type", async () => {
    const bug = (await api.post("/cards", { type_id: "bug", title: "b", fields: { steps: "1. run" } })).body;
    const missing = await api.post("/cards", { type_id: "task", title: "x", fields: { parent: "card_0000000000000000" } });
    expect(missing.status).toBe(422);
    expect(missing.body.error).toBe("target_card_missing");
    const wrong = await api.post("/cards", { type_id: "task", title: "x", fields: { parent: bug.id } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toBe("target_card_type_mismatch");
    expect(wrong.body.valid_options).toEqual(["task"]);
    const parent = await api.task();
    expect((await api.post("/cards", { type_id: "task", title: "x", fields: { parent: parent.id } })).status).toBe(201);
  });

  test("card_created carries the card in its diff", async () => {
    const c = await api.task({ title: "evented" });
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items;
    expect(ev.length).toBe(1);
    expect(ev[0].type).toBe("card_created");
    expect(ev[0].diff.card.id).toBe(c.id);
    expect(ev[0].diff.card.title).toBe("evented");
    expect(ev[0].actor).toBe("ada");
    expect(ev[0].scope).toBe("card");
    expect(ev[0].card_id).toBe(c.id);
  });
});

describe("GET /cards/{id}", () => {
  test("returns the full card with links and comments; unknown is 404", async () => {
    const c = await api.task();
    const r = await api.get(`/cards/${c.id}`);
    expect(r.status).toBe(200);
    expect(r.body.links).toEqual([]);
    expect(r.body.comments).toEqual([]);
    const miss = await api.get("/cards/card_ffffffffffffffff");
    expect(miss.status).toBe(404);
    expect(miss.body.error).toBe("not_found");
  });
});

describe("PATCH /cards/{id}", () => {
  test("version is required and checked; a stale version is 409 with the current card", async () => {
    const c = await api.task();
    expect((await api.patch(`/cards/${c.id}`, { title: "x" })).status).toBe(422);
    const stale = await api.patch(`/cards/${c.id}`, { version: 7, title: "x" });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toBe("version_conflict");
    expect(stale.body.card.id).toBe(c.id);
    expect(stale.body.card.version).toBe(1);
  });

  test("a no-op patch keeps the version and emits nothing", async () => {
    const c = await api.task({ title: "same" });
    const r = await api.patch(`/cards/${c.id}`, { version: 1, title: "same", fields: { priority: "normal" }, tags: [] });
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(1);
    expect(r.body.updated_at).toBe(c.updated_at);
    expect((await api.get(`/cards/${c.id}/events`)).body.items.length).toBe(1);
  });

  test("a patch naming the status and owner the card already has is a no-op too: no event, version and status_since kept", async () => {
    const c = await api.task({ status: "todo" });
    const owned = (await api.patch(`/cards/${c.id}`, { version: 1, owner: "agent-1" })).body;
    const r = await api.patch(`/cards/${c.id}`, { version: owned.version, status: "todo", owner: "agent-1" });
    expect(r.status).toBe(200);
    expect([r.body.version, r.body.status_since, r.body.updated_at]).toEqual([owned.version, c.status_since, owned.updated_at]);
    expect((await api.get(`/cards/${c.id}/events`)).body.items.map((e: any) => e.type)).toEqual(["card_created", "owner_changed"]);
  });

  test("title, fields, tags, owner and status in one patch: version +1, one event each", async () => {
    const c = await api.task();
    const r = await api.patch(`/cards/${c.id}`, {
      version: 1, title: "renamed", fields: { priority: "high" }, tags: ["backend"], owner: "agent-1", status: "todo",
    });
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(2);
    expect(r.body.owner).toBe("agent-1");
    const types = (await api.get(`/cards/${c.id}/events`)).body.items.map((e: any) => [e.type, e.diff]);
    expect(types.slice(1)).toEqual([
      ["field_updated", { field: "title", before: "a task", after: "renamed" }],
      ["field_updated", { field: "priority", before: "normal", after: "high" }],
      ["tags_changed", { before: [], after: ["backend"] }],
      ["owner_changed", { before: null, after: "agent-1" }],
      ["status_changed", { before: "backlog", after: "todo" }],
    ]);
  });

  test("status_since moves only on a real status change; updated_at on every mutation", async () => {
    const c = await api.task();
    await Bun.sleep(3);
    const a = (await api.patch(`/cards/${c.id}`, { version: 1, title: "t2" })).body;
    expect(a.status_since).toBe(c.status_since);
    expect(a.updated_at > c.updated_at).toBe(true);
    await Bun.sleep(3);
    const b = (await api.patch(`/cards/${c.id}`, { version: 2, status: "todo" })).body;
    expect(b.status_since).toBe(b.updated_at);
    expect(b.status_since > c.status_since).toBe(true);
  });

  test("status_since is not client-writable", async () => {
    const c = await api.task();
    const r = await api.patch(`/cards/${c.id}`, { version: 1, status_since: "2020-01-01T00:00:00Z" });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("status_since");
  });

  test("owner must be a registered user; empty string or null clears it", async () => {
    const c = await api.task();
    const bad = await api.patch(`/cards/${c.id}`, { version: 1, owner: "ghost" });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("unknown_user");
    expect(bad.body.hint).toContain("POST /v1/users");
    const set = (await api.patch(`/cards/${c.id}`, { version: 1, owner: "agent-2" })).body;
    expect(set.owner).toBe("agent-2");
    const cleared = (await api.patch(`/cards/${c.id}`, { version: 2, owner: "" })).body;
    expect(cleared.owner).toBeUndefined();
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items.at(-1);
    expect(ev.diff).toEqual({ before: "agent-2", after: null });
  });

  test("enforced graph: an illegal move is transition_illegal with the board's allowed columns", async () => {
    const c = await api.task();
    const r = await api.patch(`/cards/${c.id}`, { version: 1, status: "done" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("transition_illegal");
    expect(r.body.valid_options).toEqual(["todo"]);
    expect((await api.get(`/cards/${c.id}`)).body.status).toBe("backlog");
  });

  test("transition_illegal offers only the moves the card's type allows too", async () => {
    // review cards may be in todo, doing, review, done; the board lets todo go to doing or backlog
    const r = (await api.post("/cards", { type_id: "review", title: "to review" })).body;
    expect(r.status).toBe("todo");
    const bad = await api.patch(`/cards/${r.id}`, { version: 1, status: "done" });
    expect(bad.body.error).toBe("transition_illegal");
    expect(bad.body.valid_options).toEqual(["doing"]); // before: ["doing", "backlog"], and backlog was refused
    expect(bad.body.hint).toContain("allowed from todo: doing;");
    expect((await api.patch(`/cards/${r.id}`, { version: 1, status: bad.body.valid_options[0] })).status).toBe(200);
  });

  test("force: true skips the graph check but not the column checks", async () => {
    const c = await api.task();
    expect((await api.patch(`/cards/${c.id}`, { version: 1, status: "done", force: true })).body.status).toBe("done");
    const r = await api.patch(`/cards/${c.id}`, { version: 2, status: "nowhere", force: true });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("validation_failed");
  });

  test("allowed_columns holds even when transitions are not enforced", async () => {
    const lax = await testApi({ edit: (f) => { delete (f["definitions/boards/main.json"] as any).settings; } });
    try {
      const t = await lax.task();
      expect((await lax.patch(`/cards/${t.id}`, { version: 1, status: "done" })).status).toBe(200); // not enforced
      const r = (await lax.post("/cards", { type_id: "review", title: "r" })).body;
      const bad = await lax.patch(`/cards/${r.id}`, { version: 1, status: "backlog" });
      expect(bad.status).toBe(422);
      expect(bad.body.error).toBe("validation_failed");
    } finally {
      lax.close();
    }
  });

  test("workspace enforce_transitions applies the graph of the governing board", async () => {
    const ws = await testApi({
      edit: (f) => {
        (f["definitions/workspace.json"] as any).settings.enforce_transitions = true;
        delete (f["definitions/boards/main.json"] as any).settings;
      },
    });
    try {
      const t = await ws.task();
      expect((await ws.patch(`/cards/${t.id}`, { version: 1, status: "review" })).body.error).toBe("transition_illegal");
    } finally {
      ws.close();
    }
  });

  test("repeating fields cannot be patched", async () => {
    const c = await api.task();
    const r = await api.patch(`/cards/${c.id}`, { version: 1, fields: { evidence: [{ note: "x" }] } });
    expect(r.status).toBe(422);
    expect(r.body.field).toBe("evidence");
  });

  test("dry_run validates, answers the would-be card with Dry-Run: true, and stores nothing", async () => {
    const c = await api.task();
    const r = await api.patch(`/cards/${c.id}`, { version: 1, title: "maybe", dry_run: true });
    expect(r.status).toBe(200);
    expect(r.headers.get("dry-run")).toBe("true");
    expect(r.body.title).toBe("maybe");
    expect(r.body.version).toBe(2);
    const now = (await api.get(`/cards/${c.id}`)).body;
    expect(now.title).toBe("a task");
    expect(now.version).toBe(1);
  });

  test("field_updated for a removed field has after: null", async () => {
    const c = await api.task({ fields: { branch: "feat/x" } });
    const r = await api.patch(`/cards/${c.id}`, { version: 1, fields: { branch: null } });
    expect(r.body.fields.branch).toBeUndefined();
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items.at(-1);
    expect(ev.diff).toEqual({ field: "branch", before: "feat/x", after: null });
  });
});

describe("DELETE /cards/{id}", () => {
  test("version guard, the deleted card back, a tombstone event, 404 the second time", async () => {
    const c = await api.task();
    const stale = await api.del(`/cards/${c.id}?version=9`);
    expect(stale.status).toBe(409);
    expect(stale.body.card.id).toBe(c.id);
    const r = await api.del(`/cards/${c.id}?version=1`);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(c.id);
    expect((await api.del(`/cards/${c.id}`)).status).toBe(404);
    expect((await api.get(`/cards/${c.id}`)).status).toBe(404);
    const ev = (await api.get(`/cards/${c.id}/events`)).body.items;
    expect(ev.at(-1).type).toBe("card_deleted");
    expect(ev.at(-1).diff.card.id).toBe(c.id);
  });

  test("a malformed version is 400", async () => {
    const c = await api.task();
    expect((await api.del(`/cards/${c.id}?version=abc`)).status).toBe(400);
    // no card has version 0: a malformed guard, not a stale one (before: 409)
    const zero = await api.del(`/cards/${c.id}?version=0`);
    expect([zero.status, zero.body.error, zero.body.field]).toEqual([400, "bad_request", "version"]);
    expect((await api.get(`/cards/${c.id}`)).status).toBe(200);
  });
});

describe("errors that tell an agent what to do next (review 2026-11-25)", () => {
  const as = (actor: string) => ({ "x-service-actor": actor });

  test("a stale version on a card another actor took over names the owner", async () => {
    const c = await api.task();
    await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    await api.patch(`/cards/${c.id}`, { version: 2, owner: "agent-2" }, as("agent-2")); // a takeover
    const late = await api.patch(`/cards/${c.id}`, { version: 2, title: "mine?" }, as("agent-1"));
    expect([late.status, late.body.error]).toEqual([409, "version_conflict"]);
    // before: only "re-read the card and retry with its current version", read as leave to go on
    expect(late.body.hint).toContain("it is owned by agent-2, not you: if you held it, it was taken from you; leave it");
    const unowned = await api.task();
    expect((await api.patch(`/cards/${unowned.id}`, { version: 9, title: "x" })).body.hint).toBe("re-read it and retry with version 1 (the card in this error is the current one); it is unowned now: if you held it, it was released (its history says by whom), so claim it again before you go on");
  });

  test("a stale version on the caller's own card says it is still theirs (before: \"if that is not you, another actor took it\")", async () => {
    const c = await api.task();
    await api.post(`/cards/${c.id}/claim`, { version: 1 }, as("agent-1"));
    await api.patch(`/cards/${c.id}`, { version: 2, title: "one" }, as("agent-1"));
    const late = await api.patch(`/cards/${c.id}`, { version: 2, title: "two" }, as("agent-1"));
    expect([late.status, late.body.hint]).toEqual([409, "it is still yours: see what changed (the card in this error is the current one; its history says who changed it; a write of yours whose answer was lost counts too), then retry with version 3"]);
    // every write path says it: an entry append, a link, a release
    const entry = await api.post(`/cards/${c.id}/fields/evidence/append`, { version: 2, entry: { note: "n" } }, as("agent-1"));
    expect(entry.body.hint).toStartWith("it is still yours");
    expect((await api.post(`/cards/${c.id}/release`, { version: 2 }, as("agent-1"))).body.hint).toStartWith("it is still yours");
    // someone else steering the card is told whose it is
    expect((await api.patch(`/cards/${c.id}`, { version: 2, title: "x" }, as("ada"))).body.hint).toStartWith("it is owned by agent-1, not you");
  });

  test("a short id is pointed to q; an artifact upload to a type without artifact fields names the types that have one", async () => {
    const c = await api.task();
    const short = c.id.slice(5, 13);
    const miss = await api.get(`/cards/${short}`);
    expect([miss.status, miss.body.hint]).toEqual([404, `a short id is not a card id: find the card with q (cards cards list --q ${short}; GET /cards?q=${short}; tools: search_cards {"q": "${short}"})`]);
    const link = await api.post(`/cards/${c.id}/links`, { type_id: "related", target: short });
    expect(link.body).toMatchObject({ error: "target_card_missing", hint: expect.stringContaining("--q") });
    const review = await api.post("/cards", { type_id: "review", title: "r" });
    const put = await api.call("POST", `/cards/${review.body.id}/artifacts/output`, "bytes", { "content-type": "text/plain" });
    expect(put.body).toMatchObject({ error: "validation_failed", valid_options: [], hint: "card type review has no artifact field; file fields: task.output: keep a link or text in one of its fields instead" });
  });
});
