/**
 * A reload can put a lane over or under its WIP limit with no card moving (a limit
 * lowered or raised, a board's scope changed). That is a crossing too: wip_exceeded /
 * wip_cleared (lane_drained / lane_refilled for watched lanes) are signalled with the
 * swap. What a lane last signalled is recorded, so processes working with different sets
 * for a while (one read edited files first) neither repeat nor lose a crossing.
 */
import { expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testApi } from "../helpers/http.ts";
import { editJson, makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { createCard, dumpWorkspace, followReloads, patchCard, reloadDefinitions, restoreWorkspace, type Service } from "../../src/service/index.ts";
import type { CardEvent } from "../../src/domain/types.ts";

/** Lets what other processes wrote reach this service's subscribers (the feed polls them). */
async function settle(svc: Service): Promise<void> {
  await Bun.sleep(50);
  svc.pollFeed();
  await Bun.sleep(20);
}

const lanes = (seen: CardEvent[]) =>
  seen.filter((e) => ["wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled"].includes(e.type)).map((e) => [e.type, e.board_id, e.diff]);

test("a WIP limit lowered under a lane's count signals wip_exceeded; raised or removed, wip_cleared", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `doing ${i}`, status: "doing" }); // main: doing limit 3
    expect(lanes(seen)).toEqual([]);
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 2; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["wip_exceeded", "main", { column: "doing", count: 3, limit: 2 }]]);
    expect((await api.get("/breaches?board_id=main&type=wip_exceeded")).body.items.length).toBe(1);

    // another limit that keeps it over: no new crossing
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
    await api.post("/workspace/reload");
    await Bun.sleep(20);
    expect(lanes(seen).length).toBe(1);

    editJson(api.dir, "definitions/boards/main.json", (b) => { delete b.wip_limits.doing; });
    await api.post("/workspace/reload");
    await Bun.sleep(20);
    expect(lanes(seen).slice(1)).toEqual([["wip_cleared", "main", { column: "doing", count: 3, limit: null }]]);
  } finally {
    api.close();
  }
});

test("a board's scope taking cards out of a watched lane signals lane_drained", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    await api.task({ title: "a task in todo", status: "todo" }); // main watches todo for emptiness
    await Bun.sleep(20);
    seen.length = 0; // the lane_refilled of that create
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.default_filter = { owner: "ada" }; });
    const r = await api.post("/workspace/reload");
    expect(r.status).toBe(200);
    await Bun.sleep(20);
    expect(lanes(seen)).toEqual([["lane_drained", "main", { column: "todo", count: 0 }]]);
  } finally {
    api.close();
  }
});

test("servers following the reload do not signal the crossing again", async () => {
  const api = await testApi();
  const other = await openTestService(api.dir, "serve");
  const stop = followReloads(api.svc, () => {});
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `doing ${i}`, status: "doing" });
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
    expect((await reloadDefinitions(other, { actor: "ada" })).changed).toBe(true);
    for (let i = 0; i < 50 && api.svc.defs.boards.get("main")!.wip_limits!.doing !== 1; i++) await Bun.sleep(50);
    await Bun.sleep(50);
    // the sample workspace persists wip_exceeded (settings.persist_conditions): one event
    const events = api.svc.store.listEvents({ types: ["wip_exceeded"], limit: 100 });
    expect(events.map((e) => [e.actor, e.diff])).toEqual([["ada", { column: "doing", count: 3, limit: 1 }]]);
  } finally {
    stop();
    other.close();
    api.close();
  }
});

test("a limit moved back and forth signals every crossing (the recorded state decides, not the set)", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `doing ${i}`, status: "doing" }); // limit 3: not over
    for (const limit of [2, 3, 2, 3]) {
      editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = limit; });
      expect((await api.post("/workspace/reload")).status).toBe(200);
    }
    await Bun.sleep(20);
    expect(lanes(seen).map(([type]) => type)).toEqual(["wip_exceeded", "wip_cleared", "wip_exceeded", "wip_cleared"]);
  } finally {
    api.close();
  }
});

