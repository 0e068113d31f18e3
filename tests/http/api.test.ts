/** Workspace routes, users, actors, idempotency, listing, events, and error envelopes over HTTP. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";
import { requestHash } from "../../src/service/index.ts";
import { join } from "node:path";

let api: TestApi;
beforeAll(async () => { api = await testApi(); });
afterAll(() => api.close());

describe("workspace routes", () => {
  test("GET /health gives version and workspace_id", async () => {
    const r = await api.get("/health");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: expect.any(String), workspace_id: "agent-queue" });
  });

  test("GET /workspace: workspace with registered users, card types, boards, schema versions; no views", async () => {
    const r = await api.get("/workspace");
    expect(Object.keys(r.body)).toEqual(["workspace", "card_types", "boards", "current_schema_versions"]);
    expect(r.body.workspace.users.map((u: any) => u.id)).toEqual(["ada", "agent-1", "agent-2"]);
    expect(r.body.workspace.users[0].created_at).toBeString();
    expect(r.body.workspace.settings.tag_policy).toBe("locked");
    expect(Object.keys(r.body.card_types).sort()).toEqual(["bug", "review", "task"]);
    expect(r.body.current_schema_versions).toEqual({ bug: 1, review: 1, task: 2 });
    expect(Object.keys(r.body.boards).sort()).toEqual(["bugs", "main"]);
    expect(r.body.views).toBeUndefined(); // views are declared, never routed
  });

  test("GET /boards/{id}: the definition; unknown is 404", async () => {
    const r = await api.get("/boards/main");
    expect(r.body.id).toBe("main");
    expect(r.body.wip_limits).toEqual({ doing: 3, review: 2 });
    const miss = await api.get("/boards/nope");
    expect(miss.status).toBe(404);
    expect(miss.body.error).toBe("not_found");
  });
});

describe("POST /users", () => {
  test("201 new, 200 the same again, 409 user_exists with other values", async () => {
    const a = await api.post("/users", { id: "bot-7", kind: "agent", display_name: "Bot 7" });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ id: "bot-7", kind: "agent", display_name: "Bot 7" });
    const again = await api.post("/users", { id: "bot-7", kind: "agent", display_name: "Bot 7" });
    expect(again.status).toBe(200);
    const clash = await api.post("/users", { id: "bot-7", kind: "human" });
    expect(clash.status).toBe(409);
    expect(clash.body.error).toBe("user_exists");
  });

  test("a display_name is one line without control characters; an id names the rule of ASCII letters", async () => {
    for (const display_name of ["Bob\u001b[2J", "Bob\u0000", "Bob\nSmith", "Bob\u009b"]) {
      const r = await api.post("/users", { id: "bob-x", kind: "human", display_name });
      expect([r.status, r.body.field, r.body.message]).toEqual([422, "display_name", expect.stringContaining("one line of text without control characters")]);
    }
    const id = await api.post("/users", { id: "jos\u00e9", kind: "human" });
    expect([id.status, id.body.message]).toEqual([422, expect.stringContaining("ASCII letters")]);
    expect((await api.post("/users", { id: "a.b@example.com", kind: "human", display_name: "Ana B\u00e9" })).status).toBe(201);
  });

  test("kind is checked; a registered user can then own cards", async () => {
    const bad = await api.post("/users", { id: "x", kind: "robot" });
    expect(bad.status).toBe(422);
    expect(bad.body.field).toBe("kind");
    await api.post("/users", { id: "owner-9", kind: "human" });
    const c = await api.task();
    expect((await api.patch(`/cards/${c.id}`, { version: 1, owner: "owner-9" })).body.owner).toBe("owner-9");
  });

  test("registered users persist across a restart", async () => {
    const { openTestService } = await import("../helpers/workspace.ts");
    await api.post("/users", { id: "keeper", kind: "agent" });
    const again = await openTestService(api.dir);
    try {
      expect(again.store.getUser("keeper")?.kind).toBe("agent");
    } finally {
      again.close();
    }
  });
});

describe("actor resolution", () => {
  test("header wins over CARDS_ACTOR, which wins over default_user; a body actor is ignored", async () => {
    const env = await testApi({ env: { CARDS_ACTOR: "from-env" } });
    try {
      expect((await env.task()).created_by).toBe("from-env");
      expect((await env.post("/cards", { type_id: "task", title: "x" }, { "x-service-actor": "from-header" })).body.created_by).toBe("from-header");
    } finally {
      env.close();
    }
    expect((await api.task()).created_by).toBe("ada");
  });

  test("no actor anywhere: writes are 403 actor_required, reads still work", async () => {
    const anon = await testApi({ edit: (f) => { delete (f["definitions/workspace.json"] as any).settings.default_user; } });
    try {
      const r = await anon.post("/cards", { type_id: "task", title: "x" });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe("actor_required");
      expect(r.body.hint).toContain("X-Service-Actor");
      expect((await anon.get("/cards")).status).toBe(200);
    } finally {
      anon.close();
    }
  });

  test("the actor is written to the event actor", async () => {
    const c = (await api.post("/cards", { type_id: "task", title: "x" }, { "x-service-actor": "someone" })).body;
    expect((await api.get(`/cards/${c.id}/events`)).body.items[0].actor).toBe("someone");
  });
});

describe("Idempotency-Key", () => {
  test("a replay returns the stored status and body and writes nothing", async () => {
    const h = { "idempotency-key": "create-1" };
    const a = await api.post("/cards", { type_id: "task", title: "once" }, h);
    const b = await api.post("/cards", { type_id: "task", title: "once" }, h);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.text).toBe(a.text);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    const list = (await api.get("/cards?q=once")).body.items;
    expect(list.length).toBe(1);
  });

  test("POST /users replays too: the first call's 201, its body, Idempotent-Replayed", async () => {
    const h = { "idempotency-key": "user-1" };
    const a = await api.post("/users", { id: "frank", kind: "agent" }, h);
    const b = await api.post("/users", { id: "frank", kind: "agent" }, h);
    expect([a.status, b.status, b.text, b.headers.get("idempotent-replayed")]).toEqual([201, 201, a.text, "true"]);
    // without a key, the same user again is a no-op: 200
    expect((await api.post("/users", { id: "frank", kind: "agent" })).status).toBe(200);
  });

  test("the same key with another body is 422 idempotency_key_reused", async () => {
    const h = { "idempotency-key": "create-2" };
    await api.post("/cards", { type_id: "task", title: "one" }, h);
    const r = await api.post("/cards", { type_id: "task", title: "two" }, h);
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("idempotency_key_reused");
  });

  test("a retry that serialises the same JSON again (whitespace, key order, nested too) replays; another value is still 422", async () => {
    const h = { "idempotency-key": "create-reserialised" };
    const a = await api.post("/cards", '{"type_id":"task","title":"same json","fields":{"estimate_hours":3,"description":"n"}}', h);
    expect(a.status).toBe(201);
    const b = await api.post("/cards", '{ "fields": { "description": "n", "estimate_hours": 3 },\n  "title": "same json", "type_id": "task" }', h);
    expect([b.status, b.text, b.headers.get("idempotent-replayed")]).toEqual([201, a.text, "true"]);
    expect((await api.get("/cards?q=same json")).body.items.length).toBe(1);
    const c = await api.post("/cards", '{"type_id":"task","title":"same json","fields":{"estimate_hours":4,"description":"n"}}', h);
    expect([c.status, c.body.error]).toEqual([422, "idempotency_key_reused"]);
  });

  test("a key stored with the hash of the body as sent (before bodies were compared as JSON) still replays that body", async () => {
    const { Database } = await import("bun:sqlite");
    const h = { "idempotency-key": "stored-raw" };
    const raw = '{"type_id":"task",  "title":"stored raw"}';
    const first = await api.post("/cards", raw, h);
    const db = new Database(join(api.dir, ".cards", "cards.db"));
    try {
      db.query("UPDATE idempotency SET request_hash = ? WHERE key LIKE '%stored-raw'").run(requestHash("POST", "/cards", raw, {}));
    } finally {
      db.close();
    }
    const again = await api.post("/cards", raw, h);
    expect([again.status, again.text, again.headers.get("idempotent-replayed")]).toEqual([201, first.text, "true"]);
  });

  test("a key older than 7 days is forgotten even before a prune removed it: the call runs as new (before: replayed, or 422, for good)", async () => {
    const { Database } = await import("bun:sqlite");
    const h = { "idempotency-key": "weekly-report" };
    const first = (await api.post("/cards", { type_id: "task", title: "weekly report" }, h)).body;
    const db = new Database(join(api.dir, ".cards", "cards.db"));
    try {
      db.query("UPDATE idempotency SET created_at = ? WHERE key LIKE '%weekly-report'").run(new Date(Date.now() - 8 * 24 * 3600 * 1000).toISOString());
    } finally {
      db.close();
    }
    const again = await api.post("/cards", { type_id: "task", title: "weekly report" }, h);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([201, null]);
    expect(again.body.id).not.toBe(first.id);
    // its answer is the key's record now: a repeat replays it
    const repeat = await api.post("/cards", { type_id: "task", title: "weekly report" }, h);
    expect([repeat.body.id, repeat.headers.get("idempotent-replayed")]).toEqual([again.body.id, "true"]);
  });

  test("works on PATCH and DELETE; a failed request is not stored", async () => {
    const c = await api.task();
    const h = { "idempotency-key": "patch-1" };
    const bad = await api.patch(`/cards/${c.id}`, { version: 5, title: "z" }, h);
    expect(bad.status).toBe(409);
    const ok = await api.patch(`/cards/${c.id}`, { version: 1, title: "z" }, { "idempotency-key": "patch-2" });
    const again = await api.patch(`/cards/${c.id}`, { version: 1, title: "z" }, { "idempotency-key": "patch-2" });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(ok.body.version);
    const d1 = await api.del(`/cards/${c.id}`, { "idempotency-key": "del-1" });
    const d2 = await api.del(`/cards/${c.id}`, { "idempotency-key": "del-1" });
    expect(d1.status).toBe(200);
    expect(d2.status).toBe(200);
    expect(d2.text).toBe(d1.text);
  });

  test("a key is 1 to 255 characters: 255 is taken, 256 is 400 naming the header", async () => {
    const ok = await api.post("/cards", { type_id: "task", title: "long key" }, { "idempotency-key": "k".repeat(255) });
    expect(ok.status).toBe(201);
    const long = await api.post("/cards", { type_id: "task", title: "longer key" }, { "idempotency-key": "k".repeat(256) });
    expect([long.status, long.body.error, long.body.field]).toEqual([400, "bad_request", "Idempotency-Key"]);
  });

  test("a key is printable ASCII: a UTF-8 one (read as Latin-1), a Latin-1 one, one with a space or a DEL is 400 naming the header, and writes nothing", async () => {
    const before = (await api.get("/cards?limit=200")).body.items.length;
    for (const key of [String.fromCharCode(...new TextEncoder().encode("\u952e\u{1f680}")), "caf\u00e9", "two words", "del\u007f"]) {
      const r = await api.post("/cards", { type_id: "task", title: "keyed" }, { "idempotency-key": key });
      expect([key, r.status, r.body.error, r.body.field, r.body.hint]).toEqual([key, 400, "bad_request", "Idempotency-Key", "make the key of ASCII letters, digits and - _ . : (a UUID is a good key)"]);
    }
    expect((await api.get("/cards?limit=200")).body.items.length).toBe(before);
  });

  test("a dry run under a key stores no answer: the real call with that key then runs", async () => {
    const h = { "idempotency-key": "dry-then-real" };
    const dry = await api.post("/cards", { type_id: "task", title: "rehearsed", dry_run: true }, h);
    expect([dry.status, dry.headers.get("dry-run"), dry.headers.get("idempotent-replayed")]).toEqual([200, "true", null]);
    const real = await api.post("/cards", { type_id: "task", title: "rehearsed" }, h);
    expect([real.status, real.headers.get("idempotent-replayed")]).toEqual([201, null]);
    expect((await api.get(`/cards/${real.body.id}`)).status).toBe(200);
  });

  test("keys are stored in the database and survive a restart", async () => {
    const { openTestService } = await import("../helpers/workspace.ts");
    const { createHttpApp } = await import("../../src/http/app.ts");
    const body = JSON.stringify({ type_id: "task", title: "durable" });
    const first = await api.post("/cards", body, { "idempotency-key": "durable-1" });
    const again = await openTestService(api.dir);
    try {
      const r = await createHttpApp(again).fetch(new Request("http://test/v1/cards", { method: "POST", body, headers: { "content-type": "application/json", "idempotency-key": "durable-1" } }));
      expect(r.status).toBe(201);
      expect(r.headers.get("idempotent-replayed")).toBe("true");
      expect(await r.text()).toBe(first.text);
    } finally {
      again.close();
    }
  });

  test("a record stored before keys were scoped by actor still replays for its own actor only", async () => {
    const { requestHash } = await import("../../src/service/index.ts");
    const body = JSON.stringify({ type_id: "task", title: "legacy" });
    const stored = JSON.stringify({ id: "card_00000000000000aa", title: "from the old record" });
    await api.svc.store.write((tx) => tx.putIdempotency({
      key: "legacy-1", actor: "ada", request_hash: requestHash("POST", "/cards", body), status: 201, body: stored, created_at: new Date().toISOString(),
    }));
    const mine = await api.post("/cards", body, { "idempotency-key": "legacy-1", "x-service-actor": "ada" });
    expect(mine.headers.get("idempotent-replayed")).toBe("true");
    expect(mine.text).toBe(stored);
    const theirs = await api.post("/cards", body, { "idempotency-key": "legacy-1", "x-service-actor": "agent-1" });
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    expect(theirs.body.title).toBe("legacy");
  });

  test("keys belong to their actor: another actor's same key is a new request", async () => {
    for (let i = 0; i < 2; i++) await api.task({ title: `pool ${i}`, status: "todo" });
    const take = (actor: string) => api.post("/cards/take-next", { type_id: "task" }, { "idempotency-key": "take-1", "x-service-actor": actor });
    const a = await take("ada");
    const b = await take("agent-1");
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(a.body.card.owner).toBe("ada");
    expect(b.body.card.owner).toBe("agent-1");
    expect(b.body.card.id).not.toBe(a.body.card.id);
    const again = await take("ada");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.card.id).toBe(a.body.card.id);
  });

  test("owner= (empty) is 400 saying where unowned cards come from (it silently matched nothing)", async () => {
    const r = await api.get("/cards?owner=");
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: "bad_request", field: "owner" });
    expect(r.body.hint).toContain('{"owner": null}');
  });

  test("a DELETE with a body is 400: its version guard belongs in the query, and is never ignored", async () => {
    const c = await api.task();
    const r = await api.call("DELETE", `/cards/${c.id}`, { version: 5 });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: "bad_request", hint: expect.stringContaining("?version=") });
    expect((await api.get(`/cards/${c.id}`)).status).toBe(200);
  });

  test("the query string is part of the request: DELETE ?version=2 under the key of ?version=1 is refused", async () => {
    const c = await api.task();
    const first = await api.del(`/cards/${c.id}?version=1`, { "idempotency-key": "del-q" });
    expect(first.status).toBe(200);
    const other = await api.del(`/cards/${c.id}?version=2`, { "idempotency-key": "del-q" });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe("idempotency_key_reused");
  });
});

describe("GET /cards", () => {
  test("default order is updated_at desc then id desc; limit defaults to 50 and caps at 200", async () => {
    const fresh = await testApi();
    try {
      for (let i = 0; i < 55; i++) await fresh.task({ title: `t${i}` });
      const page = (await fresh.get("/cards")).body;
      expect(page.items.length).toBe(50);
      expect(page.next_cursor).toBeString();
      const sorted = [...page.items].sort((a: any, b: any) => (b.updated_at.localeCompare(a.updated_at) || b.id.localeCompare(a.id)));
      expect(page.items.map((c: any) => c.id)).toEqual(sorted.map((c: any) => c.id));
      expect((await fresh.get("/cards?limit=500")).body.items.length).toBe(55);
      expect((await fresh.get("/cards?limit=0")).status).toBe(400);
      expect((await fresh.get("/cards?limit=ten")).status).toBe(400);
    } finally {
      fresh.close();
    }
  });

  test("cursor pages visit every card once", async () => {
    const fresh = await testApi();
    try {
      const ids = new Set<string>();
      for (let i = 0; i < 23; i++) ids.add((await fresh.task({ title: `p${i}` })).id);
      const seen: string[] = [];
      let cursor: string | null = null;
      let firstCursor: string | undefined;
      do {
        const r: any = (await fresh.get(`/cards?limit=5${cursor ? `&cursor=${cursor}` : ""}`)).body;
        seen.push(...r.items.map((c: any) => c.id));
        cursor = r.next_cursor;
        firstCursor ??= cursor ?? undefined;
      } while (cursor);
      expect(seen.length).toBe(23);
      expect(new Set(seen)).toEqual(ids);
      expect((await fresh.get("/cards?cursor=garbage")).status).toBe(400);
      // a cursor is [updated_at, id, as-of event]: one forged with a negative or fractional
      // as-of is refused as a cursor, as the one the server wrote is taken
      const [at, id, asOf] = JSON.parse(Buffer.from(firstCursor!, "base64url").toString()) as [string, string, number];
      const forge = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      expect((await fresh.get(`/cards?limit=5&cursor=${forge([at, id, asOf])}`)).body.items.map((c: any) => c.id)).toEqual(seen.slice(5, 10));
      for (const bad of [[at, id, -1], [at, id, 1.5], [at, id], [at, 5, asOf]]) {
        const r = await fresh.get(`/cards?limit=5&cursor=${forge(bad)}`);
        expect([r.status, r.body.error, r.body.field]).toEqual([400, "bad_request", "cursor"]);
      }
    } finally {
      fresh.close();
    }
  });

  test("cursor pages visit every card exactly once while cards are updated between pages", async () => {
    const fresh = await testApi();
    try {
      const all: string[] = [];
      for (let i = 0; i < 30; i++) all.push((await fresh.task({ title: `u${i}` })).id);
      const newcomer: string[] = [];
      const seen: string[] = [];
      let cursor: string | null = null;
      let round = 0;
      do {
        const r: any = (await fresh.get(`/cards?limit=4${cursor ? `&cursor=${cursor}` : ""}`)).body;
        seen.push(...r.items.map((c: any) => c.id));
        cursor = r.next_cursor;
        // between pages: touch one card already seen and one not yet seen, and add a new one
        const notSeen = all.find((id) => !seen.includes(id));
        for (const id of [seen[0]!, notSeen].filter(Boolean) as string[]) {
          const cur = (await fresh.get(`/cards/${id}`)).body;
          await fresh.patch(`/cards/${id}`, { version: cur.version, title: `${cur.title}+` });
        }
        newcomer.push((await fresh.task({ title: `new${round++}` })).id);
      } while (cursor);
      expect(seen.filter((id) => all.includes(id)).sort()).toEqual([...all].sort());
      expect(new Set(seen).size).toBe(seen.length);
    } finally {
      fresh.close();
    }
  });

  test("a persisted condition event (card_unblocked) does not move its card on later pages", async () => {
    const fresh = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.persist_conditions = ["card_blocked", "card_unblocked"]; } });
    try {
      const p = await fresh.task({ title: "blocker" });
      const x = await fresh.task({ title: "blocked one" });
      expect((await fresh.post(`/cards/${x.id}/links`, { type_id: "depends-on", target: p.id })).status).toBe(201);
      for (let i = 0; i < 4; i++) await fresh.task({ title: `pre ${i}` });
      await Bun.sleep(5);
      // P to done: X gets a persisted card_unblocked, later than X's updated_at
      expect((await fresh.patch(`/cards/${p.id}`, { version: 1, status: "done", force: true })).status).toBe(200);
      const unblocked = (await fresh.get(`/cards/${x.id}/events`)).body.items.at(-1);
      expect(unblocked.type).toBe("card_unblocked");
      for (let i = 0; i < 3; i++) await fresh.task({ title: `post ${i}` });
      const first = (await fresh.get("/cards?limit=5")).body;
      const seen: string[] = first.items.map((c: any) => c.id);
      expect(seen).not.toContain(x.id);
      const cur = (await fresh.get(`/cards/${x.id}`)).body;
      await fresh.patch(`/cards/${x.id}`, { version: cur.version, title: "blocked one+" });
      let cursor: string | undefined = first.next_cursor;
      while (cursor) {
        const r: any = (await fresh.get(`/cards?limit=5&cursor=${cursor}`)).body;
        seen.push(...r.items.map((c: any) => c.id));
        cursor = r.next_cursor;
      }
      expect(seen.filter((id) => id === x.id)).toEqual([x.id]);
      expect(seen.length).toBe(9);
    } finally {
      fresh.close();
    }
  });

  test("type_id and status accept comma lists; owner filters", async () => {
    const bug = (await api.post("/cards", { type_id: "bug", title: "listed bug", fields: { steps: "s" }, status: "todo" })).body;
    const r = (await api.get("/cards?type_id=bug,review&status=todo,doing&limit=200")).body.items;
    expect(r.some((c: any) => c.id === bug.id)).toBe(true);
    expect(r.every((c: any) => ["bug", "review"].includes(c.type_id) && ["todo", "doing"].includes(c.status))).toBe(true);
    await api.patch(`/cards/${bug.id}`, { version: 1, owner: "agent-2" });
    expect((await api.get("/cards?owner=agent-2")).body.items.map((c: any) => c.id)).toContain(bug.id);
  });

  test("tag lists the cards carrying that tag; a tag outside a locked tag_set is 422 with the valid options; counts take it too", async () => {
    const a = await api.task({ tags: ["security", "backend"] });
    const b = await api.task({ tags: ["backend"] });
    const ids = async (path: string) => (await api.get(path)).body.items.map((c: any) => c.id);
    expect(await ids("/cards?tag=security&limit=200")).toContain(a.id);
    expect(await ids("/cards?tag=security&limit=200")).not.toContain(b.id);
    expect(await ids("/cards?tag=backend&limit=200")).toEqual(expect.arrayContaining([a.id, b.id]));
    // an unknown board names the parameter it came from
    expect((await api.get("/cards?board_id=nope")).body).toMatchObject({ error: "not_found", field: "board_id", value: "nope" });
    const typo = await api.get("/cards?tag=securty");
    expect([typo.status, typo.body.error, typo.body.field]).toEqual([422, "unknown_tag", "tag"]);
    expect(typo.body.valid_options).toContain("security");
    expect((await api.get("/cards?tag=")).status).toBe(400);
    const all = (await api.get("/boards/main/counts")).body.total;
    const tagged = (await api.get("/boards/main/counts?tag=security")).body.total;
    expect(tagged).toBeGreaterThan(0);
    expect(tagged).toBeLessThan(all);
  });

  test("tag under tag_policy open matches the whole tag, comma and all", async () => {
    const open = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.tag_policy = "open"; } });
    try {
      const a = await open.task({ tags: ["a,b"] });
      await open.task({ tags: ["a"] });
      expect((await open.get(`/cards?tag=${encodeURIComponent("a,b")}`)).body.items.map((c: any) => c.id)).toEqual([a.id]);
      expect((await open.get("/cards?tag=never-used")).body.items).toEqual([]);
    } finally {
      open.close();
    }
  });

  test("board_id applies the board's card types and default_filter; unknown board is 404", async () => {
    const open = (await api.post("/cards", { type_id: "bug", title: "open bug", fields: { steps: "s" } })).body;
    const wontfix = (await api.post("/cards", { type_id: "bug", title: "wontfix bug", fields: { steps: "s", resolution: "wontfix" } })).body;
    const task = await api.task();
    const ids = (await api.get("/cards?board_id=bugs&limit=200")).body.items.map((c: any) => c.id);
    expect(ids).toContain(open.id);
    expect(ids).not.toContain(wontfix.id);
    expect(ids).not.toContain(task.id);
    // callers narrow, never widen: an explicit type outside the board finds nothing
    expect((await api.get("/cards?board_id=bugs&type_id=task")).body.items).toEqual([]);
    expect((await api.get("/cards?board_id=nope")).status).toBe(404);
  });

  test("sort by title, created_at and fields.<id>; missing values last; sort with cursor is 422", async () => {
    const fresh = await testApi();
    try {
      await fresh.task({ title: "b", fields: { estimate_hours: 5 } });
      await Bun.sleep(2); // distinct created_at values
      await fresh.task({ title: "a" });
      await Bun.sleep(2);
      await fresh.task({ title: "c", fields: { estimate_hours: 1 } });
      expect((await fresh.get("/cards?sort=title")).body.items.map((c: any) => c.title)).toEqual(["a", "b", "c"]);
      expect((await fresh.get("/cards?sort=-title")).body.items.map((c: any) => c.title)).toEqual(["c", "b", "a"]);
      expect((await fresh.get("/cards?sort=fields.estimate_hours")).body.items.map((c: any) => c.title)).toEqual(["c", "b", "a"]);
      expect((await fresh.get("/cards?sort=-fields.estimate_hours")).body.items.map((c: any) => c.title)).toEqual(["b", "c", "a"]);
      expect((await fresh.get("/cards?sort=created_at")).body.items.map((c: any) => c.title)).toEqual(["b", "a", "c"]);
      const custom = (await fresh.get("/cards?sort=title&limit=1")).body;
      expect("next_cursor" in custom).toBe(false); // SPEC: with a custom sort no next_cursor is returned
      const bad = await fresh.get("/cards?sort=colour");
      expect(bad.status).toBe(422);
      expect(bad.body.valid_options).toContain("fields.estimate_hours");
      expect((await fresh.get("/cards?sort=title&cursor=abc")).status).toBe(422);
    } finally {
      fresh.close();
    }
  });

  test("links and comments are omitted from list items unless included", async () => {
    const c = await api.task({ title: "with parts" });
    await api.post(`/cards/${c.id}/comments`, { body: "hi" });
    const plain = (await api.get("/cards?q=parts")).body.items[0];
    expect(plain.links).toBeUndefined();
    expect(plain.comments).toBeUndefined();
    const full = (await api.get("/cards?q=parts&include=links,comments")).body.items[0];
    expect(full.links).toEqual([]);
    expect(full.comments.length).toBe(1);
    // a value outside a closed set is 422 with the options, as for status and type_id; 400 is for a malformed call
    const include = await api.get("/cards?include=owner");
    expect([include.status, include.body.error, include.body.valid_options]).toEqual([422, "validation_failed", ["links", "comments"]]);
    const onCard = await api.get(`/cards/${full.id}?include=links`);
    expect([onCard.status, onCard.body.field, onCard.body.valid_options, onCard.body.hint]).toEqual([400, "include", undefined, "this route takes no query parameters"]);
  });

  test("an unknown query parameter or a bad boolean is 400", async () => {
    const r = await api.get("/cards?filter_json=1");
    expect(r.status).toBe(400);
    expect(r.body.valid_options).toContain("board_id");
    expect((await api.get("/cards?blocked=maybe")).status).toBe(400);
  });
});

describe("query parameters on writes", () => {
  test("a write refuses a query key it does not take, before writing: POST /cards?dry_run=true stored a real card", async () => {
    const fresh = await testApi();
    try {
      const r = await fresh.post("/cards?dry_run=true", { type_id: "task", title: "not stored" });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "bad_request", field: "dry_run", hint: "POST /cards takes no query parameters; send options in the JSON body" });
      expect(r.body.valid_options).toBeUndefined(); // nothing to pick from
      expect((await fresh.get("/cards")).body.items).toEqual([]);
      const c = await fresh.task();
      expect((await fresh.patch(`/cards/${c.id}?force=true`, { version: 1, title: "x" })).status).toBe(400);
      expect((await fresh.post(`/cards/${c.id}/claim?version=1`, {})).status).toBe(400);
      // DELETE's version guard is the query's to carry; nothing else is
      const odd = await fresh.del(`/cards/${c.id}?version=1&hard=1`);
      expect([odd.status, odd.body.field, odd.body.valid_options]).toEqual([400, "hard", ["version"]]);
      expect((await fresh.get(`/cards/${c.id}`)).status).toBe(200);
      // a DELETE without query parameters: no body to send them in (it refuses one)
      const link = await fresh.del(`/cards/${c.id}/links/relates-to/${c.id}?dry_run=true`);
      expect([link.status, link.body.field, link.body.valid_options, link.body.hint]).toEqual([400, "dry_run", undefined, `DELETE /cards/${c.id}/links/relates-to/${c.id} takes no query parameters`]);
      expect((await fresh.del(`/cards/${c.id}?version=1`)).status).toBe(200);
    } finally {
      fresh.close();
    }
  });
});

describe("GET /events", () => {
  test("id order, zero-padded ids, since and cursor are exclusive floors, cursor wins", async () => {
    const fresh = await testApi();
    try {
      for (let i = 0; i < 5; i++) await fresh.task();
      const all = (await fresh.get("/events")).body;
      expect(all.items.map((e: any) => e.id)).toEqual(["000000000001", "000000000002", "000000000003", "000000000004", "000000000005"]);
      expect("next_cursor" in all).toBe(false); // SPEC: empty or absent when exhausted
      expect((await fresh.get("/events?since=000000000003")).body.items.map((e: any) => e.id)).toEqual(["000000000004", "000000000005"]);
      expect((await fresh.get("/events?since=3")).body.items.length).toBe(2);
      expect((await fresh.get("/events?since=000000000001&cursor=000000000004")).body.items.map((e: any) => e.id)).toEqual(["000000000005"]);
      const p1 = (await fresh.get("/events?limit=2")).body;
      expect(p1.next_cursor).toBe("000000000002");
      expect((await fresh.get(`/events?cursor=${p1.next_cursor}&limit=2`)).body.items[0].id).toBe("000000000003");
      expect((await fresh.get("/events?since=abc")).status).toBe(400);
      // a time where an id belongs: the hint says where times are asked (before: no hint)
      const time = await fresh.get("/events?since=2026-11-24T00:00:00Z");
      expect([time.status, time.body.field]).toEqual([400, "since"]);
      expect(time.body.hint).toContain("not a time: for what changed since a time, list cards");
      expect((await fresh.get("/events?cursor=2026-11-24")).body.hint).toStartWith("cursor takes an event id");
      expect((await fresh.get("/events?since=99999999999999999999")).body.hint).toContain("at most 15 digits");
      // empty values are absent ones: an empty cursor keeps since, empty filters filter nothing
      expect((await fresh.get("/events?since=000000000003&cursor=")).body.items.map((e: any) => e.id)).toEqual(["000000000004", "000000000005"]);
      expect((await fresh.get("/events?actor=&owner=&type=&types=&board_id=&since=&cursor=&limit=")).body.items).toHaveLength(5);
    } finally {
      fresh.close();
    }
  });

  test("type/types, actor, owner and board_id filters", async () => {
    const fresh = await testApi();
    try {
      const t = (await fresh.post("/cards", { type_id: "task", title: "x" }, { "x-service-actor": "agent-1" })).body;
      const b = (await fresh.post("/cards", { type_id: "bug", title: "y", fields: { steps: "s" } })).body;
      await fresh.patch(`/cards/${t.id}`, { version: 1, owner: "agent-2", status: "todo" });
      expect((await fresh.get("/events?type=status_changed")).body.items.length).toBe(1);
      expect((await fresh.get("/events?types=status_changed,owner_changed")).body.items.length).toBe(2);
      expect((await fresh.get("/events?actor=agent-1")).body.items.map((e: any) => e.card_id)).toEqual([t.id]);
      expect((await fresh.get("/events?owner=agent-2")).body.items.every((e: any) => e.card_id === t.id)).toBe(true);
      // "me" is the caller, as in GET /cards (before: events of an owner literally named "me": none)
      const mine = await fresh.get("/events?owner=me", { "x-service-actor": "agent-2" });
      expect(mine.body.items.map((e: any) => e.card_id)).toEqual((await fresh.get("/events?owner=agent-2")).body.items.map((e: any) => e.card_id));
      expect(mine.body.items.length).toBeGreaterThan(0);
      expect((await fresh.get("/events?actor=me", { "x-service-actor": "agent-1" })).body.items.map((e: any) => e.card_id)).toEqual([t.id]);
      // an owner nobody is, nor registered, is a typo: refused as GET /cards refuses it (before: an empty page)
      const typo = await fresh.get("/events?owner=agent-22");
      expect([typo.status, typo.body.error, typo.body.field]).toEqual([422, "unknown_user", "owner"]);
      expect(typo.body.valid_options).toContain("agent-2");
      expect((await fresh.get("/cards?owner=agent-22")).body.error).toBe("unknown_user");
      // a poll (since) may wait for an owner still to come
      expect((await fresh.get("/events?owner=agent-22&since=000000000001")).body).toEqual({ items: [] });
      expect((await fresh.get("/events?board_id=bugs")).body.items.map((e: any) => e.card_id)).toEqual([b.id]);
      // a deleted card's events, its tombstone included, stay in its board's feed
      const gone = (await fresh.post("/cards", { type_id: "bug", title: "gone", fields: { steps: "s" } })).body;
      expect((await fresh.del(`/cards/${gone.id}`)).status).toBe(200);
      const bugs = (await fresh.get("/events?board_id=bugs")).body.items;
      expect(bugs.map((e: any) => [e.card_id, e.type])).toEqual([[b.id, "card_created"], [gone.id, "card_created"], [gone.id, "card_deleted"]]);
      expect((await fresh.get("/events?board_id=main&types=card_deleted")).body.items.map((e: any) => e.card_id)).toEqual([gone.id]);
      const bad = await fresh.get("/events?types=nope");
      expect([bad.status, bad.body.error, bad.body.field]).toEqual([422, "validation_failed", "types"]);
      // the parameter the value came from (SPEC names both type and types)
      expect((await fresh.get("/events?type=nope")).body.field).toBe("type");
      expect(bad.body.valid_options).toContain("card_created");
      expect(bad.body.valid_options).not.toContain("definition_reloaded");
      // live-only types (SPEC: not in the durable feed) say where they are (before: always an empty page)
      const live = await fresh.get("/events?types=definition_reloaded");
      expect([live.status, live.body.hint]).toEqual([422, "follow it live: GET /events/stream?types=definition_reloaded (CLI: cards events --follow --types definition_reloaded)"]);
      expect((await fresh.get("/events?limit=501")).body.items.length).toBeLessThanOrEqual(500);
    } finally {
      fresh.close();
    }
  });
});

describe("list parameters in the forms scripts send", () => {
  test("a blank q lists as if no q were given; blocked=1 and blocked=0 are true and false", async () => {
    const fresh = await testApi();
    try {
      const a = await fresh.task({ title: "free" });
      const b = await fresh.task({ title: "waiting" });
      await fresh.post(`/cards/${b.id}/links`, { type_id: "depends-on", target: a.id });
      const ids = async (q: string) => (await fresh.get(`/cards?${q}`)).body.items.map((c: any) => c.id).sort();
      expect(await ids("q=%20%20")).toEqual(await ids(""));
      expect(await ids("q=%20%20")).toHaveLength(2);
      expect((await fresh.get("/boards/main/counts?q=%20")).body.total).toBe(2);
      expect(await ids("blocked=1")).toEqual([b.id]);
      expect(await ids("blocked=1")).toEqual(await ids("blocked=true"));
      expect(await ids("blocked=0")).toEqual([a.id]);
    } finally {
      fresh.close();
    }
  });
});

describe("errors: every 4xx carries the envelope, no input gives a 5xx", () => {
  test("a body key of the wrong type is said in plain words naming what it takes; a required one sent as null is missing, with its hint", async () => {
    const c = await api.task();
    const cases: Array<[string, string, unknown, string]> = [
      ["PATCH", `/cards/${c.id}`, { version: "abc" }, "patch card: version must be a number"],
      ["PATCH", `/cards/${c.id}`, { version: 0 }, "patch card: version must be at least 1"],
      ["PATCH", `/cards/${c.id}`, { version: 1.5 }, "patch card: version must be a whole number"],
      ["POST", "/cards", { type_id: "task", title: "x", dry_run: "yes" }, "create card: dry_run must be true or false"],
      ["POST", `/cards/${c.id}/claim`, { version: 1, status: null }, "claim: status must be a string"],
      ["POST", `/cards/${c.id}/comments`, { body: 5 }, "comment: body must be a string"],
    ];
    for (const [method, path, body, message] of cases) {
      const r = await api.call(method, path, body);
      expect([r.status, r.body.error, r.body.message]).toEqual([422, "validation_failed", message]);
    }
    const nullVersion = await api.patch(`/cards/${c.id}`, { version: null, title: "x" });
    expect(nullVersion.body).toMatchObject({ message: "patch card: version is required", field: "version", hint: expect.stringContaining("current version") });
  });

  const cases: Array<[string, string, string | undefined, number, string]> = [
    ["malformed JSON", "/cards", "{not json", 400, "bad_request"],
    ["JSON array body", "/cards", "[1,2]", 400, "bad_request"],
    ["JSON string body", "/cards", '"hello"', 400, "bad_request"],
    ["wrong type of title", "/cards", '{"type_id":"task","title":42}', 422, "validation_failed"],
    ["wrong type of fields", "/cards", '{"type_id":"task","title":"x","fields":[]}', 422, "validation_failed"],
    ["null body fields", "/cards", '{"type_id":null,"title":"x"}', 422, "validation_failed"],
  ];
  test.each(cases)("%s", async (_name, path, body, status, code) => {
    const r = await api.call("POST", path, body, { "content-type": "application/json" });
    expect(r.status).toBe(status);
    expect(r.body.error).toBe(code);
    expect(r.body.message).toBeString();
  });

  test("an oversized body is 413 payload_too_large", async () => {
    const big = JSON.stringify({ type_id: "task", title: "x", fields: { description: "y".repeat(1024 * 1024 + 10) } });
    const r = await api.call("POST", "/cards", big);
    expect(r.status).toBe(413);
    expect(r.body.error).toBe("payload_too_large");
  });

  test("a title over 1 KiB and a field value over 256 KiB are 413", async () => {
    expect((await api.post("/cards", { type_id: "task", title: "t".repeat(1100) })).status).toBe(413);
    expect((await api.post("/cards", { type_id: "task", title: "x", fields: { description: "d".repeat(300 * 1024) } })).status).toBe(413);
  });

  test("a comment over 64 KiB and a link note over 4 KiB are 413 naming the field; at the limit they pass", async () => {
    const [a, b] = [await api.task(), await api.task()];
    const big = await api.post(`/cards/${a.id}/comments`, { body: "c".repeat(64 * 1024 + 1) });
    expect([big.status, big.body.error, big.body.field]).toEqual([413, "payload_too_large", "body"]);
    const note = await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id, note: "n".repeat(4097) });
    expect([note.status, note.body.error, note.body.field]).toEqual([413, "payload_too_large", "note"]);
    expect((await api.post(`/cards/${a.id}/links`, { type_id: "related", target: b.id, note: "n".repeat(4096) })).status).toBe(201);
  });

  test("appends that would take a card's fields past 4 Mi characters are 413; the card stays as it was", async () => {
    const c = await api.task();
    const note = "n".repeat(250 * 1024);
    let last = 201;
    let appended = 0;
    for (let i = 0; i < 20 && last < 400; i++) {
      const r = await api.post(`/cards/${c.id}/fields/evidence/append`, { version: c.version + appended, entry: { note } });
      last = r.status;
      if (r.status < 300) appended++;
      else expect(r.body.error).toBe("payload_too_large");
    }
    expect(last).toBe(413);
    expect(appended).toBe(16);
    expect((await api.get(`/cards/${c.id}`)).body.fields.evidence).toHaveLength(16);
  });

  test("a card already over the fields cap (restored, older) can still shrink", async () => {
    const c = await api.task();
    const big = Array.from({ length: 20 }, (_, i) => ({ entry_id: `ent_${String(i).padStart(16, "0")}`, note: "n".repeat(250 * 1024) }));
    await api.svc.store.write((tx) => { tx.updateCard({ ...api.svc.store.getCard(c.id)!, fields: { ...c.fields, evidence: big }, version: 2 }, 1); });
    const r = await api.call("DELETE", `/cards/${c.id}/fields/evidence/${big[0]!.entry_id}?version=2`);
    expect(r.status).toBe(200);
    expect(r.body.fields.evidence).toHaveLength(19);
  });

  test("appending to a type without repeating fields says so, and a non-repeating field points to an update", async () => {
    const bug = (await api.post("/cards", { type_id: "bug", title: "b", fields: { steps: "s" } })).body;
    const none = await api.post(`/cards/${bug.id}/fields/steps/append`, { version: bug.version, entry: { x: 1 } });
    expect(none.body).toMatchObject({ error: "validation_failed", valid_options: [] });
    expect(none.body.message).toContain("card type bug has no repeating field");
    expect(none.body.hint).toContain("update_bug");
  });

  test("a search of more than 32 words or 1,000 characters is 400", async () => {
    const words = Array.from({ length: 33 }, (_, i) => `w${i}`).join(" ");
    const r = await api.get(`/cards?q=${encodeURIComponent(words)}`);
    expect([r.status, r.body.field]).toEqual([400, "q"]);
    expect((await api.get(`/cards?q=${"a".repeat(1001)}`)).status).toBe(400);
    expect((await api.get(`/cards?q=${encodeURIComponent(words.split(" ").slice(0, 32).join(" "))}`)).status).toBe(200);
  });

  test("unknown routes and methods", async () => {
    const a = await api.get("/nope");
    expect(a.status).toBe(404);
    expect(a.body.error).toBe("not_found");
    const b = await api.call("GET", "/v2/cards");
    expect(b.status).toBe(404);
    expect(b.body.error).toBe("not_found");
    const c = await api.call("PUT", "/cards");
    expect(c.status).toBe(405);
    expect(c.body.valid_options).toEqual(["GET", "POST"]);
    // [proposed] POST /cards/batch does not exist: 404, not a 405 naming a card's methods
    const batch = await api.post("/cards/batch", {});
    expect([batch.status, batch.body.error]).toEqual([404, "not_found"]);
    const onCard = await api.call("PUT", "/cards/card_0123456789abcdef");
    expect([onCard.status, onCard.body.valid_options]).toEqual([405, ["GET", "PATCH", "DELETE"]]);
  });

  test("unicode and odd ids in paths are 404, not 5xx", async () => {
    for (const id of ["%E2%9C%93", "..%2F..%2Fetc", "%00", "card_" + "f".repeat(500)]) {
      const r = await api.get(`/cards/${id}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toBe("not_found");
    }
    const malformed = await api.get("/cards/%ZZ");
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe("bad_request");
  });
});
