/**
 * Temporal conditions (SPEC Conditions 3-5): deadlines armed only while a consumer
 * exists, re-armed on re-entry, re-derived after a restart, fired once; card_idle; and
 * the 500-card ceiling of GET /breaches.
 */
import { describe, expect, setSystemTime, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard, dumpWorkspace, listBreaches, listEvents, patchCard, restoreWorkspace, TemporalMonitor, addLink } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const fast = (persist: string[] = []) => (f: Record<string, any>) => {
  const main = f["definitions/boards/main.json"];
  main.monitors.max_time_in_status = { review: "1s" };
  main.monitors.idle_after = "1s";
  f["definitions/workspace.json"].settings.persist_conditions = ["wip_exceeded", ...persist];
};
const ada = { actor: "ada" };

/**
 * Holds the first store write made after `armed()` is called (the firing of a scan
 * started just before) until `release()`; `armed()` resolves once that write is held
 * (false after 3 s without one).
 */
function holdFirstWrite(svc: Awaited<ReturnType<typeof openTestService>>) {
  let arming = false, held = false, release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const write = svc.store.write.bind(svc.store);
  svc.store.write = (async (fn: any) => {
    if (arming && !held) { held = true; await gate; }
    return write(fn);
  }) as typeof svc.store.write;
  return {
    release: () => release(),
    armed: async (): Promise<boolean> => {
      arming = true;
      const end = Date.now() + 3000;
      while (!held && Date.now() < end) await Bun.sleep(20);
      return held;
    },
  };
}

/**
 * A workspace with a monitor (not started), the first store write held at will
 * (holdFirstWrite), and the events of `types` gathered in `got`; `close` puts it all away.
 */
async function gatedMonitor(edit: (f: Record<string, any>) => void, types: string[]) {
  const svc = await openTestService(makeWorkspace(edit));
  const monitor = new TemporalMonitor(svc);
  const gate = holdFirstWrite(svc);
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { if (types.includes(e.type)) got.push(e); }, { types: types as CardEvent["type"][] });
  return { svc, monitor, gate, got, close: () => { gate.release(); off(); monitor.stop(); svc.close(); } };
}

async function toReview(svc: Awaited<ReturnType<typeof openTestService>>, title: string) {
  const c = await createCard(svc, { type_id: "task", title, status: "doing" }, ada);
  return patchCard(svc, c.id, { version: 1, status: "review" }, ada);
}

describe("status_timeout and card_idle", () => {
  test("fire once per entry while a subscriber asks for them; re-entering arms a new deadline", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => got.push(e), { types: ["status_timeout", "card_idle"] });
    try {
      const card = await toReview(svc, "slow");
      await Bun.sleep(1600);
      const timeouts = got.filter((e) => e.type === "status_timeout" && e.card_id === card.id);
      expect(timeouts.length).toBe(1);
      expect(timeouts[0]!.diff).toMatchObject({ board_id: "main", status: "review", max: "1s", since: card.status_since });
      expect(timeouts[0]!.id).toBeUndefined(); // not persisted: a live signal
      const idle = got.filter((e) => e.type === "card_idle" && e.card_id === card.id);
      expect(idle.length).toBe(1);
      expect(idle[0]!.diff).toEqual({ board_id: "main", since: card.updated_at, threshold: "1s" });
      // leave and re-enter review: a new deadline, a second firing
      const back = await patchCard(svc, card.id, { version: card.version, status: "doing" }, ada);
      await patchCard(svc, card.id, { version: back.version, status: "review" }, ada);
      await Bun.sleep(1600);
      expect(got.filter((e) => e.type === "status_timeout" && e.card_id === card.id).length).toBe(2);
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);

  test("no consumer: nothing is armed; a subscriber arriving later gets what is due", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    try {
      const card = await toReview(svc, "unwatched");
      await Bun.sleep(1300);
      expect(svc.store.listSignals(0, 100).filter((s) => s.event.type === "status_timeout")).toEqual([]);
      const got: CardEvent[] = [];
      const off = svc.subscribe((e) => got.push(e), { types: ["status_timeout"] });
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === card.id).length).toBe(1);
      off();
    } finally {
      monitor.stop();
      svc.close();
    }
  }, 10_000);

  test("persisted timeouts are re-derived after a restart and never fire twice", async () => {
    const dir = makeWorkspace(fast(["status_timeout"]));
    const first = await openTestService(dir);
    const card = await toReview(first, "across restarts");
    first.close(); // no monitor was running when the deadline passed
    await Bun.sleep(1200);
    for (let restart = 0; restart < 2; restart++) {
      const svc = await openTestService(dir);
      const monitor = new TemporalMonitor(svc);
      monitor.start();
      await Bun.sleep(400);
      monitor.stop();
      const logged = svc.store.listEvents({ cardId: card.id, types: ["status_timeout"], limit: 10 });
      expect(logged.length).toBe(1);
      expect(logged[0]!.actor).toBe("cards");
      svc.close();
    }
  }, 10_000);
});

