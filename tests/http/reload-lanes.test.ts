/**
 * A reload can put a lane over or under its WIP limit with no card moving (a limit
 * lowered or raised, a board's scope changed). That is a crossing too: wip_exceeded /
 * wip_cleared (lane_drained / lane_refilled for watched lanes) are signalled with the
 * swap, once per new set, whichever process swaps to it first.
 */
import { expect, test } from "bun:test";
import { testApi } from "../helpers/http.ts";
import { editJson, openTestService } from "../helpers/workspace.ts";
import { followReloads, reloadDefinitions } from "../../src/service/index.ts";
import type { CardEvent } from "../../src/domain/types.ts";

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
