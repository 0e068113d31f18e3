/** Definitions on a running server: reload, POST /boards, watch mode, serve-only routes. */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync, existsSync, watch } from "node:fs";
import { join } from "node:path";
import { testApi } from "../helpers/http.ts";
import { assertBinary, run, serve } from "../helpers/binary.ts";
import { editJson, makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { followReloads, reloadDefinitions, watchDefinitions } from "../../src/service/index.ts";
import type { CardEvent } from "../../src/domain/types.ts";

describe("POST /workspace/reload", () => {
  test("swaps in new definitions without touching cards; definition_reloaded per affected board", async () => {
    const api = await testApi();
    const seen: CardEvent[] = [];
    api.svc.subscribe((e) => seen.push(e));
    try {
      const card = await api.task({ title: "survives" });
      editJson(api.dir, "definitions/boards/bugs.json", (b) => { b.wip_limits = { doing: 5 }; });
      const r = await api.post("/workspace/reload");
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ changed: true, boards: ["bugs"] });
      expect((await api.get("/boards/bugs")).body.wip_limits).toEqual({ doing: 5 });
      expect((await api.get(`/cards/${card.id}`)).body).toMatchObject({ title: "survives", version: 1 });
      expect(seen.filter((e) => e.type === "definition_reloaded").map((e) => [e.scope, e.board_id])).toEqual([["board", "bugs"]]);
      // not in the durable feed
      expect((await api.get("/events")).body.items.some((e: any) => e.type === "definition_reloaded")).toBe(false);
      expect((await api.get("/events?types=definition_reloaded")).status).toBe(422);
      // an unchanged set reloads nothing
      expect((await api.post("/workspace/reload")).body.changed).toBe(false);
    } finally {
      api.close();
    }
  });

  test("Idempotency-Key: a replay answers the first reload's result without reloading again; another body under the key is 422", async () => {
    const api = await testApi();
    const seen: CardEvent[] = [];
    api.svc.subscribe((e) => seen.push(e));
    try {
      const h = { "idempotency-key": "reload-1" };
      editJson(api.dir, "definitions/boards/bugs.json", (b) => { b.wip_limits = { doing: 5 }; });
      const a = await api.post("/workspace/reload", undefined, h);
      editJson(api.dir, "definitions/boards/bugs.json", (b) => { b.wip_limits = { doing: 6 }; });
      const b = await api.post("/workspace/reload", undefined, h);
      expect([a.status, b.status, b.text, b.headers.get("idempotent-replayed")]).toEqual([200, 200, a.text, "true"]);
      expect(a.body.changed).toBe(true);
      // the replay did not reload: the second edit is not live
      expect((await api.get("/boards/bugs")).body.wip_limits).toEqual({ doing: 5 });
      await Bun.sleep(50);
      expect(seen.filter((e) => e.type === "definition_reloaded").length).toBe(1);
      expect((await api.post("/cards", { type_id: "task", title: "x" }, h)).body.error).toBe("idempotency_key_reused");
      // reload takes no options: one sent is refused, not ignored
      const odd = await api.post("/workspace/reload", { force: true });
      expect([odd.status, odd.body.error, odd.body.field]).toEqual([422, "validation_failed", "force"]);
      expect((await api.post("/workspace/reload", {})).status).toBe(200);
    } finally {
      api.close();
    }
  });

  test("users newly declared in workspace.json are registered, and a new workspace id (no card holds the old one) shows on every card read", async () => {
    const api = await testApi();
    try {
      editJson(api.dir, "definitions/workspace.json", (w) => {
        w.id = "renamed";
        w.users = [...(w.users ?? []), { id: "newbie", kind: "human" }];
      });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      const card = await api.task();
      expect((await api.get("/workspace")).body.workspace.users.map((u: any) => u.id)).toContain("newbie");
      const owned = await api.patch(`/cards/${card.id}`, { version: 1, owner: "newbie" });
      expect(owned.status).toBe(200);
      expect(owned.body.workspace_id).toBe("renamed");
      expect((await api.get(`/cards/${card.id}`)).body.workspace_id).toBe("renamed");
      expect((await api.get("/cards")).body.items[0].workspace_id).toBe("renamed");
    } finally {
      api.close();
    }
  });

  test("an edit of a declared user is applied on open too (an embedded call)", async () => {
    const dir = makeWorkspace();
    (await openTestService(dir, "embedded")).close();
    editJson(dir, "definitions/workspace.json", (w) => {
      w.users = w.users.map((u: any) => (u.id === "ada" ? { ...u, display_name: "Countess Ada" } : u));
    });
    const svc = await openTestService(dir, "embedded");
    try {
      expect(svc.store.getUser("ada")?.display_name).toBe("Countess Ada");
    } finally {
      svc.close();
    }
  });

  test("an edit of a declared user (display_name, kind) is applied, keeping created_at", async () => {
    const api = await testApi();
    try {
      const before = (await api.get("/workspace")).body.workspace.users.find((u: any) => u.id === "ada");
      editJson(api.dir, "definitions/workspace.json", (w) => {
        w.users = w.users.map((u: any) => (u.id === "ada" ? { ...u, display_name: "Countess Ada" } : u.id === "agent-1" ? { ...u, kind: "human" } : u));
      });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      const users = (await api.get("/workspace")).body.workspace.users;
      expect(users.find((u: any) => u.id === "ada")).toEqual({ ...before, display_name: "Countess Ada" });
      expect(users.find((u: any) => u.id === "agent-1").kind).toBe("human");
    } finally {
      api.close();
    }
  });

  test("a schema_version below what cards carry is refused, on reload and on open (versions only go up)", async () => {
    const api = await testApi();
    try {
      await api.task({ title: "at v2" });
      editJson(api.dir, "definitions/card-types/task.json", (t) => { t.schema_version = 1; delete t.migrations; });
      const r = await api.post("/workspace/reload");
      expect(r.status).toBe(422);
      expect(r.body.problems).toContainEqual(expect.objectContaining({ file: "definitions/card-types/task.json", path: "schema_version" }));
      expect((await api.get("/workspace")).body.current_schema_versions.task).toBe(2);
      // a process opening the edited files refuses them too, and `cards check` says why
      const opened = run(["cards", "list"], { cwd: api.dir });
      expect(opened.code).toBe(5);
      expect(opened.error.error).toBe("invalid_definitions");
      const checked = run(["check"], { cwd: api.dir });
      expect(checked.code).toBe(5);
      expect(checked.error.problems).toContainEqual(expect.objectContaining({ path: "schema_version" }));
      // a board id past 40 characters is refused before any file is written
      const long = await api.post("/boards", { id: "b".repeat(41), name: "Long", columns: ["todo"], card_type_ids: ["task"] });
      expect(long.status).toBe(422);
      expect(long.body.error).toBe("validation_failed");
    } finally {
      api.close();
    }
  });

  test("a schema_version a process loaded stays the floor for every process, before any card carries it (review 2026-11-25)", async () => {
    const api = await testApi();
    try {
      editJson(api.dir, "definitions/card-types/review.json", (t) => { t.schema_version = 3; });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      editJson(api.dir, "definitions/card-types/review.json", (t) => { t.schema_version = 2; });
      expect((await api.post("/workspace/reload")).status).toBe(422);
      // before: the CLI and `cards check` took version 2, so cards were created at 2 and at 3
      const opened = run(["cards", "create", "--type", "review", "--title", "x"], { cwd: api.dir });
      expect([opened.code, opened.error.error]).toEqual([5, "invalid_definitions"]);
      expect(opened.error.problems).toContainEqual({ file: "definitions/card-types/review.json", path: "schema_version", message: "schema_version 2 is below 3, the version already loaded on this workspace; schema versions only go up" });
      const checked = run(["check"], { cwd: api.dir });
      expect(checked.code).toBe(5);
      expect((await api.post("/cards", { type_id: "review", title: "y" })).body.schema_version).toBe(3);
    } finally {
      api.close();
    }
  });

  test("the workspace id cannot change while cards carry it; with no card it can (review 2026-11-25)", async () => {
    const api = await testApi();
    try {
      editJson(api.dir, "definitions/workspace.json", (w) => { w.id = "renamed-early"; });
      expect((await api.post("/workspace/reload")).status).toBe(200); // no card yet
      await api.task({ title: "carries the id" });
      editJson(api.dir, "definitions/workspace.json", (w) => { w.id = "other-ws"; });
      const r = await api.post("/workspace/reload");
      // before: every card and /health silently reported the new id
      expect(r.status).toBe(422);
      expect(r.body.problems).toContainEqual(expect.objectContaining({ file: "definitions/workspace.json", path: "id", valid_options: ["renamed-early"] }));
      const opened = run(["cards", "list"], { cwd: api.dir });
      expect([opened.code, opened.error.error]).toEqual([5, "invalid_definitions"]);
      expect((await api.get("/health")).body.workspace_id).toBe("renamed-early");
    } finally {
      api.close();
    }
  });

  test("a bad set is 422 with every problem; the prior definitions stay live; definition_reload_failed", async () => {
    const api = await testApi();
    const seen: CardEvent[] = [];
    api.svc.subscribe((e) => seen.push(e));
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.columns.push("nowhere"); b.wip_limits.nowhere = 1; });
      editJson(api.dir, "definitions/workspace.json", (w) => { w.settings.tag_policy = "propose"; });
      const r = await api.post("/workspace/reload");
      expect(r.status).toBe(422);
      expect(r.body.error).toBe("invalid_definitions");
      expect(r.body.problems.length).toBeGreaterThanOrEqual(2);
      expect((await api.get("/boards/main")).body.columns).not.toContain("nowhere");
      expect((await api.get("/workspace")).body.workspace.settings.tag_policy).toBe("locked");
      expect(seen.some((e) => e.type === "definition_reload_failed")).toBe(true);
      expect((await api.post("/cards", { type_id: "task", title: "still works" })).status).toBe(201);
    } finally {
      api.close();
    }
  });

  test("a new card type becomes creatable after reload; searchable_fields changes re-index", async () => {
    const api = await testApi();
    try {
      const c = await api.task({ title: "plain", fields: { branch: "zanzibar" } });
      editJson(api.dir, "definitions/card-types/task.json", (t) => { t.searchable_fields = ["description"]; });
      await api.post("/workspace/reload");
      expect((await api.get("/cards?q=zanzibar")).body.items).toEqual([]);
      editJson(api.dir, "definitions/card-types/task.json", (t) => { t.searchable_fields = ["branch"]; });
      writeFileSync(join(api.dir, "definitions/card-types/note.json"), JSON.stringify({ id: "note", name: "Note", schema_version: 1, fields: [] }));
      expect((await api.post("/workspace/reload")).status).toBe(200);
      expect((await api.get("/cards?q=zanzibar")).body.items.map((x: any) => x.id)).toEqual([c.id]);
      expect((await api.post("/cards", { type_id: "note", title: "n" })).status).toBe(201);
    } finally {
      api.close();
    }
  });
});