describe("more cards due at once than one scan batch (200)", () => {
  test("every one fires in the same scan, not only the first batch", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    try {
      const n = 230;
      for (let i = 0; i < n; i++) await toReview(svc, `due ${i}`);
      await Bun.sleep(1100);
      const got = new Set<string>();
      const off = svc.subscribe((e) => { if (e.card_id) got.add(e.card_id); }, { types: ["status_timeout"] });
      const end = Date.now() + 4000;
      while (got.size < n && Date.now() < end) await Bun.sleep(50);
      off();
      expect(got.size).toBe(n);
    } finally {
      monitor.stop();
      svc.close();
    }
  }, 15_000);
});

describe("the scan's bookmarks", () => {
  test("a scan with the wall clock going on as usual starts at its bookmarks: the cards fired already are not gone over (a write each) again", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    const monitor = new TemporalMonitor(svc);
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (e.type === "status_timeout" || e.type === "card_idle") got.push(e); }, { types: ["status_timeout", "card_idle"] });
    monitor.start();
    try {
      for (let i = 0; i < 3; i++) await toReview(svc, `due ${i}`);
      const end = Date.now() + 4000;
      while (got.length < 6 && Date.now() < end) await Bun.sleep(50);
      expect(got.length).toBe(6);
      let writes = 0;
      const write = svc.store.write.bind(svc.store);
      svc.store.write = ((fn: any) => { writes++; return write(fn); }) as typeof svc.store.write;
      for (let i = 0; i < 3; i++) {
        monitor.kick();
        await Bun.sleep(100);
      }
      expect(writes).toBe(0);
      expect(got.length).toBe(6);
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);
});

describe("cards that come into a board's scope already overdue", () => {
  test("a bug that enters the bugs board (its default_filter) past its time in review fires once", async () => {
    const svc = await openTestService(makeWorkspace((f) => {
      (f["definitions/boards/bugs.json"] as any).monitors = { max_time_in_status: { review: "1s" } };
    }));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    const got: CardEvent[] = [];
    // the bus hands a listener every event: `types` declares what it consumes
    const off = svc.subscribe((e) => { if (e.type === "status_timeout") got.push(e); }, { types: ["status_timeout"] });
    try {
      const bug = (f: Record<string, unknown>) => ({ type_id: "bug", title: "b", status: "review", fields: { severity: "minor", steps: "s", ...f } });
      const outside = await createCard(svc, bug({ resolution: "wontfix" }), ada); // out of the board's scope
      await Bun.sleep(300);
      const inside = await createCard(svc, bug({}), ada);
      await Bun.sleep(1300);
      expect(got.filter((e) => e.card_id === inside.id).length).toBe(1); // the bookmark now stands past `outside`
      // written while still out of the board's scope, overdue: nothing for this board
      await patchCard(svc, outside.id, { version: 1, title: "still wontfix" }, ada);
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === outside.id && (e.diff as any).board_id === "bugs")).toEqual([]);
      await patchCard(svc, outside.id, { version: 2, fields: { resolution: null } }, ada);
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === outside.id && (e.diff as any).board_id === "bugs").length).toBe(1);
      expect((await listBreaches(svc, { board_id: "bugs", type: "status_timeout" })).items.map((i: any) => i.card_id).sort()).toEqual([inside.id, outside.id].sort());
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);

  test("a card that enters while a scan is firing is checked right after that scan, not at the next deadline", async () => {
    const { svc, monitor, gate, got, close } = await gatedMonitor((f) => {
      (f["definitions/boards/bugs.json"] as any).monitors = { max_time_in_status: { review: "1s" } };
    }, ["status_timeout"]);
    try {
      const bug = (f: Record<string, unknown>) => ({ type_id: "bug", title: "b", status: "review", fields: { severity: "minor", steps: "s", ...f } });
      const outside = await createCard(svc, bug({ resolution: "wontfix" }), ada);
      const inside = await createCard(svc, bug({}), ada);
      monitor.start();
      expect(await gate.armed()).toBe(true); // the scan is firing `inside`, overdue
      await Bun.sleep(1100); // `outside` is overdue too by now
      await patchCard(svc, outside.id, { version: 1, fields: { resolution: null } }, ada); // enters mid-scan
      gate.release();
      await Bun.sleep(400); // no deadline is pending: only a scan right after this one finds it
      expect(got.map((e) => e.card_id).sort()).toEqual([inside.id, outside.id].sort());
    } finally {
      close();
    }
  }, 10_000);
});