test("a one-shot process writing under edited definitions signals the crossing; the server following the set does not repeat it", async () => {
  const api = await testApi({ edit: (f) => { f["definitions/boards/main.json"].wip_limits.doing = 5; } });
  try {
    for (let i = 0; i < 4; i++) await api.task({ title: `doing ${i}`, status: "doing" });
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 4; });
    const cli = await openTestService(api.dir, "embedded"); // reads the edited files
    try {
      await createCard(cli, { type_id: "task", title: "fifth", status: "doing" }, { actor: "ada" } as never);
    } finally {
      cli.close();
    }
    await reloadDefinitions(api.svc, { actor: "cards" }, { announce: false });
    expect(api.svc.store.listEvents({ types: ["wip_exceeded"], limit: 100 }).map((e) => [e.actor, e.diff])).toEqual([["ada", { column: "doing", count: 5, limit: 4 }]]);
  } finally {
    api.close();
  }
});

test("a lane over its limit is cleared once when another process reads a raised limit first (its open signals it; its write and the server's reload do not again)", async () => {
  const api = await testApi({ edit: (f) => { f["definitions/boards/main.json"].wip_limits.doing = 4; } });
  try {
    const cards = [];
    for (let i = 0; i < 5; i++) cards.push(await api.task({ title: `doing ${i}`, status: "doing" })); // the 5th exceeds 4
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 6; });
    const cli = await openTestService(api.dir, "embedded");
    try {
      await patchCard(cli, cards[0].id, { version: 1, status: "review" }, { actor: "ada" } as never);
    } finally {
      cli.close();
    }
    const signals = api.svc.store.listSignals(0, 1000).map((s) => s.event).filter((e) => e.type === "wip_cleared");
    // the open that read the edited files signals it (5 under 6), not the write after it
    expect(signals.map((e) => e.diff)).toEqual([{ column: "doing", count: 5, limit: 6 }]);
    // and the server, following the set later, owes nothing more
    await reloadDefinitions(api.svc, { actor: "cards" }, { announce: false });
    expect(api.svc.store.listSignals(0, 1000).filter((s) => s.event.type.startsWith("wip_")).length).toBe(1);
  } finally {
    api.close();
  }
});

/** Every lane condition written so far, durable or not, oldest first. */
const laneLog = (api: Awaited<ReturnType<typeof testApi>>) =>
  [...api.svc.store.listEvents({ limit: 1000 }), ...api.svc.store.listSignals(0, 1000).map((s) => s.event)]
    .filter((e) => ["wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled"].includes(e.type))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
    .map((e) => [e.type, e.board_id, e.diff]);

test("lanes that start being watched signal nothing: a new board over its limit, a monitor removed and added again, a board re-added", async () => {
  const api = await testApi();
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `doing ${i}`, status: "doing" });
    const created = await api.post("/boards", { id: "side", name: "Side", columns: ["todo", "doing", "review", "done"], card_type_ids: ["task"], wip_limits: { doing: 1 } });
    expect(created.status).toBe(201);
    expect(laneLog(api)).toEqual([]);

    // todo watched while empty; the monitor goes, a card comes, the monitor comes back
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.monitors.alert_when_empty = []; });
    await api.post("/workspace/reload");
    await api.task({ title: "in todo", status: "todo" });
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.monitors.alert_when_empty = ["todo"]; });
    await api.post("/workspace/reload");
    expect(laneLog(api)).toEqual([]);
  } finally {
    api.close();
  }
});