describe("definitions checked against the cards that exist", () => {
  test("a reload that drops a column or a card type cards still hold is refused, naming how many", async () => {
    const api = await testApi();
    try {
      await api.task({ status: "backlog" });
      await api.post("/cards", { type_id: "review", title: "r", fields: { reviewers: ["ada"] } }).catch(() => undefined);
      editJson(api.dir, "definitions/workspace.json", (w) => { w.columns = w.columns.filter((c: any) => c.id !== "backlog"); });
      const drop = (b: any) => {
        b.columns = b.columns.filter((c: string) => c !== "backlog");
        if (b.transitions) {
          delete b.transitions.backlog;
          for (const k of Object.keys(b.transitions)) b.transitions[k] = b.transitions[k].filter((c: string) => c !== "backlog");
        }
      };
      editJson(api.dir, "definitions/boards/main.json", drop);
      editJson(api.dir, "definitions/boards/bugs.json", drop);
      editJson(api.dir, "definitions/views/triage.json", (v) => { v.filter.status = "todo"; });
      const r = await api.post("/workspace/reload");
      expect(r.status).toBe(422);
      const problems = JSON.stringify(r.body.problems);
      expect(problems).toContain("column backlog is removed, but 1 card(s) are in it; keep it until they are moved");
      // a rename is the usual cause: the steps that work (with the new files in place no embedded call opens)
      expect(problems).toContain("To rename it: put backlog back beside the new column, move its cards (cards cards list --status backlog;");
      expect(api.svc.defs.workspace.columns.map((c) => c.id)).toContain("backlog"); // the old set stays
    } finally {
      api.close();
    }
  });

  test("an open of such a set is refused too (an embedded call, cards check), so no process works with it", async () => {
    assertBinary();
    const api = await testApi();
    const dir = api.dir;
    try {
      expect((await api.post("/cards", { type_id: "review", title: "r", status: "review", fields: { reviewers: ["ada"] } })).status).toBe(201);
    } finally {
      api.close();
    }
    const { unlinkSync } = await import("node:fs");
    unlinkSync(join(dir, "definitions/card-types/review.json"));
    editJson(dir, "definitions/boards/main.json", (b) => { b.card_type_ids = b.card_type_ids.filter((t: string) => t !== "review"); delete b.presentation?.card_preview?.review; });
    const want = "card type review is removed, but 1 card(s) of that type exist";
    const version = "a file put back for them needs schema_version 1 or higher";
    const err = await openTestService(dir).then(() => undefined, (e) => e);
    expect(err?.code).toBe("invalid_definitions");
    expect(JSON.stringify(err.extra.problems)).toContain(want);
    expect(JSON.stringify(err.extra.problems)).toContain(version);
    const list = run(["cards", "list", "--dir", dir]);
    expect([list.code, list.error?.error]).toEqual([5, "invalid_definitions"]);
    const check = run(["check", "--dir", dir]);
    expect(check.code).not.toBe(0);
    expect(check.stderr).toContain(want);
  });

  test("an item field removed by a reload can be cleared from the entries that hold it, never set", async () => {
    const api = await testApi();
    try {
      const c = await api.task();
      const added = (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: c.version, entry: { note: "n", at: "2026-01-01T00:00:00Z" } })).body;
      const entryId = added.entry_id;
      editJson(api.dir, "definitions/card-types/task.json", (t) => {
        const ev = t.fields.find((f: any) => f.id === "evidence");
        ev.item_fields = ev.item_fields.filter((i: any) => i.id !== "at");
      });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      const path = `/cards/${c.id}/fields/evidence/${entryId}`;
      // before: unknown_field, so the stale key stayed until a schema upgrade
      const cleared = await api.patch(path, { version: added.card.version, entry: { at: null } });
      expect(cleared.status).toBe(200);
      expect(cleared.body.fields.evidence[0]).toEqual({ entry_id: entryId, note: "n" });
      expect((await api.patch(path, { version: cleared.body.version, entry: { at: "2026-01-02T00:00:00Z" } })).body.error).toBe("unknown_field");
      expect((await api.patch(path, { version: cleared.body.version, entry: { at: null } })).body.error).toBe("unknown_field");
    } finally {
      api.close();
    }
  });

  test("a field that became repeating keeps its old value: appends are refused until PATCH clears it", async () => {
    const api = await testApi();
    try {
      const card = await api.task({ fields: { description: "kept words" } });
      editJson(api.dir, "definitions/card-types/task.json", (t) => {
        t.fields = t.fields.map((f: any) => (f.id === "description" ? { id: "description", type: "repeating", item_fields: [{ id: "t", type: "string" }] } : f));
      });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      const append = await api.post(`/cards/${card.id}/fields/description/append`, { version: card.version, entry: { t: "hi" } });
      expect([append.status, append.body.error, append.body.field]).toEqual([422, "validation_failed", "description"]);
      expect(append.body.hint).toContain('PATCH {"fields": {"description": null}}');
      expect((await api.get(`/cards/${card.id}`)).body).toMatchObject({ version: card.version, fields: { description: "kept words" } });
      // update and remove of an entry are refused the same way, not answered "no such entry"
      expect((await api.patch(`/cards/${card.id}/fields/description/ent_x`, { version: card.version, entry: { t: "x" } })).body.hint).toContain("clear it first");
      // PATCH may clear such a value (never set one), and entries can then be added
      const cleared = await api.patch(`/cards/${card.id}`, { version: card.version, fields: { description: null } });
      expect(cleared.status).toBe(200);
      expect(cleared.body.fields.description).toBeUndefined();
      expect((await api.patch(`/cards/${card.id}`, { version: cleared.body.version, fields: { description: null } })).body.error).toBe("validation_failed");
      const ok = await api.post(`/cards/${card.id}/fields/description/append`, { version: cleared.body.version, entry: { t: "hi" } });
      expect(ok.status).toBe(201);
      expect(ok.body.card.fields.description).toEqual([{ entry_id: expect.stringMatching(/^ent_/), t: "hi" }]);
    } finally {
      api.close();
    }
  });

  test("a schema_version below the loaded one is refused even while no card carries it", async () => {
    const api = await testApi();
    try {
      const was = api.svc.defs.cardTypes.get("bug")!.schema_version;
      editJson(api.dir, "definitions/card-types/bug.json", (t) => { t.schema_version = was + 1; t.migrations = { ...(t.migrations ?? {}), [String(was + 1)]: { from: was, summary: "up" } }; });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      editJson(api.dir, "definitions/card-types/bug.json", (t) => { t.schema_version = was; delete t.migrations[String(was + 1)]; });
      const r = await api.post("/workspace/reload");
      expect(r.status).toBe(422);
      expect(JSON.stringify(r.body.problems)).toContain(`is below ${was + 1}, the version loaded now`);
    } finally {
      api.close();
    }
  });
});