describe("cards due behind the scan's bookmark", () => {
  test("a card unblocked into a board that shows ready work only ({blocked: false}), overdue and not written, fires both (before: never, until a restart)", async () => {
    const svc = await openTestService(makeWorkspace((f) => {
      fast()(f);
      (f["definitions/boards/main.json"] as any).default_filter = { blocked: false };
    }));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (e.type === "status_timeout" || e.type === "card_idle") got.push(e); }, { types: ["status_timeout", "card_idle"] });
    try {
      const blocker = await createCard(svc, { type_id: "task", title: "blocker", status: "doing" }, ada);
      const waiting = await toReview(svc, "waiting");
      await addLink(svc, waiting.id, { type_id: "blocked-by", target: blocker.id }, ada); // out of the board's scope now
      await Bun.sleep(100);
      const ready = await toReview(svc, "ready");
      await Bun.sleep(1300);
      // `ready` fired: the bookmarks stand past `waiting`
      expect(got.filter((e) => e.card_id === ready.id).map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
      expect(got.filter((e) => e.card_id === waiting.id)).toEqual([]);
      await patchCard(svc, blocker.id, { version: 1, status: "done", force: true }, ada);
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === waiting.id).map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);

  test("a card blocked into a board that shows blocked work only ({blocked: true}) by its blocker reopened, overdue and not written, fires both", async () => {
    const svc = await openTestService(makeWorkspace((f) => {
      fast()(f);
      (f["definitions/boards/main.json"] as any).default_filter = { blocked: true };
    }));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (e.type === "status_timeout" || e.type === "card_idle") got.push(e); }, { types: ["status_timeout", "card_idle"] });
    try {
      const finished = await createCard(svc, { type_id: "task", title: "finished blocker", status: "doing" }, ada);
      const done = await patchCard(svc, finished.id, { version: 1, status: "done", force: true }, ada);
      const open = await createCard(svc, { type_id: "task", title: "open blocker", status: "doing" }, ada);
      const waiting = await toReview(svc, "waiting");
      await addLink(svc, waiting.id, { type_id: "blocked-by", target: finished.id }, ada); // its blocker is done: out of the board's scope
      await Bun.sleep(100);
      const stuck = await toReview(svc, "stuck");
      await addLink(svc, stuck.id, { type_id: "blocked-by", target: open.id }, ada);
      await Bun.sleep(1300);
      // `stuck` fired: the bookmarks stand past `waiting`
      expect(got.filter((e) => e.card_id === stuck.id).map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
      expect(got.filter((e) => e.card_id === waiting.id)).toEqual([]);
      await patchCard(svc, finished.id, { version: done.version, status: "doing", force: true }, ada); // reopened: `waiting` is blocked again
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === waiting.id).map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);
});

describe("re-checked when recorded", () => {
  test("a card that leaves the status while its firing waits for the write lock is not timed out (before: recorded after its move, naming the old status)", async () => {
    const { svc, monitor, gate, close } = await gatedMonitor(fast(["status_timeout"]), ["status_timeout"]);
    try {
      const card = await toReview(svc, "done in time");
      const other = await toReview(svc, "still in review");
      await Bun.sleep(1100);
      monitor.start();
      expect(await gate.armed()).toBe(true); // the scan is about to record `card`'s timeout
      await patchCard(svc, card.id, { version: card.version, status: "done" }, ada);
      gate.release();
      await Bun.sleep(300);
      const events = listEvents(svc, { limit: "100" }).items as CardEvent[];
      const timeouts = events.filter((e) => e.type === "status_timeout");
      expect(timeouts.map((e) => e.card_id)).toEqual([other.id]);
      // and its time is not before the events logged ahead of it
      const ats = events.map((e) => e.at);
      expect(ats).toEqual([...ats].sort());
    } finally {
      close();
    }
  }, 10_000);
});

