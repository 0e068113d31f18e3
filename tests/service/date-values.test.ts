/**
 * Date field values are stored in one form (UTC, three fractional digits), so filters
 * and sorts, which compare them as text, order them by time (docs/filters.md). Values
 * stored before that rule are brought to it when a workspace is opened; a restore brings
 * a dump's; a filter's operands on a date field are converted as for created_at.
 */
import { constants, Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { dispatch } from "../../src/api/dispatch.ts";
import { DEFINITIONS_SYNCED_KEY } from "../../src/definitions/cache.ts";
import { databasePath, type Service } from "../../src/service/index.ts";
import { DATES_STORED_KEY, storeDatesInForm } from "../../src/service/date-values.ts";
import { editJson, makeWorkspace, openTestService, withService } from "../helpers/workspace.ts";
import { canMount, mount, mounts, unmountAll } from "../helpers/mounts.ts";

// read-only bind mounts need root (CI runs as root); elsewhere that test is skipped
afterAll(unmountAll);

const call = async (svc: Service, method: string, path: string, body?: unknown, query: Record<string, string> = {}) =>
  await dispatch(svc, { method, path, query, headers: { "x-service-actor": "ada" }, body: body === undefined ? undefined : JSON.stringify(body) }) as { status: number; body: any };

/** Creates a task per due value; returns their ids in that order. */
async function tasks(svc: Service, dues: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, due] of dues.entries()) {
    const r = await call(svc, "POST", "/cards", { type_id: "task", title: `t${i}`, fields: { priority: "low", due } });
    expect(r.status).toBe(201);
    ids.push(r.body.id);
  }
  return ids;
}