describe("reloads by other processes", () => {
  test("a server reloads when another process announces definition_reloaded, so what it relays is true", async () => {
    const api = await testApi();
    const other = await openTestService(api.dir, "serve");
    const stop = followReloads(api.svc, () => {});
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
      expect((await reloadDefinitions(other, { actor: "cards" })).changed).toBe(true);
      for (let i = 0; i < 50 && api.svc.defs.boards.get("main")!.wip_limits!.doing !== 1; i++) await Bun.sleep(50);
      expect((await api.get("/boards/main")).body.wip_limits.doing).toBe(1);
    } finally {
      stop();
      other.close();
      api.close();
    }
  });

  test("a reload that changes no board is announced too (once, without board_id), and followed", async () => {
    const api = await testApi();
    const other = await openTestService(api.dir, "serve");
    const stop = followReloads(api.svc, () => {});
    const seen: CardEvent[] = [];
    api.svc.subscribe((e) => seen.push(e));
    try {
      // a card type on no board
      writeFileSync(join(api.dir, "definitions/card-types/note.json"), JSON.stringify({ id: "note", name: "Note", schema_version: 1, fields: [] }));
      const r = await reloadDefinitions(other, { actor: "cards" });
      expect([r.changed, r.boards]).toEqual([true, []]);
      for (let i = 0; i < 50 && !api.svc.defs.cardTypes.has("note"); i++) await Bun.sleep(50);
      expect(api.svc.defs.cardTypes.has("note")).toBe(true);
      await Bun.sleep(300); // the follower's reload has run by now: it must not announce the set again
      const announced = seen.filter((e) => e.type === "definition_reloaded");
      expect(announced.length).toBe(1);
      expect(announced[0]!.board_id).toBeUndefined();
    } finally {
      stop();
      other.close();
      api.close();
    }
  });

  test("a one-shot process that opens edited definitions announces them; a running server follows", async () => {
    const api = await testApi();
    const stop = followReloads(api.svc, () => {});
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
      const cli = await openTestService(api.dir, "embedded");
      cli.close();
      for (let i = 0; i < 50 && api.svc.defs.boards.get("main")!.wip_limits!.doing !== 1; i++) await Bun.sleep(50);
      expect((await api.get("/boards/main")).body.wip_limits.doing).toBe(1);
    } finally {
      stop();
      api.close();
    }
  });

  test("an open after a reload does not announce the set the reload already announced", async () => {
    const api = await testApi();
    const seen: CardEvent[] = [];
    api.svc.subscribe((e) => { if (e.type === "definition_reloaded") seen.push(e); });
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
      expect((await api.post("/workspace/reload")).body.boards).toEqual(["main"]);
      const cli = await openTestService(api.dir, "embedded");
      cli.close();
      await Bun.sleep(50);
      api.svc.pollFeed();
      expect(seen.map((e) => e.board_id)).toEqual(["main"]);
    } finally {
      api.close();
    }
  });

  test("only definition_reloaded makes it reload: other events leave an edit on disk unread (writes stay cheap)", async () => {
    const api = await testApi();
    const stop = followReloads(api.svc, () => {});
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
      await api.task();
      await Bun.sleep(300);
      expect((await api.get("/boards/main")).body.wip_limits.doing).toBe(3);
    } finally {
      stop();
      api.close();
    }
  });
});