describe("re-checked when recorded: idle, and an entry that began again", () => {
  test("a card written while its card_idle waits for the write lock is not called idle (its new updated_at has a deadline of its own)", async () => {
    const { svc, monitor, gate, got, close } = await gatedMonitor(fast(), ["card_idle"]);
    try {
      const card = await createCard(svc, { type_id: "task", title: "quiet", status: "doing" }, ada); // doing has no time limit: card_idle only
      await Bun.sleep(1100);
      monitor.start();
      expect(await gate.armed()).toBe(true); // the scan is about to record `card` idle
      const written = await patchCard(svc, card.id, { version: card.version, title: "busy after all" }, ada);
      gate.release();
      await Bun.sleep(300);
      expect(got.filter((e) => e.card_id === card.id)).toEqual([]);
      await Bun.sleep(1000);
      expect(got.filter((e) => e.card_id === card.id).map((e) => (e.diff as any).since)).toEqual([written.updated_at]);
    } finally {
      close();
    }
  }, 10_000);

  test("a card that left the status and came back (the wall clock stepped back meanwhile: overdue at once) while its firing waited is timed out once, for its new entry", async () => {
    const { svc, monitor, gate, got, close } = await gatedMonitor(fast(), ["status_timeout"]);
    const t0 = Date.now();
    try {
      const card = await toReview(svc, "round trip");
      await Bun.sleep(1100);
      monitor.start();
      expect(await gate.armed()).toBe(true); // the scan is about to record `card`'s timeout
      setSystemTime(t0 - 3_600_000); // NTP steps the clock back an hour
      const away = await patchCard(svc, card.id, { version: card.version, status: "doing" }, ada);
      const back = await patchCard(svc, card.id, { version: away.version, status: "review" }, ada);
      setSystemTime(t0 - 3_600_000 + 1500); // the new entry is overdue too
      gate.release();
      await Bun.sleep(300);
      monitor.kick();
      await Bun.sleep(200);
      expect(got.filter((e) => e.card_id === card.id).map((e) => (e.diff as any).since)).toEqual([back.status_since]);
    } finally {
      setSystemTime();
      close();
    }
  }, 10_000);
});

describe("timed when recorded", () => {
  test("a firing that waits for the write lock is timed when it is written: never before an event logged ahead of it", async () => {
    const { svc, monitor, gate, close } = await gatedMonitor(fast(["status_timeout"]), ["status_timeout"]);
    try {
      const card = await toReview(svc, "slow");
      await Bun.sleep(1100);
      monitor.start();
      expect(await gate.armed()).toBe(true); // the scan is about to record `card`'s timeout
      await Bun.sleep(20);
      await createCard(svc, { type_id: "task", title: "written meanwhile" }, ada);
      gate.release();
      await Bun.sleep(300);
      const events = listEvents(svc, { limit: "100" }).items as CardEvent[];
      expect(events.filter((e) => e.type === "status_timeout").map((e) => e.card_id)).toEqual([card.id]);
      const ats = events.map((e) => e.at);
      expect(ats).toEqual([...ats].sort());
    } finally {
      close();
    }
  }, 10_000);
});

describe("the wall clock stepping back", () => {
  test("a card due with a time behind the cards fired before the step still fires (before: never, until a restart)", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    const monitor = new TemporalMonitor(svc);
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (e.type === "status_timeout") got.push(e); }, { types: ["status_timeout"] });
    const t0 = Date.now();
    try {
      setSystemTime(t0);
      monitor.start();
      const before = await toReview(svc, "before the step");
      setSystemTime(t0 + 1500);
      monitor.kick();
      await Bun.sleep(100);
      expect(got.map((e) => e.card_id)).toEqual([before.id]);
      // NTP steps the clock back an hour: a card entering review now has an older status_since
      setSystemTime(t0 - 3_600_000);
      const after = await toReview(svc, "after the step");
      await Bun.sleep(100); // the scan its write asked for: not due yet
      setSystemTime(t0 - 3_600_000 + 1500);
      monitor.kick();
      await Bun.sleep(100);
      expect(got.map((e) => e.card_id)).toEqual([before.id, after.id]);
    } finally {
      setSystemTime();
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);
});