test("a lane over its limit on a board that goes away and comes back starts afresh", async () => {
  const api = await testApi();
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `review ${i}`, status: "review" }); // limit 2
    expect(laneLog(api).map(([t]) => t)).toEqual(["wip_exceeded"]);
    const main = readFileSync(join(api.dir, "definitions/boards/main.json"), "utf8");
    editJson(api.dir, "definitions/workspace.json", (w) => { w.settings.default_board = "bugs"; });
    rmSync(join(api.dir, "definitions/boards/main.json"));
    expect((await api.post("/workspace/reload")).status).toBe(200);
    for (const c of (await api.get("/cards?status=review&type_id=task")).body.items) await api.del(`/cards/${c.id}`);
    writeFileSync(join(api.dir, "definitions/boards/main.json"), main);
    expect((await api.post("/workspace/reload")).status).toBe(200);
    expect(laneLog(api).map(([t]) => t)).toEqual(["wip_exceeded"]);
  } finally {
    api.close();
  }
});

test("a server still on a replaced set leaves lanes alone until it follows; signals carry exact counts", async () => {
  const api = await testApi({ edit: (f) => { f["definitions/boards/main.json"].wip_limits.doing = 5; } });
  try {
    for (let i = 0; i < 2; i++) await api.task({ title: `doing ${i}`, status: "doing" });
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 2; });
    const cli = await openTestService(api.dir, "embedded");
    try {
      await createCard(cli, { type_id: "task", title: "third", status: "doing" }, { actor: "ada" } as never);
    } finally {
      cli.close();
    }
    // the server, on limit 5 still, would judge 4 cards "under" and clear the lane
    await api.task({ title: "fourth", status: "doing" });
    await reloadDefinitions(api.svc, { actor: "cards" }, { announce: false });
    expect(laneLog(api)).toEqual([["wip_exceeded", "main", { column: "doing", count: 3, limit: 2 }]]);
    // a recorded state that lags far behind (as a process on another set may leave it):
    // the signal says how many the lane holds, not the capped count a write reads
    for (let i = 0; i < 8; i++) await createCard(api.svc, { type_id: "task", title: `more ${i}`, status: "doing" }, { actor: "ada" } as never);
    await api.svc.store.write((tx) => tx.setMeta("lane/main/doing/wip", "under"));
    await api.task({ title: "one more", status: "doing" });
    expect(laneLog(api).at(-1)).toEqual(["wip_exceeded", "main", { column: "doing", count: 13, limit: 2 }]);
  } finally {
    api.close();
  }
});

test("a restore forgets what lanes signalled before it", async () => {
  const src = await testApi();
  const lines: string[] = [];
  try {
    for (let i = 0; i < 2; i++) await src.task({ title: `todo ${i}`, status: "todo" });
    await dumpWorkspace(src.svc, (l: string) => lines.push(l));
  } finally {
    src.close();
  }
  const api = await testApi();
  try {
    // a reload in the empty workspace records todo (watched) as empty
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.review = 5; });
    await api.post("/workspace/reload");
    async function* dump() { for (const l of lines.join("\\n").split("\\n")) yield l; }
    await restoreWorkspace(api.svc, dump());
    await api.task({ title: "one more", status: "todo" });
    expect(laneLog(api)).toEqual([]); // todo was never drained: nothing to refill
  } finally {
    api.close();
  }
});

test("definitions edited while no process ran: the first open signals the crossings against what lanes last signalled, once", async () => {
  const dir = makeWorkspace((f) => {
    (f["definitions/workspace.json"] as any).settings.persist_conditions = ["wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled"];
  });
  const laneEvents = (svc: Service) => svc.store.listEvents({ types: ["wip_exceeded", "wip_cleared", "lane_drained", "lane_refilled"], limit: 100 }).map((e) => [e.type, e.actor, e.diff]);
  const first = await openTestService(dir, "embedded");
  for (let i = 0; i < 3; i++) await createCard(first, { type_id: "task", title: `doing ${i}`, status: "doing" }, { actor: "ada" } as never);
  const before = laneEvents(first);
  first.close();
  expect(before).toEqual([]); // 3 in doing, limit 3: under

  // no server runs: the limit is lowered, and the empty backlog lane gets a limit it never had (silent)
  editJson(dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 2; b.wip_limits.backlog = 0; });
  const second = await openTestService(dir, "embedded");
  // before: nothing, while GET /breaches listed the lane over its limit
  expect(laneEvents(second)).toEqual([["wip_exceeded", "cards", { column: "doing", count: 3, limit: 2 }]]);
  second.close();
  const third = await openTestService(dir, "serve"); // the set is synced: nothing again
  expect(laneEvents(third).length).toBe(1);
  third.close();

  editJson(dir, "definitions/boards/main.json", (b) => { delete b.wip_limits.doing; });
  const fourth = await openTestService(dir, "serve");
  expect(laneEvents(fourth).slice(1)).toEqual([["wip_cleared", "cards", { column: "doing", count: 3, limit: null }]]);
  fourth.close();
});