describe("date values are stored in one form and order by time", () => {
  test("a card written with an offset reads back in UTC; the same instant again is no change", async () => {
    await withService(makeWorkspace(), "embedded", async (svc) => {
      const [id] = await tasks(svc, ["2026-03-01T12:00:00+02:00"]);
      const got = await call(svc, "GET", `/cards/${id}`);
      expect(got.body.fields.due).toBe("2026-03-01T10:00:00.000Z");
      const same = await call(svc, "PATCH", `/cards/${id}`, { version: got.body.version, fields: { due: "2026-03-01T11:00:00+01:00" } });
      expect(same.status).toBe(200);
      expect(same.body.version).toBe(got.body.version);
    });
  });

  test("sort by a date field orders by instant, whatever offset each was written with", async () => {
    await withService(makeWorkspace(), "embedded", async (svc) => {
      // as written: "09:30:00-01:00" (10:30Z) sorted before "10:00:00Z", and "10:00:00Z" after "10:00:00.500Z"
      const ids = await tasks(svc, ["2026-03-01T09:30:00-01:00", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00.500Z", "2026-03-01T11:45:00+02:00"]);
      const page = await call(svc, "GET", "/cards", undefined, { type_id: "task", sort: "fields.due" });
      expect(page.body.items.map((c: { id: string }) => c.id)).toEqual([ids[3], ids[1], ids[2], ids[0]]);
    });
  });

  test("a field that is a date in one type and text in another is compared per type: by instant for the date type, as written for the other", async () => {
    const dir = makeWorkspace();
    editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields.push({ id: "due", label: "Due", type: "string" }); });
    await withService(dir, "embedded", async (svc) => {
      const task = (await tasks(svc, ["2026-03-01T11:00:00+02:00"]))[0]!; // stored as 09:00:00.000Z
      const bug = (await call(svc, "POST", "/cards", { type_id: "bug", title: "b", fields: { severity: "minor", steps: "s", due: "2026-03-01T11:00:00+02:00" } })).body.id as string;
      expect(bug).toBeString();
      const { listCards } = await import("../../src/service/index.ts");
      const ids = async (filter: unknown) => (await listCards(svc, {}, "ada", { filter })).items.map((c) => c.id).sort();
      // 10:00+02:00 is 08:00Z: before, the operand stayed as written for both types, and the task (09:00Z) matched
      expect(await ids({ "fields.due": { $lt: "2026-03-01T10:00:00+02:00" } })).toEqual([]);
      expect(await ids({ "fields.due": "2026-03-01T11:00:00+02:00" })).toEqual([task, bug].sort());
      expect(await ids({ "fields.due": { $ne: "2026-03-01T11:00:00+02:00" } })).not.toContain(task);
      // as text, the bug's "…T11:00:00+02:00" is above "…T09:00:00Z"
      expect(await ids({ "fields.due": { $gte: "2026-03-01T09:00:00Z" } })).toEqual([task, bug].sort());
      expect(await ids({ "fields.due": { $gt: "2026-03-01T09:00:00Z" } })).toEqual([bug]);
      expect(await ids({ "fields.due": { $in: ["2026-03-01T09:00:00Z"] } })).toEqual([task]);
      // a list holding text that is no time converts its times still (before: none of them)
      expect(await ids({ "fields.due": { $in: ["2026-03-01T11:00:00+02:00", "soon"] } })).toEqual([task, bug].sort());
      expect(await ids({ "fields.due": { $nin: ["2026-03-01T11:00:00+02:00", "soon"] } })).toEqual([]);
      // text a date field cannot hold is compared as written, for every type
      expect(await ids({ "fields.due": { $ne: "soon" } })).toEqual([task, bug].sort());
      // a range bound that is no time bounds only text (before: the task's time compared as text)
      expect(await ids({ "fields.due": { $lt: "tomorrow" } })).toEqual([bug]);
      expect(await ids({ "fields.due": { $lt: "2026-3-1" } })).toEqual([bug]);
    });
  });

  test("a field that is a date in two types and multi-line text in a third is compared by instant in both date types, as written in the third", async () => {
    const dir = makeWorkspace();
    editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields.push({ id: "due", label: "Due", type: "text" }); });
    editJson(dir, "definitions/card-types/review.json", (t) => { t.fields.push({ id: "due", label: "Due", type: "date" }); });
    await withService(dir, "embedded", async (svc) => {
      const task = (await tasks(svc, ["2026-03-01T11:00:00+02:00"]))[0]!; // stored as 09:00:00.000Z
      const review = (await call(svc, "POST", "/cards", { type_id: "review", title: "r", fields: { verdict: "approved", due: "2026-03-01T11:00:00+02:00" } })).body.id as string;
      const bug = (await call(svc, "POST", "/cards", { type_id: "bug", title: "b", fields: { severity: "minor", steps: "s", due: "2026-03-01T11:00:00+02:00" } })).body.id as string;
      expect([review, bug]).toEqual([expect.any(String), expect.any(String)]);
      const { listCards } = await import("../../src/service/index.ts");
      const ids = async (filter: unknown) => (await listCards(svc, {}, "ada", { filter })).items.map((c) => c.id).sort();
      // 10:00+02:00 is 08:00Z: neither date type's 09:00Z is before it; the text "…T11:00:00+02:00" is not below "…T10:00:00+02:00"
      expect(await ids({ "fields.due": { $lt: "2026-03-01T10:00:00+02:00" } })).toEqual([]);
      expect(await ids({ "fields.due": "2026-03-01T11:00:00+02:00" })).toEqual([task, review, bug].sort());
      expect(await ids({ "fields.due": { $gt: "2026-03-01T09:00:00Z" } })).toEqual([bug]);
    });
  });

  test("a board's saved filter on a field that is a date in one of its types and text in another compares per type", async () => {
    const dir = makeWorkspace((f) => {
      (f["definitions/boards/main.json"] as any).presentation.filters.due_early = { "fields.due": { $lt: "2026-03-01T12:00:00+02:00" } };
    });
    editJson(dir, "definitions/card-types/bug.json", (t) => { t.fields.push({ id: "due", label: "Due", type: "string" }); });
    await withService(dir, "embedded", async (svc) => {
      const [early] = await tasks(svc, ["2026-03-01T09:00:00Z", "2026-03-01T11:00:00Z"]);
      // as text "…T11:00:00+02:00" is below "…T12:00:00+02:00": the bug is in
      const bug = (await call(svc, "POST", "/cards", { type_id: "bug", title: "b", fields: { severity: "minor", steps: "s", due: "2026-03-01T11:00:00+02:00" } })).body.id as string;
      const page = await call(svc, "GET", "/cards", undefined, { board_id: "main", filter: "due_early" });
      // 12:00+02:00 is 10:00Z: the 11:00Z task is after it (before: compared as text, it was in)
      expect(page.body.items.map((c: { id: string }) => c.id).sort()).toEqual([early, bug].sort());
    });
  });

  test("take-next with a date bound in another offset picks by instant", async () => {
    await withService(makeWorkspace(), "embedded", async (svc) => {
      const [early, late] = await tasks(svc, ["2026-03-01T09:00:00Z", "2026-03-01T11:00:00Z"]);
      // 12:00+02:00 is 10:00Z: as text it was above both values, and take-next handed out the late one too
      const before = await call(svc, "POST", "/cards/take-next", { type_id: "task", dry_run: true, filter: { "fields.due": { $gte: "2026-03-01T12:00:00+02:00" } } });
      expect(before.body.card?.id).toBe(late);
      const after = await call(svc, "POST", "/cards/take-next", { type_id: "task", dry_run: true, filter: { "fields.due": { $lt: "2026-03-01T12:00:00+02:00" } } });
      expect(after.body.card?.id).toBe(early);
      const bad = await call(svc, "POST", "/cards/take-next", { type_id: "task", filter: { "fields.due": { $lt: "tomorrow" } } });
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ error: "validation_failed", field: "filter.fields.due.$lt" });
    });
  });

  test("a board's saved filter with a date bound in another offset scopes by instant; a bound that is no time is a load problem", async () => {
    const dir = makeWorkspace((f) => {
      const main = f["definitions/boards/main.json"] as any;
      main.presentation.filters.due_early = { "fields.due": { $lt: "2026-03-01T12:00:00+02:00" } };
    });
    await withService(dir, "embedded", async (svc) => {
      const [early] = await tasks(svc, ["2026-03-01T09:00:00Z", "2026-03-01T11:00:00Z"]);
      const page = await call(svc, "GET", "/cards", undefined, { board_id: "main", filter: "due_early" });
      expect(page.body.items.map((c: { id: string }) => c.id)).toEqual([early]);
    });
    editJson(dir, "definitions/boards/main.json", (b) => { b.presentation.filters.due_early = { "fields.due": { $lt: "tomorrow" } }; });
    const e = await openTestService(dir, "embedded").then(() => undefined, (err) => err);
    expect(String(e?.message)).toContain("presentation.filters.due_early");
  });

  test("a board's default_filter with a date bound in another offset scopes the board by instant", async () => {
    const dir = makeWorkspace((f) => { (f["definitions/boards/main.json"] as any).default_filter = { "fields.due": { $lt: "2026-03-01T12:00:00+02:00" } }; });
    await withService(dir, "embedded", async (svc) => {
      const [early] = await tasks(svc, ["2026-03-01T09:00:00Z", "2026-03-01T11:00:00Z"]);
      const page = await call(svc, "GET", "/cards", undefined, { board_id: "main" });
      expect(page.body.items.map((c: { id: string }) => c.id)).toEqual([early]);
    });
  });
});