describe("a card two boards watch", () => {
  test("fires once per entry for each board, at that board's limit, naming it", async () => {
    const svc = await openTestService(makeWorkspace((f) => {
      (f["definitions/boards/main.json"] as any).monitors.max_time_in_status = { doing: "1.2s" };
      (f["definitions/boards/bugs.json"] as any).monitors = { max_time_in_status: { doing: "0.6s" } };
    }));
    const monitor = new TemporalMonitor(svc);
    monitor.start();
    const got: Array<{ board: string; at: number }> = [];
    const off = svc.subscribe((e) => { if (e.type === "status_timeout") got.push({ board: (e.diff as any).board_id, at: Date.now() }); }, { types: ["status_timeout"] });
    try {
      const start = Date.now();
      await createCard(svc, { type_id: "bug", title: "watched twice", status: "doing", fields: { severity: "minor", steps: "s" } }, ada);
      await Bun.sleep(2000);
      expect(got.map((g) => g.board)).toEqual(["bugs", "main"]);
      expect(got[0]!.at - start).toBeGreaterThanOrEqual(600);
      expect(got[1]!.at - start).toBeGreaterThanOrEqual(1200);
    } finally {
      off();
      monitor.stop();
      svc.close();
    }
  }, 10_000);
});

describe("once-keys", () => {
  test("pruning by age keeps the keys of temporal conditions while their card is still in that state", async () => {
    const svc = await openTestService();
    try {
      const c = await createCard(svc, { type_id: "task", title: "idle" }, ada);
      const old = "2020-01-01T00:00:00.000Z";
      const keys = [
        `status_timeout:main:${c.id}:${c.status_since}`, // still in that status: kept (a restart would fire it again)
        `card_idle:main:${c.id}:${c.updated_at}`, // still idle since then: kept
        `card_idle:main:${c.id}:2020-01-01T00:00:00.000Z`, // an idle period the card has left: pruned
        "status_timeout:main:card_00000000000000ff:2020-01-01T00:00:00.000Z", // a card that is gone: pruned
        "hook:notify:42", // not temporal: pruned by age
      ];
      await svc.store.write((tx) => { for (const k of keys) expect(tx.claimOnce(k, old)).toBe(true); });
      await svc.store.write((tx) => { tx.pruneOnceKeys(new Date().toISOString()); });
      // claimOnce is true only for a key that is not there
      await svc.store.write((tx) => { expect(keys.map((k) => tx.claimOnce(k, old))).toEqual([false, false, true, true, true]); });
    } finally {
      svc.close();
    }
  });
});

describe("prunes", () => {
  test("obsolete temporal keys behind more than a batch of keys still in force are pruned too (before: the same first 500 came back every prune)", async () => {
    const svc = await openTestService();
    try {
      const c = await createCard(svc, { type_id: "task", title: "idle for good" }, ada);
      const old = "2020-01-01T00:00:00.000Z";
      // 1,200 keys still in force (the card is still idle since then), sorting first
      const live = Array.from({ length: 1200 }, (_, i) => `card_idle:b${String(i).padStart(4, "0")}:${c.id}:${c.updated_at}`);
      // then 50 whose idle period is over
      const over = Array.from({ length: 50 }, (_, i) => `card_idle:z${i}:${c.id}:2020-01-01T00:00:00.000Z`);
      await svc.store.write((tx) => { for (const k of [...live, ...over]) tx.claimOnce(k, old); });
      for (let i = 0; i < 3; i++) await svc.store.write((tx) => { tx.pruneOnceKeys(new Date().toISOString()); });
      await svc.store.write((tx) => {
        expect(over.filter((k) => !tx.claimOnce(k, old))).toEqual([]); // gone: claimable again
        expect(live.filter((k) => tx.claimOnce(k, old))).toEqual([]); // kept
      });
    } finally {
      svc.close();
    }
  });
});

describe("prunes, batched", () => {
  test("a backlog of old idempotency records goes a batch per prune, not in one write (100,000 stalled a write for 265 ms)", async () => {
    const svc = await openTestService();
    try {
      const old = "2020-01-01T00:00:00.000Z";
      await svc.store.write((tx) => {
        for (let i = 0; i < 2500; i++) tx.putIdempotency({ key: `k${i}`, actor: "ada", request_hash: "h", status: 201, body: "{}", created_at: new Date(Date.parse(old) + i).toISOString() }); // oldest first
      });
      const left = () => [0, 999, 1000, 1999, 2000, 2499].map((i) => svc.store.getIdempotency(`k${i}`) !== null);
      await svc.store.write((tx) => { tx.pruneIdempotency(new Date().toISOString()); });
      expect(left()).toEqual([false, false, true, true, true, true]);
      await svc.store.write((tx) => { tx.pruneIdempotency(new Date().toISOString()); });
      await svc.store.write((tx) => { tx.pruneIdempotency(new Date().toISOString()); });
      expect(left()).toEqual([false, false, false, false, false, false]);
    } finally {
      svc.close();
    }
  });
});

