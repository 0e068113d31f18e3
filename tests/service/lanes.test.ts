/**
 * Lane conditions that no status move causes: a field change that takes a card into or
 * out of a board's default_filter, and a reload that gives a watched lane several cards
 * at once (its lane_refilled says how many).
 */
import { expect, test } from "bun:test";
import { testApi, type TestApi } from "../helpers/http.ts";
import { editJson } from "../helpers/workspace.ts";
import type { CardEvent } from "../../src/domain/types.ts";
import { dumpWorkspace, restoreWorkspace } from "../../src/service/index.ts";

const lanes = (seen: CardEvent[]) =>
  seen.filter((e) => ["wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled"].includes(e.type)).map((e) => [e.type, e.board_id, e.diff]);

test("a field change alone moves a bug out of the bugs board's scope and back: wip_cleared, then wip_exceeded", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    const bugs = [];
    for (let i = 0; i < 3; i++) {
      const r = await api.post("/cards", { type_id: "bug", title: `bug ${i}`, status: "doing", fields: { severity: "minor", steps: "run it" } });
      expect(r.status).toBe(201);
      bugs.push(r.body);
    }
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_exceeded", "bugs", { column: "doing", count: 3, limit: 2 }]]); // main's doing limit is 3
    seen.length = 0;
    const out = await api.patch(`/cards/${bugs[0].id}`, { version: 1, fields: { resolution: "wontfix" } }); // bugs: resolution $ne wontfix
    expect(out.status).toBe(200);
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_cleared", "bugs", { column: "doing", count: 2, limit: 2 }]]);
    seen.length = 0;
    await api.patch(`/cards/${bugs[0].id}`, { version: out.body.version, fields: { resolution: null } });
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_exceeded", "bugs", { column: "doing", count: 3, limit: 2 }]]);
  } finally {
    api.close();
  }
});

test("a reload that gives a drained watched lane three cards back signals lane_refilled with count 3", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `todo ${i}`, status: "todo" }); // main watches todo for emptiness
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.default_filter = { owner: "ada" }; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    await Bun.sleep(20);
    seen.length = 0;
    editJson(api.dir, "definitions/boards/main.json", (b) => { delete b.default_filter; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["lane_refilled", "main", { column: "todo", count: 3 }]]);
  } finally {
    api.close();
  }
});

/** A new workspace restored from a dump of tasks in doing, one per priority given: lanes have no recorded state there. */
async function restoredWithDoing(priorities: string[]): Promise<TestApi> {
  const source = await testApi();
  const lines: string[] = [];
  try {
    for (const priority of priorities) await source.task({ status: "doing", fields: { priority } });
    dumpWorkspace(source.svc, (l) => { lines.push(l); });
  } finally {
    source.close();
  }
  const api = await testApi();
  await restoreWorkspace(api.svc, (async function* () { yield* lines; })());
  return api;
}

test("after a restore (no lane state recorded), a lane at its limit that a card goes over signals wip_exceeded", async () => {
  const api = await restoredWithDoing(["low", "low", "low"]); // main's doing limit is 3
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    await api.task({ status: "doing" });
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_exceeded", "main", { column: "doing", count: 4, limit: 3 }]]);
  } finally {
    api.close();
  }
});

test("after a restore (no lane state recorded), a reload whose default_filter takes a lane under its limit signals wip_cleared, judged by the old scope's count", async () => {
  const api = await restoredWithDoing(["low", "low", "high", "high"]);
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.default_filter = { "fields.priority": { $ne: "low" } }; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_cleared", "main", { column: "doing", count: 2, limit: 3 }]]);
  } finally {
    api.close();
  }
});