/** Writes non-canonical date values straight into the database, as a build before this rule stored them. */
function storeAsWrittenBefore(dir: string, id: string, due: string, at: string): void {
  const db = new Database(databasePath(dir));
  try {
    db.run("PRAGMA busy_timeout = 5000");
    db.query("UPDATE cards SET fields = json_set(json_set(fields, '$.due', ?), '$.evidence[0].at', ?) WHERE id = ?").run(due, at, id);
    db.query("DELETE FROM meta WHERE key IN (?, ?)").run(DATES_STORED_KEY, DEFINITIONS_SYNCED_KEY);
  } finally {
    db.close();
  }
}

/** Sets JSON paths of a card's fields straight in the database (as a build before the rule left them) and forgets that dates were brought in line. */
function storeRaw(dir: string, id: string, values: Record<string, string>): void {
  const db = new Database(databasePath(dir));
  try {
    db.run("PRAGMA busy_timeout = 5000");
    for (const [path, v] of Object.entries(values)) db.query("UPDATE cards SET fields = json_set(fields, ?, ?) WHERE id = ?").run(path, v, id);
    db.query("DELETE FROM meta WHERE key IN (?, ?)").run(DATES_STORED_KEY, DEFINITIONS_SYNCED_KEY);
  } finally {
    db.close();
  }
}