describe("prunes keep up", () => {
  const old = "2020-01-01T00:00:00.000Z";
  const seed = (svc: Awaited<ReturnType<typeof openTestService>>, n: number) =>
    svc.store.write((tx) => { for (let i = 0; i < n; i++) tx.claimOnce(`hook:notify:${String(i).padStart(12, "0")}`, old); });
  const left = (svc: Awaited<ReturnType<typeof openTestService>>, n: number) =>
    svc.store.write((tx) => Array.from({ length: n }, (_, i) => `hook:notify:${String(i).padStart(12, "0")}`).filter((k) => !tx.claimOnce(k, old)).length);

  test("a prune that leaves rows behind makes the next writes prune too (before: 1,000 per 200 writes, slower than hooks make once-keys)", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir);
    try {
      await seed(svc, 5000);
      for (let i = 0; i < 205; i++) await createCard(svc, { type_id: "task", title: `w${i}` }, ada);
      expect(await left(svc, 5000)).toBe(0);
    } finally {
      svc.close();
    }
  });

  test("a batch of temporal keys still in force (kept) is no backlog: the prune does not ask every write to go on", async () => {
    const svc = await openTestService();
    try {
      const c = await createCard(svc, { type_id: "task", title: "idle for good" }, ada);
      const live = Array.from({ length: 1200 }, (_, i) => `card_idle:b${String(i).padStart(4, "0")}:${c.id}:${c.updated_at}`);
      await svc.store.write((tx) => { for (const k of live) tx.claimOnce(k, old); });
      expect(await svc.store.write((tx) => tx.pruneOnceKeys(new Date().toISOString()))).toBe(false);
      // and one whose period is over among a full batch is work left
      await svc.store.write((tx) => { tx.deleteMeta("once_keys_prune_after"); tx.claimOnce(`card_idle:a:${c.id}:2020-01-01T00:00:00.000Z`, old); });
      expect(await svc.store.write((tx) => tx.pruneOnceKeys(new Date().toISOString()))).toBe(true);
    } finally {
      svc.close();
    }
  });

  test("a dry run's prune is rolled back with it: the next real write still prunes (before: the rolled-back prune counted as done)", async () => {
    const dir = makeWorkspace();
    const first = await openTestService(dir, "embedded");
    await seed(first, 500);
    await first.store.write((tx) => { tx.setMeta("prune_behind", "1"); });
    first.close();
    const svc = await openTestService(dir, "embedded");
    try {
      await createCard(svc, { type_id: "task", title: "only a preview", dry_run: true }, ada);
      expect(await left(svc, 500)).toBe(500);
      await createCard(svc, { type_id: "task", title: "real" }, ada);
      expect(await left(svc, 500)).toBe(0);
    } finally {
      svc.close();
    }
  });

  test("one-shot processes share the catching up: a process's first write prunes when the database says a prune fell behind", async () => {
    const dir = makeWorkspace();
    const first = await openTestService(dir, "embedded");
    await seed(first, 3000);
    await first.store.write((tx) => { tx.setMeta("prune_behind", "1"); });
    first.close();
    for (let i = 0; i < 4; i++) {
      const call = await openTestService(dir, "embedded");
      await createCard(call, { type_id: "task", title: `call ${i}` }, ada);
      call.close();
    }
    const check = await openTestService(dir, "embedded");
    try {
      expect(await left(check, 3000)).toBe(0);
      expect(check.store.readMeta("prune_behind")).toBe("0");
    } finally {
      check.close();
    }
  });
});