test("definitions edited while no process ran: a watched lane recorded filled that the new scope empties signals lane_drained at the first open", async () => {
  const dir = makeWorkspace((f) => {
    (f["definitions/workspace.json"] as any).settings.persist_conditions = ["lane_drained", "lane_refilled"];
  });
  const laneEvents = (svc: Service) => svc.store.listEvents({ types: ["lane_drained", "lane_refilled"], limit: 100 }).map((e) => [e.type, e.diff]);
  const first = await openTestService(dir, "embedded");
  await createCard(first, { type_id: "task", title: "in todo", status: "todo" }, { actor: "ada" } as never); // main watches todo
  expect(laneEvents(first)).toEqual([["lane_refilled", { column: "todo", count: 1 }]]);
  first.close();
  // no server runs: the board's scope leaves the card out, so the lane is empty now
  editJson(dir, "definitions/boards/main.json", (b) => { b.default_filter = { owner: "ada" }; });
  const second = await openTestService(dir, "embedded");
  expect(laneEvents(second).slice(1)).toEqual([["lane_drained", { column: "todo", count: 0 }]]);
  second.close();
});

test("a limit removed from a lane over it: wip_cleared once, though a process following the reload judged by its own old set", async () => {
  const api = await testApi();
  const other = await openTestService(api.dir, "serve");
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    for (let i = 0; i < 3; i++) await api.task({ title: `doing ${i}`, status: "doing" });
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 1; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    expect((await reloadDefinitions(other, { actor: "cards" }, { announce: false })).changed).toBe(true);
    editJson(api.dir, "definitions/boards/main.json", (b) => { delete b.wip_limits.doing; });
    expect((await api.post("/workspace/reload")).status).toBe(200);
    // the follower's old set still has the limit, and the lane's record went with it
    expect((await reloadDefinitions(other, { actor: "cards" }, { announce: false })).changed).toBe(true);
    await settle(api.svc);
    expect(lanes(seen).map(([type]) => type)).toEqual(["wip_exceeded", "wip_cleared"]);
  } finally {
    other.close();
    api.close();
  }
});

test("a set is announced once, whichever processes load it; a refused set too, until one loads", async () => {
  const api = await testApi();
  const other = await openTestService(api.dir, "serve");
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  const said = (type: string) => seen.filter((e) => e.type === type).map((e) => [e.actor, e.board_id]);
  try {
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 5; });
    // the other process reloads first (a `cards mcp`, another server), then this server is asked to
    expect((await reloadDefinitions(other, { actor: "cards" })).changed).toBe(true);
    expect((await api.post("/workspace/reload")).body).toMatchObject({ changed: true });
    await settle(api.svc);
    expect(said("definition_reloaded")).toEqual([["cards", "main"]]);

    const file = join(api.dir, "definitions/boards/main.json");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, "{ broken");
    await reloadDefinitions(other, { actor: "cards" }).catch(() => {});
    expect((await api.post("/workspace/reload")).status).toBe(422);
    await settle(api.svc);
    expect(said("definition_reload_failed")).toEqual([["cards", "bugs"], ["cards", "main"]]);

    // fixed, then broken the same way again: a new broken state, announced again
    writeFileSync(file, good.replace('"doing": 5', '"doing": 6'));
    expect((await api.post("/workspace/reload")).status).toBe(200);
    writeFileSync(file, "{ broken");
    expect((await api.post("/workspace/reload")).status).toBe(422);
    await Bun.sleep(20);
    expect(said("definition_reload_failed").length).toBe(4);
  } finally {
    other.close();
    api.close();
  }
});