/** On a file opened read-only, the rewrite is refused before it walks a single card. */
async function expectRefusedWithoutWalking(svc: Service): Promise<void> {
  let walks = 0;
  const iterate = svc.store.iterateCards.bind(svc.store);
  svc.store.iterateCards = () => { walks++; return iterate(); };
  expect(svc.store.readOnly()).toBe(true);
  expect((await storeDatesInForm(svc).catch((e) => e))?.code).toBe("unavailable");
  expect(walks).toBe(0);
}

describe("values stored before the rule are brought to it", () => {
  test("the next open rewrites them as the same instants, keeping version, updated_at and the event log", async () => {
    const dir = makeWorkspace();
    const { id, before, events } = await withService(dir, "embedded", async (svc) => {
      const [id] = await tasks(svc, ["2026-03-01T10:00:00Z"]);
      expect((await call(svc, "POST", `/cards/${id}/fields/evidence/append`, { version: 1, entry: { note: "n", at: "2026-03-01T10:00:00Z" } })).status).toBe(201);
      const before = (await call(svc, "GET", `/cards/${id}`)).body;
      return { id: id!, before, events: svc.store.eventCount() };
    });
    storeAsWrittenBefore(dir, id, "2026-03-01T12:00:00+02:00", "2026-03-01t09:00:00.25z");
    await withService(dir, "embedded", async (svc) => {
      const after = (await call(svc, "GET", `/cards/${id}`)).body;
      expect(after.fields.due).toBe("2026-03-01T10:00:00.000Z");
      expect(after.fields.evidence[0]).toMatchObject({ note: "n", at: "2026-03-01T09:00:00.250Z", entry_id: before.fields.evidence[0].entry_id });
      expect({ version: after.version, updated_at: after.updated_at }).toEqual({ version: before.version, updated_at: before.updated_at });
      expect(svc.store.eventCount()).toBe(events);
      // recorded: the open after this one does not read the cards again
      expect(svc.store.readMeta(DATES_STORED_KEY)).toBeDefined();
      const page = await call(svc, "POST", "/cards/take-next", { type_id: "task", dry_run: true, filter: { "fields.due": "2026-03-01T10:00:00Z" } });
      expect(page.body.card?.id).toBe(id);
    });
  });

  test("a value that is no instant of the years 0000-9999 in UTC is left as it is (nothing to store it as)", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => (await tasks(svc, ["2026-03-01T10:00:00Z"]))[0]!);
    storeRaw(dir, id, { "$.due": "0000-01-01t00:30:00+01:00" });
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.due).toBe("0000-01-01t00:30:00+01:00");
      expect(svc.store.readMeta(DATES_STORED_KEY)).toBeDefined();
    });
  });

  test("every date of every entry is brought to the form: each entry, each date item field, one missing from an entry; a done card too", async () => {
    const dir = makeWorkspace((f) => {
      (f["definitions/card-types/task.json"] as any).fields.find((d: { id: string }) => d.id === "evidence").item_fields.push({ id: "until", label: "Until", type: "date" });
    });
    const id = await withService(dir, "embedded", async (svc) => {
      const r = await call(svc, "POST", "/cards", { type_id: "task", title: "t", status: "done", fields: { priority: "low", evidence: [{ note: "a", at: "2026-03-01T10:00:00Z", until: "2026-03-02T10:00:00Z" }, { note: "b", until: "2026-03-03T10:00:00Z" }] } });
      expect(r.status).toBe(201);
      return r.body.id as string;
    });
    storeRaw(dir, id, { "$.evidence[0].at": "2026-03-01T12:00:00+02:00", "$.evidence[0].until": "2026-03-02T12:00:00+02:00", "$.evidence[1].until": "2026-03-03T12:00:00+02:00" });
    await withService(dir, "embedded", async (svc) => {
      const ev = (await call(svc, "GET", `/cards/${id}`)).body.fields.evidence;
      expect(ev.map((e: Record<string, unknown>) => [e.at, e.until])).toEqual([["2026-03-01T10:00:00.000Z", "2026-03-02T10:00:00.000Z"], [undefined, "2026-03-03T10:00:00.000Z"]]);
    });
  });

  test("a type whose only dates are item fields of a repeating field has them brought to the form", async () => {
    const dir = makeWorkspace((f) => {
      const task = f["definitions/card-types/task.json"] as any;
      task.fields = task.fields.filter((d: { id: string }) => d.id !== "due");
      const main = f["definitions/boards/main.json"] as any;
      main.presentation.card_preview.task = ["priority"];
    });
    const id = await withService(dir, "embedded", async (svc) => {
      const r = await call(svc, "POST", "/cards", { type_id: "task", title: "t", fields: { priority: "low", evidence: [{ note: "a", at: "2026-03-01T10:00:00Z" }] } });
      expect(r.status).toBe(201);
      return r.body.id as string;
    });
    storeRaw(dir, id, { "$.evidence[0].at": "2026-03-01T12:00:00+02:00" });
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.evidence[0].at).toBe("2026-03-01T10:00:00.000Z");
    });
  });

  test("an item field that becomes a date keeps its values as written at the next open, as a top-level field does (SPEC: definitions never change cards)", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => {
      const r = await call(svc, "POST", "/cards", { type_id: "task", title: "t", fields: { priority: "low", evidence: [{ note: "2026-03-01T12:00:00+02:00" }] } });
      expect(r.status).toBe(201);
      return r.body.id as string;
    });
    editJson(dir, "definitions/card-types/task.json", (t) => { t.fields.find((f: { id: string }) => f.id === "evidence").item_fields.find((i: { id: string }) => i.id === "note").type = "date"; });
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.evidence[0].note).toBe("2026-03-01T12:00:00+02:00");
    });
  });

  test("a card written while the rewrite goes on is not skipped (before: the walk by updated_at passed over it, and the set was recorded as done)", async () => {
    const dir = makeWorkspace();
    await withService(dir, "embedded", async (svc) => {
      const ids = await tasks(svc, Array.from({ length: 520 }, () => "2026-03-01T10:00:00Z"));
      const db = new Database(databasePath(dir));
      db.run("PRAGMA busy_timeout = 5000");
      db.run("UPDATE cards SET fields = json_set(fields, '$.due', '2026-03-01T12:00:00+02:00')");
      db.query("DELETE FROM meta WHERE key = ?").run(DATES_STORED_KEY);
      // the first card (the oldest) is claimed by another process once the rewrite has begun:
      // its updated_at moves to the front, its fields stay as they are
      const write = svc.store.write.bind(svc.store);
      let first = true;
      svc.store.write = ((fn: Parameters<typeof write>[0]) => {
        if (first) {
          first = false;
          db.query("UPDATE cards SET owner = 'bob', version = version + 1, updated_at = '2099-01-01T00:00:00.000Z' WHERE id = ?").run(ids[0]!);
        }
        return write(fn);
      }) as typeof svc.store.write;
      try {
        expect(await storeDatesInForm(svc)).toBe(520);
      } finally {
        svc.store.write = write;
        db.close();
      }
      const left = svc.store.listCards({ typeIds: ["task"], limit: 1000 }).items.filter((c) => c.fields.due !== "2026-03-01T10:00:00.000Z");
      expect(left.map((c) => c.id)).toEqual([]);
    });
  }, 30_000);

  test("a field that becomes a date keeps its values as written, through the reload and later opens (SPEC: reloading never changes cards); writing the field stores the form", async () => {
    const dir = makeWorkspace();
    const written = "2026-03-01T12:00:00+02:00";
    const id = await withService(dir, "serve", async (svc) => {
      const a = await call(svc, "POST", "/cards", { type_id: "task", title: "a", fields: { priority: "low", branch: written } });
      editJson(dir, "definitions/card-types/task.json", (t) => { t.fields.find((f: { id: string }) => f.id === "branch").type = "date"; });
      expect((await call(svc, "POST", "/workspace/reload")).status).toBe(200);
      const got = (await call(svc, "GET", `/cards/${a.body.id}`)).body;
      // before: rewritten to 10:00:00.000Z by the reload, with no version or event
      expect({ branch: got.fields.branch, version: got.version }).toEqual({ branch: written, version: 1 });
      return a.body.id as string;
    });
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.branch).toBe(written);
      const patched = await call(svc, "PATCH", `/cards/${id}`, { version: 1, fields: { branch: written } });
      expect({ branch: patched.body.fields.branch, version: patched.body.version }).toEqual({ branch: "2026-03-01T10:00:00.000Z", version: 2 });
    });
  });

  test("an open whose rewrite fails does not record the set as followed, so the next open tries again", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => (await tasks(svc, ["2026-03-01T10:00:00Z"]))[0]!);
    storeAsWrittenBefore(dir, id, "2026-03-01T12:00:00+02:00", "2026-03-01T10:00:00Z");
    const db = new Database(databasePath(dir));
    db.run("CREATE TRIGGER refuse BEFORE UPDATE ON cards BEGIN SELECT RAISE(ABORT, 'refused'); END");
    try {
      await withService(dir, "embedded", async (svc) => {
        expect((await call(svc, "GET", `/cards/${id}`)).body.fields.due).toBe("2026-03-01T12:00:00+02:00");
        // the marker could be written (meta is no card): before, it was, and no open looked again
        expect(svc.store.readMeta(DEFINITIONS_SYNCED_KEY)).toBeUndefined();
      });
    } finally {
      db.run("DROP TRIGGER refuse");
      db.close();
    }
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.due).toBe("2026-03-01T10:00:00.000Z");
    });
  });

  test.skipIf(!canMount)("a workspace opened read-only with its WAL index beside it (not read as immutable) is not walked either", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => (await tasks(svc, ["2026-03-01T10:00:00Z"]))[0]!);
    storeAsWrittenBefore(dir, id, "2026-03-01T12:00:00+02:00", "2026-03-01T10:00:00Z");
    // the -wal and -shm kept, as a server or a one-shot call leaves them: SQLite opens the file read-only
    const keep = new Database(databasePath(dir));
    keep.fileControl(constants.SQLITE_FCNTL_PERSIST_WAL, 1);
    keep.query("SELECT 1").get();
    keep.close();
    const cards = join(dir, ".cards");
    expect(existsSync(join(cards, "cards.db-shm"))).toBe(true);
    expect(mount("--bind", cards, cards)).toBe(true);
    mounts.push(cards);
    expect(mount("-o", "remount,bind,ro", cards)).toBe(true);
    await withService(dir, "embedded", async (svc) => {
      await expectRefusedWithoutWalking(svc);
    });
    expect(mount("-o", "remount,bind,rw", cards)).toBe(true);
  });

  test("the rewrite rebuilds the search index: a value is found by its stored form, not the one it had", async () => {
    const dir = makeWorkspace();
    // an evidence entry's time is searchable (task.searchable_fields)
    const id = await withService(dir, "embedded", async (svc) => {
      const r = await call(svc, "POST", "/cards", { type_id: "task", title: "t", fields: { priority: "low", evidence: [{ note: "n", at: "2026-03-01T10:00:00Z" }] } });
      return r.body.id as string;
    });
    // stored as written by an older build, and recorded as in the form: this open leaves it and indexes it so
    const db = new Database(databasePath(dir));
    db.query("UPDATE cards SET fields = json_set(fields, '$.evidence[0].at', '2026-03-01T12:00:00+02:00') WHERE id = ?").run(id);
    db.close();
    const { listCards } = await import("../../src/service/index.ts");
    const search = async (svc: Service, q: string) => (await listCards(svc, { q }, "ada")).items.map((c) => c.id);
    await withService(dir, "embedded", async (svc) => { expect(await search(svc, "01T12")).toEqual([id]); });
    const again = new Database(databasePath(dir));
    again.query("DELETE FROM meta WHERE key IN (?, ?)").run(DATES_STORED_KEY, DEFINITIONS_SYNCED_KEY);
    again.close();
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.evidence[0].at).toBe("2026-03-01T10:00:00.000Z");
      expect([await search(svc, "01T10"), await search(svc, "01T12")]).toEqual([[id], []]);
    });
  });

  test.skipIf(!canMount)("a workspace that cannot take the rewrite now (a read-only mount) is not recorded as brought in line, so the next open tries again", async () => {
    const dir = makeWorkspace();
    const id = await withService(dir, "embedded", async (svc) => (await tasks(svc, ["2026-03-01T10:00:00Z"]))[0]!);
    storeAsWrittenBefore(dir, id, "2026-03-01T12:00:00+02:00", "2026-03-01T10:00:00Z");
    const cards = join(dir, ".cards");
    expect(mount("--bind", cards, cards)).toBe(true);
    mounts.push(cards);
    expect(mount("-o", "remount,bind,ro", cards)).toBe(true);
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.due).toBe("2026-03-01T12:00:00+02:00");
      expect(svc.store.readMeta(DATES_STORED_KEY)).toBeUndefined();
      expect(svc.store.readMeta(DEFINITIONS_SYNCED_KEY)).toBeUndefined();
      // asked again (each call on this workspace would), it does not walk every card for
      // values it cannot write
      await expectRefusedWithoutWalking(svc);
    });
    expect(mount("-o", "remount,bind,rw", cards)).toBe(true);
    await withService(dir, "embedded", async (svc) => {
      expect((await call(svc, "GET", `/cards/${id}`)).body.fields.due).toBe("2026-03-01T10:00:00.000Z");
      expect(svc.store.readMeta(DEFINITIONS_SYNCED_KEY)).toBeDefined();
      expect(svc.store.readOnly()).toBe(false);
    });
  });
});