describe("GET /breaches ceiling", () => {
  test("blocked scans stop at 500 cards and say so (truncated, limit): 500 are all listed, the 501st makes it truncated; counts stay exact", async () => {
    const svc = await openTestService(makeWorkspace(), "embedded");
    try {
      const blocker = await createCard(svc, { type_id: "task", title: "blocker" }, ada);
      const waiting = async (i: number) => {
        const c = await createCard(svc, { type_id: "task", title: `waiting ${i}` }, ada);
        await addLink(svc, c.id, { type_id: "depends-on", target: blocker.id }, ada);
      };
      for (let i = 0; i < 500; i++) await waiting(i);
      const full = await listBreaches(svc, { board_id: "main", type: "card_blocked" });
      expect([full.items.length, full.truncated, full.limit]).toEqual([500, undefined, undefined]);
      await waiting(500);
      const r = await listBreaches(svc, { board_id: "main", type: "card_blocked" });
      expect(r.items.length).toBe(500);
      expect(r.truncated).toBe(true);
      expect(r.limit).toBe(500);
      const few = await listBreaches(svc, { board_id: "main", type: "wip_exceeded" });
      expect(few.truncated).toBeUndefined();
      // without board_id: the cards past main's limit are not listed as in no board's scope
      const all = await listBreaches(svc, { type: "card_blocked" });
      expect(all.truncated).toBe(true);
      expect(all.items.filter((i) => i.board_id === undefined)).toEqual([]);
    } finally {
      svc.close();
    }
  }, 30_000);

  test("asked without a board, the scan of blocked cards on no board stops at 500 and says so too", async () => {
    // review taken off main: its cards are on no board, so only the unscoped scan sees them
    const svc = await openTestService(makeWorkspace((f) => {
      const main = f["definitions/boards/main.json"] as any;
      main.card_type_ids = ["task", "bug"];
      delete main.presentation.card_preview.review;
    }), "embedded");
    try {
      const blocker = await createCard(svc, { type_id: "task", title: "blocker" }, ada);
      for (let i = 0; i < 501; i++) {
        const c = await createCard(svc, { type_id: "review", title: `waiting ${i}` }, ada);
        await addLink(svc, c.id, { type_id: "depends-on", target: blocker.id }, ada);
      }
      expect((await listBreaches(svc, { board_id: "main", type: "card_blocked" })).items).toEqual([]);
      const all = await listBreaches(svc, { type: "card_blocked" });
      expect([all.items.length, all.truncated, all.limit]).toEqual([500, true, 500]);
      expect(all.items.filter((i) => i.board_id !== undefined)).toEqual([]);
    } finally {
      svc.close();
    }
  }, 30_000);

  test("temporal scans too: 500 idle cards are all listed; the 501st makes it truncated", async () => {
    const svc = await openTestService(makeWorkspace(fast()), "embedded");
    try {
      for (let i = 0; i < 500; i++) await createCard(svc, { type_id: "task", title: `idle ${i}` }, ada);
      await Bun.sleep(1100);
      const all = await listBreaches(svc, { board_id: "main", type: "card_idle" });
      expect([all.items.length, all.truncated, all.limit]).toEqual([500, undefined, undefined]);
      await createCard(svc, { type_id: "task", title: "idle 500" }, ada);
      await Bun.sleep(1100);
      const over = await listBreaches(svc, { board_id: "main", type: "card_idle" });
      expect([over.items.length, over.truncated, over.limit]).toEqual([500, true, 500]);
    } finally {
      svc.close();
    }
  }, 30_000);
});

describe("persisted board conditions under a board filter", () => {
  test("GET /events?board_id= and the stream's replay include them, as live delivery does", async () => {
    const { listEvents, parseStreamFilter, replayEvents, eventMatcher } = await import("../../src/service/index.ts");
    const svc = await openTestService(makeWorkspace(fast()));
    try {
      const live: CardEvent[] = [];
      const f = parseStreamFilter(svc, { board_id: "main", since: "0" });
      const matches = eventMatcher(svc, f);
      const off = svc.subscribe((e) => { if (matches(e)) live.push(e); });
      for (let i = 0; i < 4; i++) await createCard(svc, { type_id: "task", title: `wip ${i}`, status: "doing" }, ada);
      off();
      const liveWip = live.filter((e) => e.type === "wip_exceeded");
      expect(liveWip.length).toBe(1);
      expect(liveWip[0]!.id).toBeDefined(); // persisted
      const page = listEvents(svc, { board_id: "main", types: "wip_exceeded" });
      const ids = (xs: Array<{ id?: string }>): string[] => xs.map((e) => e.id ?? "");
      expect(ids(page.items)).toEqual(ids(liveWip));
      expect(ids(replayEvents(svc, f).filter(matches))).toEqual(ids(live));
      // another board's filter does not see it
      expect(listEvents(svc, { board_id: "bugs", types: "wip_exceeded" }).items).toEqual([]);
    } finally {
      svc.close();
    }
  });
});

describe("commit order across processes", () => {
  test("a reader of the log publishes another process's signals right after the events they follow", async () => {
    const { deleteCard } = await import("../../src/service/index.ts");
    const dir = makeWorkspace();
    const reader = await openTestService(dir, "serve");
    const writer = await openTestService(dir, "embedded");
    try {
      const got: string[] = [];
      const off = reader.subscribe((e) => got.push(e.type), { types: ["card_created", "card_deleted", "lane_refilled", "lane_drained"] });
      // the todo lane starts empty: the first card refills it, deleting the last drains it
      const a = await createCard(writer, { type_id: "task", title: "A", status: "todo" }, ada);
      const b = await createCard(writer, { type_id: "task", title: "B", status: "todo" }, ada);
      await deleteCard(writer, a.id, undefined, ada);
      await deleteCard(writer, b.id, undefined, ada);
      reader.pollFeed();
      off();
      expect(got).toEqual(["card_created", "lane_refilled", "card_created", "card_deleted", "card_deleted", "lane_drained"]);
    } finally {
      writer.close();
      reader.close();
    }
  });
});

