/**
 * The "definitions synced" marker: an open whose definitions the database already follows
 * skips registering declared users; any change of the
 * definitions (a new file set, or a server reload) makes the next open check again.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFINITIONS_SYNCED_KEY, reloadedTo, syncStamp } from "../../src/definitions/cache.ts";
import { dispatch } from "../../src/api/dispatch.ts";
import type { Service } from "../../src/service/index.ts";
import { editJson, makeWorkspace, openTestService, withService } from "../helpers/workspace.ts";


const call = (svc: Service, method: string, path: string, body?: unknown, query: Record<string, string> = {}) =>
  dispatch(svc, { method, path, query, headers: { "x-service-actor": "ada" }, body: body === undefined ? undefined : JSON.stringify(body) });

describe("definitions synced marker", () => {
  test("an open records the set it brought the database in line with", async () => {
    const dir = makeWorkspace();
    await withService(dir, "embedded", async (svc) => {
      expect(svc.store.readMeta(DEFINITIONS_SYNCED_KEY)).toBe(syncStamp(svc.defs));
    });
  });

  test("a user declared in workspace.json after the first open is registered by the next one", async () => {
    const dir = makeWorkspace();
    await withService(dir, "embedded", async () => {});
    editJson(dir, "definitions/workspace.json", (w) => { w.users.push({ id: "zoe", kind: "agent" }); });
    await withService(dir, "embedded", async (svc) => {
      expect(svc.store.getUser("zoe")?.kind).toBe("agent");
      // it announced the new set: marked as loaded and announced, so a server asked to
      // reload it says nothing more
      expect(reloadedTo(svc.store.readMeta(DEFINITIONS_SYNCED_KEY), svc.defs.fingerprint)).toBe(true);
    });
    // the open after it checks once more and records the set
    await withService(dir, "embedded", async (svc) => {
      expect(svc.store.readMeta(DEFINITIONS_SYNCED_KEY)).toBe(syncStamp(svc.defs));
    });
  });

  test("after a server reload to other searchable_fields and a revert of the files, the next open re-indexes", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => {
      const r = await call(svc, "POST", "/cards", { type_id: "task", title: "plain", fields: { branch: "zanzibar" } });
      expect(r.status).toBe(201);
      expect((await call(svc, "GET", "/cards", undefined, { q: "zanzibar" })).body).toMatchObject({ items: [{ type_id: "task" }] });
      return (r.body as { id: string }).id;
    });
    const original = readFileSync(join(dir, "definitions/card-types/task.json"), "utf8");
    await withService(dir, "serve", async (svc) => {
      editJson(dir, "definitions/card-types/task.json", (t) => { t.searchable_fields = ["description"]; });
      expect((await call(svc, "POST", "/workspace/reload")).status).toBe(200);
      expect((await call(svc, "GET", "/cards", undefined, { q: "zanzibar" })).body).toMatchObject({ items: [] });
    });
    writeFileSync(join(dir, "definitions/card-types/task.json"), original);
    await withService(dir, "embedded", async (svc) => {
      const items = ((await call(svc, "GET", "/cards", undefined, { q: "zanzibar" })).body as { items: { id: string }[] }).items;
      expect(items.map((c) => c.id)).toEqual([id]);
    });
  });
});

describe("the marker is written best effort, over the value the open read", () => {
  test("tryWriteMeta writes only over the expected value", async () => {
    const dir = makeWorkspace();
    await withService(dir, "embedded", async (svc) => {
      expect(svc.store.tryWriteMeta("probe", "a", undefined)).toBe(true);
      expect(svc.store.tryWriteMeta("probe", "b", "not a")).toBe(false);
      expect(svc.store.readMeta("probe")).toBe("a");
      expect(svc.store.tryWriteMeta("probe", "b", "a")).toBe(true);
      expect(svc.store.readMeta("probe")).toBe("b");
    });
  });

  test("a database another process is writing is not waited for", async () => {
    const dir = makeWorkspace();
    await withService(dir, "embedded", async () => {});
    const { Database } = await import("bun:sqlite");
    const other = new Database(join(dir, ".cards", "cards.db"));
    other.exec("BEGIN IMMEDIATE");
    try {
      await withService(dir, "embedded", async (svc) => {
        const t0 = performance.now();
        expect(svc.store.tryWriteMeta("probe", "a", undefined)).toBe(false);
        expect(performance.now() - t0).toBeLessThan(1000); // the busy timeout is 5 s: it did not wait for it
      });
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
  });
});

describe("recorded fields per schema version", () => {
  test("a recorded row that is not what the service writes is taken as nothing recorded: a reload and the check still work", async () => {
    const { reloadDefinitions, definitionNotices } = await import("../../src/service/index.ts");
    const { FIELDS_LOADED_KEY } = await import("../../src/service/fields-loaded.ts");
    const svc = await openTestService(makeWorkspace(), "serve");
    try {
      await svc.store.write((tx) => { tx.setMeta(FIELDS_LOADED_KEY, JSON.stringify({ task: "x", bug: { 1: 5 }, review: [1] })); });
      editJson(svc.root, "definitions/card-types/task.json", (t) => { t.schema_version = 2; t.migrations = { 2: { from: 1, summary: "s" } }; });
      expect((await reloadDefinitions(svc, { actor: "ada" })).changed).toBe(true);
      expect(() => svc.store.snapshot((r) => definitionNotices(r, svc.defs))).not.toThrow();
      // the new version's fields are recorded over the unreadable row
      expect(JSON.parse(svc.store.readMeta(FIELDS_LOADED_KEY)!).task["2"]).toMatchObject({ priority: expect.any(String) });
    } finally {
      svc.close();
    }
  });
});

describe("fields changed in place", () => {
  const severity = (f: Record<string, any>, options: string[]) => {
    const sev = f["definitions/card-types/bug.json"].fields.find((x: any) => x.id === "severity");
    sev.options = options;
    sev.default = "minor";
    delete sev.option_themes;
  };
  const notices = async (svc: Awaited<ReturnType<typeof openTestService>>) => {
    const { definitionNotices } = await import("../../src/service/index.ts");
    return svc.store.snapshot((r) => definitionNotices(r, svc.defs)).filter((n) => n.kind === "fields_changed_in_place");
  };

  test("an option holding | or { is read back whole: its removal is named and counted, one added is no change (before: split on |, and a { made every card count)", async () => {
    const { reloadDefinitions, createCard } = await import("../../src/service/index.ts");
    const base = ["critical", "major", "minor", "trivial"];
    const dir = makeWorkspace((f) => severity(f, [...base, "x|y", "a{b"]));
    const svc = await openTestService(dir, "serve");
    try {
      await createCard(svc, { type_id: "bug", title: "holds x|y", fields: { severity: "x|y", steps: "s" } }, { actor: "ada" });
      await createCard(svc, { type_id: "bug", title: "holds minor", fields: { severity: "minor", steps: "s" } }, { actor: "ada" });
      editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields.find((x: any) => x.id === "severity").options = [...base, "a{b", "c{d}=e,f"]; });
      await reloadDefinitions(svc, { actor: "ada" });
      const [n] = await notices(svc);
      expect(n?.count).toBe(1);
      expect(n?.message).toContain("severity: option(s) x|y removed");
      // only added: nothing to say
      editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields.find((x: any) => x.id === "severity").options = [...base, "x|y", "a{b", "z{"]; });
      await reloadDefinitions(svc, { actor: "ada" });
      expect(await notices(svc)).toEqual([]);
    } finally {
      svc.close();
    }
  });

  test("a field recorded in the first text format is compared as that text", async () => {
    const { reloadDefinitions, createCard } = await import("../../src/service/index.ts");
    const { FIELDS_LOADED_KEY } = await import("../../src/service/fields-loaded.ts");
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    try {
      await createCard(svc, { type_id: "bug", title: "b", fields: { severity: "minor", steps: "s", environment: "prod" } }, { actor: "ada" });
      const rec = JSON.parse(svc.store.readMeta(FIELDS_LOADED_KEY)!);
      rec.bug["1"] = { ...rec.bug["1"], severity: "enum:critical|major|minor|trivial", environment: "string" };
      await svc.store.write((tx) => { tx.setMeta(FIELDS_LOADED_KEY, JSON.stringify(rec)); });
      editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields = t.fields.filter((x: any) => x.id !== "environment"); });
      editJson(dir, "definitions/boards/bugs.json", (b) => { b.presentation.card_preview.bug = b.presentation.card_preview.bug.filter((x: string) => x !== "environment"); });
      await reloadDefinitions(svc, { actor: "ada" });
      const [n] = await notices(svc);
      expect(n?.message).toContain("environment removed");
      expect(n?.message).not.toContain("severity"); // the same text as recorded: unchanged
    } finally {
      svc.close();
    }
  });
});