test("a restore brings a dump's date values to the stored form", async () => {
  const dir = makeWorkspace();
  const dump: string[] = [];
  await withService(dir, "embedded", async (svc) => {
    await tasks(svc, ["2026-03-01T10:00:00Z"]);
    const { dumpWorkspace } = await import("../../src/service/index.ts");
    dumpWorkspace(svc, (line: string) => { dump.push(line); });
  });
  const lines = dump.map((l) => {
    const rec = JSON.parse(l);
    if (rec.record === "card") rec.card.fields.due = "2026-03-01T12:00:00+02:00";
    return JSON.stringify(rec);
  });
  const target = makeWorkspace();
  await withService(target, "embedded", async (svc) => {
    const { restoreWorkspace } = await import("../../src/service/index.ts");
    await restoreWorkspace(svc, (async function* () { yield* lines; })());
    const page = await call(svc, "GET", "/cards", undefined, { type_id: "task" });
    expect(page.body.items[0].fields.due).toBe("2026-03-01T10:00:00.000Z");
  });
});

test("the record that a database's dates are in the form is read by the form's version, whatever fields a build listed", async () => {
  const { dateFormRecorded } = await import("../../src/domain/dates.ts");
  expect(dateFormRecorded("1")).toBe(true);
  expect(dateFormRecorded("1:task.due,task.evidence.at")).toBe(true); // written by the builds of 2026-11-25
  expect(dateFormRecorded("2:task.due")).toBe(false);
  expect(dateFormRecorded("10")).toBe(false); // a later version, not this one's prefix
  expect(dateFormRecorded(undefined)).toBe(false);
});