test("a one-shot call that opens edited files announces the set; the server asked to reload it then says nothing more", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 7; });
    const once = await openTestService(api.dir, "embedded");
    once.close();
    expect((await api.post("/workspace/reload")).body).toMatchObject({ changed: true });
    await settle(api.svc);
    // the open knew the set it replaced (the one the database followed): only main changed
    expect(seen.filter((e) => e.type === "definition_reloaded").map((e) => [e.actor, e.board_id])).toEqual([["cards", "main"]]);
  } finally {
    api.close();
  }
});

test("a one-shot open announces the boards its edit changes: a type's boards, or all of them for workspace.json", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  const oneShot = async (file: string, edit: (j: any) => void) => {
    seen.length = 0;
    editJson(api.dir, file, edit);
    (await openTestService(api.dir, "embedded")).close();
    await settle(api.svc);
    return seen.filter((e) => e.type === "definition_reloaded").map((e) => e.board_id ?? null);
  };
  try {
    expect(await oneShot("definitions/card-types/review.json", (t) => { t.name = "Code review"; })).toEqual(["main"]);
    expect(await oneShot("definitions/card-types/bug.json", (t) => { t.name = "Defect"; })).toEqual(["bugs", "main"]);
    expect(await oneShot("definitions/workspace.json", (w) => { w.name = "Renamed"; })).toEqual(["bugs", "main"]);
    // a set the database never followed (a reload in this process moved it on, the cached
    // row still holds the set before): the open cannot tell what changed and says every board
    editJson(api.dir, "definitions/boards/bugs.json", (b) => { b.name = "Bugs!"; });
    await reloadDefinitions(api.svc, { actor: "ada" });
    expect(await oneShot("definitions/card-types/review.json", (t) => { t.name = "Review"; })).toEqual(["bugs", "main"]);
  } finally {
    api.close();
  }
});

test("a process following an announced set that finds a newer one on disk announces the newer one", async () => {
  const api = await testApi();
  const other = await openTestService(api.dir, "serve");
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 5; });
    const told = (await reloadDefinitions(api.svc, { actor: "ada" })).fingerprint;
    // edited again before the follower reads the files
    editJson(api.dir, "definitions/boards/main.json", (b) => { b.wip_limits.doing = 6; });
    const loaded = await reloadDefinitions(other, { actor: "cards" }, { announce: false, following: told });
    expect(loaded.fingerprint).not.toBe(told);
    await settle(api.svc);
    const announced = seen.filter((e) => e.type === "definition_reloaded" && e.board_id === "main").map((e) => (e.diff as { fingerprint: string }).fingerprint);
    expect(announced).toEqual([told, loaded.fingerprint]);
  } finally {
    other.close();
    api.close();
  }
});

test("a refused set is announced again after the files went back to the live set and broke the same way", async () => {
  const api = await testApi();
  const seen: CardEvent[] = [];
  api.svc.subscribe((e) => seen.push(e));
  try {
    const file = join(api.dir, "definitions/boards/main.json");
    const good = readFileSync(file, "utf8");
    writeFileSync(file, "{ broken");
    expect((await api.post("/workspace/reload")).status).toBe(422);
    writeFileSync(file, good);
    expect((await api.post("/workspace/reload")).body).toMatchObject({ changed: false });
    writeFileSync(file, "{ broken");
    expect((await api.post("/workspace/reload")).status).toBe(422);
    await Bun.sleep(20);
    expect(seen.filter((e) => e.type === "definition_reload_failed" && e.board_id === "main").length).toBe(2);
  } finally {
    api.close();
  }
});