describe("POST /boards", () => {
  test("writes the board file and reloads; 201 new, 200 replaced", async () => {
    const api = await testApi();
    try {
      const board = { id: "reviews", name: "Reviews", columns: ["todo", "review", "done"], card_type_ids: ["review"] };
      const r = await api.post("/boards", board);
      expect(r.status).toBe(201);
      expect(r.body.id).toBe("reviews");
      expect(JSON.parse(readFileSync(join(api.dir, "definitions/boards/reviews.json"), "utf8")).name).toBe("Reviews");
      expect((await api.get("/boards/reviews")).status).toBe(200);
      expect((await api.post("/boards", { ...board, name: "Review queue" })).status).toBe(200);
      expect((await api.get("/boards/reviews")).body.name).toBe("Review queue");
    } finally {
      api.close();
    }
  });

  test("Idempotency-Key: a replay answers the first call's 201 and body; the key with another board is 422 and writes nothing", async () => {
    const api = await testApi();
    try {
      const h = { "idempotency-key": "board-1" };
      const board = { id: "qb", name: "Queue", columns: ["todo", "done"], card_type_ids: ["task"] };
      const a = await api.post("/boards", board, h);
      // the file changed meanwhile: a replay must not write it back
      editJson(api.dir, "definitions/boards/qb.json", (b) => { b.name = "Edited by hand"; });
      const b = await api.post("/boards", board, h);
      expect([a.status, b.status, b.text, b.headers.get("idempotent-replayed")]).toEqual([201, 201, a.text, "true"]);
      expect(JSON.parse(readFileSync(join(api.dir, "definitions/boards/qb.json"), "utf8")).name).toBe("Edited by hand");
      const other = await api.post("/boards", { ...board, id: "qc" }, h);
      expect([other.status, other.body.error]).toEqual([422, "idempotency_key_reused"]);
      expect(existsSync(join(api.dir, "definitions/boards/qc.json"))).toBe(false);
    } finally {
      api.close();
    }
  });

  test("a board the reload rejects is rolled back (file restored or removed)", async () => {
    const api = await testApi();
    try {
      // checked before it is written: other processes never meet the bad file
      const touched: string[] = [];
      const watcher = watch(join(api.dir, "definitions/boards"), (_e, f) => touched.push(String(f)));
      const bad = await api.post("/boards", { id: "broken", name: "B", columns: ["nowhere"], card_type_ids: ["task"] });
      await Bun.sleep(100);
      watcher.close();
      expect(touched.filter((f) => f.startsWith("broken"))).toEqual([]);
      expect(bad.status).toBe(422);
      expect(bad.body.problems.some((p: any) => p.file === "definitions/boards/broken.json")).toBe(true);
      // the board never reached the disk: `cards check` would find nothing (before: the hint sent the caller there)
      expect(bad.body.hint).toStartWith("problems lists every one");
      expect(existsSync(join(api.dir, "definitions/boards/broken.json"))).toBe(false);
      const before = readFileSync(join(api.dir, "definitions/boards/bugs.json"), "utf8");
      expect((await api.post("/boards", { id: "bugs", name: "x", columns: ["zzz"], card_type_ids: ["bug"] })).status).toBe(422);
      expect(readFileSync(join(api.dir, "definitions/boards/bugs.json"), "utf8")).toBe(before);
      expect((await api.post("/boards", { id: "../evil", name: "x" })).status).toBe(422);
    } finally {
      api.close();
    }
  });
});