describe("commit order across processes: a write right after another process's", () => {
  test("this process's event does not skip the other's, not yet polled (live delivery loses nothing)", async () => {
    const dir = makeWorkspace();
    const reader = await openTestService(dir, "serve");
    const writer = await openTestService(dir, "embedded");
    try {
      const got: string[] = [];
      const off = reader.subscribe((e) => { if (e.type === "card_created") got.push((e.diff as any).card.title); }, { types: ["card_created"] });
      await createCard(writer, { type_id: "task", title: "A" }, ada); // another process's write, not polled yet
      await createCard(reader, { type_id: "task", title: "B" }, ada); // this process's, right after
      reader.pollFeed();
      off();
      expect(got).toEqual(["A", "B"]);
    } finally {
      writer.close();
      reader.close();
    }
  });
});

describe("GET /breaches reports what holds, per board", () => {
  test("a watched lane holding a card is no lane_limit; board_id keeps to that board; status_timeout's since is status_since", async () => {
    const svc = await openTestService(makeWorkspace(fast()));
    try {
      const items = async (q: Record<string, string>) => (await listBreaches(svc, q)).items as any[];
      // main watches todo (alert_when_empty): empty, it holds; one card in it, it does not
      expect((await items({ type: "lane_limit" })).map((i) => `${i.board_id}:${i.column}`)).toEqual(["main:todo"]);
      await createCard(svc, { type_id: "task", title: "fills todo", status: "todo" }, ada);
      expect(await items({ type: "lane_limit" })).toEqual([]);
      // past its max in review, then edited: the item's since is when it entered review
      const slow = await toReview(svc, "slow");
      const bug = await createCard(svc, { type_id: "bug", title: "b", fields: { steps: "x" } }, ada);
      await addLink(svc, bug.id, { type_id: "blocked-by", target: slow.id }, ada);
      await Bun.sleep(1100);
      const edited = await patchCard(svc, slow.id, { version: slow.version, fields: { description: "still going" } }, ada);
      expect(edited.updated_at).not.toBe(slow.status_since);
      const timeouts = await items({ type: "status_timeout" });
      expect(timeouts.map((i) => [i.card_id, i.since])).toEqual([[slow.id, slow.status_since]]);
      // board_id: that board's items only (the blocked bug is on both boards; the timeout on main only)
      const onBugs = await items({ board_id: "bugs" });
      expect(onBugs.length).toBeGreaterThan(0);
      expect(onBugs.every((i) => i.board_id === "bugs")).toBe(true);
      expect(onBugs.some((i) => i.kind === "status_timeout")).toBe(false);
    } finally {
      svc.close();
    }
  });
});

describe("after a restore", () => {
  test("a persisted condition the restored log holds does not fire again on the restored workspace", async () => {
    const defs = fast(["status_timeout", "card_idle"]);
    const src = await openTestService(makeWorkspace(defs));
    const monitor = new TemporalMonitor(src);
    monitor.start();
    const lines: string[] = [];
    let id = "";
    try {
      id = (await toReview(src, "slow")).id;
      await Bun.sleep(1600);
      const fired = listEvents(src, { types: "status_timeout,card_idle" }).items.filter((e) => e.card_id === id);
      expect(fired.map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
      dumpWorkspace(src, (l) => lines.push(l));
    } finally {
      monitor.stop();
      src.close();
    }
    const dir = makeWorkspace(defs);
    const restorer = await openTestService(dir, "embedded");
    await restoreWorkspace(restorer, (async function* () { yield* lines; })());
    restorer.close();
    const svc = await openTestService(dir);
    const again = new TemporalMonitor(svc);
    again.start();
    try {
      await Bun.sleep(1200);
      svc.pollFeed();
      // before: each fired a second time at start, in the durable log (and to streams and hooks)
      const fired = listEvents(svc, { types: "status_timeout,card_idle" }).items.filter((e) => e.card_id === id);
      expect(fired.map((e) => e.type).sort()).toEqual(["card_idle", "status_timeout"]);
    } finally {
      again.stop();
      svc.close();
    }
  }, 15_000);
});