describe("serve mode only", () => {
  test("the embedded CLI says reload and POST /boards need a running server", () => {
    assertBinary();
    const dir = makeWorkspace();
    const r = run(["workspace", "reload"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.error.error).toBe("serve_only");
    expect(r.error.hint).toContain("cards serve");
    expect(run(["api", "POST", "/boards", "--data", "{}"], { cwd: dir }).error.error).toBe("serve_only");
  });

  test("watch mode says when a refused edit is undone (its last line said the files differ from the live set)", async () => {
    const api = await testApi();
    const logs: string[] = [];
    const stop = watchDefinitions(api.svc, (m) => logs.push(m), 50);
    const file = join(api.dir, "definitions/boards/main.json");
    const original = readFileSync(file, "utf8");
    try {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = -1; });
      for (let i = 0; i < 100 && logs.length === 0; i++) await Bun.sleep(20);
      expect(logs[0]).toStartWith("definitions not reloaded, the previous ones stay live");
      writeFileSync(file, original);
      for (let i = 0; i < 100 && logs.length === 1; i++) await Bun.sleep(20);
      expect(logs.slice(1)).toEqual(["definitions on disk match the live set again"]);
    } finally {
      stop();
      api.close();
    }
  });

  test("`cards serve --watch` reloads when a definition file changes", async () => {
    assertBinary();
    const dir = makeWorkspace();
    const srv = await serve(dir, {}, ["--watch"]);
    try {
      editJson(dir, "definitions/boards/main.json", (b) => { b.name = "Watched"; });
      const end = Date.now() + 4000;
      let name = "";
      while (Date.now() < end && name !== "Watched") {
        await Bun.sleep(200);
        name = ((await (await fetch(`${srv.url}/v1/boards/main`)).json()) as any).name;
      }
      expect(name).toBe("Watched");
      expect(run(["workspace", "reload"], { cwd: dir, env: { CARDS_URL: srv.url } }).json.changed).toBe(false);
    } finally {
      await srv.stop();
    }
  });
});
