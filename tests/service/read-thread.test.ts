/**
 * A long-lived process (cards serve, cards mcp) reads costly lists on a thread of its own
 * (store/sqlite/read-thread.ts): a filter over every card's JSON can take seconds at
 * 100,000 cards, and the thread answering requests must go on answering meanwhile. The
 * answers are the ones an embedded call reads on its own thread.
 */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { addLink, claimCard, countBoardCards, createCard, listBreaches, listCards, patchCard, takeNext } from "../../src/service/index.ts";
import { ReadThread, ReadThreadDown } from "../../src/store/sqlite/read-thread.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const as = (actor: string) => ({ actor }) as never;

/**
 * Cards of 200 KB of "a", and a filter of ten $contains of "aaa...ab<i>": each nearly
 * matches everywhere, so the substring searches take ~10 ms a card. A card whose
 * description is "aaa...ab3" matches it.
 */
const NEAR_MISS = (i: number) => `${"a".repeat(45)}b${i}`;
const costlyFilter = { $or: Array.from({ length: 10 }, (_, i) => ({ "fields.description": { $contains: NEAR_MISS(i) } })) };
async function addBigCards(svc: Awaited<ReturnType<typeof openTestService>>, n: number): Promise<void> {
  const big = "a".repeat(200_000);
  for (let i = 0; i < n; i++) await createCard(svc, { type_id: "task", title: `big ${i}`, fields: { description: big } }, as("ada"));
}

test("a costly list runs off the request thread: timers and other reads go on while it reads", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    await addBigCards(svc, 30); // ~0.3 s of reading for costlyFilter
    const small = await createCard(svc, { type_id: "task", title: "small" }, as("ada"));
    const filter = costlyFilter;
    const heavy = listCards(svc, { type_id: "task" }, "ada", { filter });
    expect(heavy).toBeInstanceOf(Promise);
    const order: string[] = [];
    const done = (heavy as Promise<unknown>).then(() => order.push("list"));
    await Bun.sleep(1);
    order.push("timer");
    // a cheap read answers on this thread, at once, while the costly one runs: indexed
    // narrowing (type, status, owner: a board's scope, its "mine" filter) stays here
    const plain = listCards(svc, { type_id: "task", limit: "1" }, "ada");
    expect(plain).not.toBeInstanceOf(Promise);
    expect((plain as { items: Array<{ id: string }> }).items[0]!.id).toBe(small.id);
    expect(listCards(svc, { board_id: "main", status: "backlog", limit: "1" }, "ada")).not.toBeInstanceOf(Promise);
    expect(listCards(svc, { board_id: "main", filter: "mine" }, "ada")).not.toBeInstanceOf(Promise);
    expect(countBoardCards(svc, "main", {}, "ada")).not.toBeInstanceOf(Promise);
    order.push("plain read");
    // what may read every card goes to the thread: other orders (created_at has no index
    // of its own), negations, later pages placed as of an earlier event
    const thread = [
      listCards(svc, { type_id: "task", sort: "-created_at" }, "ada"),
      listCards(svc, { type_id: "task" }, "ada", { filter: { status: { $nin: ["done"] } } }),
      listCards(svc, { type_id: "task", limit: "1", cursor: (plain as { next_cursor: string }).next_cursor }, "ada"),
    ];
    for (const r of thread) expect(r).toBeInstanceOf(Promise);
    await Promise.all(thread);
    await done;
    expect(order.slice(0, 2)).toEqual(["timer", "plain read"]);
    expect(((await heavy) as { items: unknown[] }).items).toEqual([]);
  } finally {
    svc.close();
  }
});

/** A server over 30 costly cards and one the costly filter matches. */
async function withWantedCard(fn: (svc: Awaited<ReturnType<typeof openTestService>>, wanted: { id: string }) => Promise<void>): Promise<void> {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const wanted = await createCard(svc, { type_id: "task", title: "the one", fields: { description: NEAR_MISS(3) } }, as("ada"));
    await addBigCards(svc, 30);
    await fn(svc, wanted);
  } finally {
    svc.close();
  }
}

test("take-next with a costly filter reads its candidates off the request thread", () => withWantedCard(async (svc, wanted) => {
  const filter = costlyFilter;
  const order: string[] = [];
  const taking = takeNext(svc, { type_id: "task", filter }, as("agent-1")).then((r) => { order.push("take-next"); return r; });
  await Bun.sleep(1);
  order.push("timer");
  const r = await taking;
  expect(order).toEqual(["timer", "take-next"]);
  expect(r.card?.id).toBe(wanted.id);
  expect(r.card?.owner).toBe("agent-1");
  // and a dry run reads the same way
  const dry = await takeNext(svc, { type_id: "task", filter, dry_run: true }, as("agent-2"));
  expect(dry.card).toBeNull();
}));

test("a dry run never answers with a card this process claimed while the thread read", () => withWantedCard(async (svc, wanted) => {
  const filter = costlyFilter;
  await listCards(svc, { type_id: "task", limit: "1" }, "ada", { filter: { "fields.description": { $contains: "b9" } } }); // the thread is up
  const dry = takeNext(svc, { type_id: "task", filter, dry_run: true }, as("agent-2"));
  await Bun.sleep(5); // the thread is reading
  const claimed = await claimCard(svc, wanted.id, { version: 1 }, as("agent-1"));
  expect(claimed.owner).toBe("agent-1");
  expect((await dry).card).toBeNull();
}));

test("a filter value outside a field's options is looked up among the cards on the thread too", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    await addBigCards(svc, 30);
    // "bogus" is no option of priority: is a card still holding it? each card's JSON is read
    const r = listCards(svc, { type_id: "task" }, "ada", { filter: { "fields.priority": "bogus" } });
    expect(r).toBeInstanceOf(Promise);
    const order: string[] = [];
    const settled = (r as Promise<unknown>).then(() => order.push("resolved"), (e) => { order.push("refused"); return e; });
    await Bun.sleep(0);
    order.push("timer");
    const err = await settled;
    expect(order).toEqual(["timer", "refused"]);
    expect(err).toMatchObject({ code: "unknown_enum", extra: { field: "filter.fields.priority", valid_options: ["low", "normal", "high", "urgent"] } });
    // (caught, then matched: `expect(promise).rejects` on this error spins bun:test 1.4.5)
    const refused = await takeNext(svc, { type_id: "task", filter: { "fields.priority": "bogus" } }, as("agent-1")).then(() => undefined, (e: unknown) => e);
    expect(refused).toMatchObject({ code: "unknown_enum", extra: { field: "filter.fields.priority" } });
  } finally {
    svc.close();
  }
});

test("lists and counts read on the thread answer as an embedded call does", async () => {
  const dir = makeWorkspace();
  const seed = await openTestService(dir, "embedded");
  const ids: string[] = [];
  try {
    for (let i = 0; i < 12; i++) {
      const c = await createCard(seed, {
        type_id: "task", title: `${i % 3 === 0 ? "walrus" : "otter"} ${i}`,
        fields: { priority: i % 2 ? "high" : "low", estimate_hours: (i * 7) % 13 },
      }, as("ada"));
      ids.push(c.id);
    }
    await addLink(seed, ids[1]!, { type_id: "depends-on", target: ids[2]! }, as("ada"));
    await patchCard(seed, ids[4]!, { version: 1, title: "walrus renamed" }, as("ada"));
  } finally {
    seed.close();
  }
  type Read = (svc: Awaited<ReturnType<typeof openTestService>>) => unknown;
  const reads: Record<string, Read> = {
    filter: (svc) => listCards(svc, { type_id: "task", limit: "5" }, "ada", { filter: { "fields.priority": "high" } }),
    search: (svc) => listCards(svc, { q: "walrus" }, "ada"),
    blocked: (svc) => listCards(svc, { blocked: "true" }, "ada"),
    "has_link": (svc) => listCards(svc, { has_link: "depends-on" }, "ada"),
    "sort by field": (svc) => listCards(svc, { type_id: "task", sort: "-fields.estimate_hours" }, "ada"),
    counts: (svc) => countBoardCards(svc, "main", { q: "otter" }, "ada"),
    "counts, filtered": (svc) => countBoardCards(svc, "main", { blocked: "false" }, "ada"),
  };
  const answers = async (mode: "embedded" | "serve") => {
    const svc = await openTestService(dir, mode);
    try {
      const out: Record<string, unknown> = {};
      for (const [name, read] of Object.entries(reads)) {
        const r = read(svc);
        // on a server the costly ones come back later, from the thread
        if (mode === "serve") expect(r).toBeInstanceOf(Promise);
        out[name] = await r;
      }
      // page 2 of a filtered list, with a card changed between the pages
      const first = (await listCards(svc, { type_id: "task", limit: "5" }, "ada", { filter: { "fields.priority": "high" } })) as { next_cursor: string };
      out["page 2"] = await listCards(svc, { type_id: "task", limit: "5", cursor: first.next_cursor }, "ada", { filter: { "fields.priority": "high" } });
      return out;
    } finally {
      svc.close();
    }
  };
  const embedded = await answers("embedded");
  const served = await answers("serve");
  expect(served).toEqual(embedded);
  expect((embedded.search as { items: unknown[] }).items.length).toBe(5);
  expect((embedded.blocked as { items: Array<{ id: string }> }).items.map((c) => c.id)).toEqual([ids[1]!]);
});

test("GET /breaches reads in one batch on the thread, and answers as an embedded call does", async () => {
  const dir = makeWorkspace();
  const seed = await openTestService(dir, "embedded");
  try {
    const blocker = await createCard(seed, { type_id: "task", title: "blocker" }, as("ada"));
    for (let i = 0; i < 3; i++) {
      const c = await createCard(seed, { type_id: "task", title: `waiting ${i}`, status: "doing" }, as("ada"));
      await addLink(seed, c.id, { type_id: "depends-on", target: blocker.id }, as("ada"));
    }
    await createCard(seed, { type_id: "task", title: "fourth", status: "doing" }, as("ada")); // doing: 4, over its limit of 3
  } finally {
    seed.close();
  }
  const read = async (mode: "embedded" | "serve") => {
    const svc = await openTestService(dir, mode);
    try {
      const r = listBreaches(svc, {});
      expect(r instanceof Promise).toBe(mode === "serve");
      const b = await r;
      return b.items.map((i) => JSON.stringify(i)).sort();
    } finally {
      svc.close();
    }
  };
  const served = await read("serve");
  expect(served).toEqual(await read("embedded"));
  expect(served.filter((i) => i.includes('"card_blocked"')).length).toBe(3);
  expect(served.some((i) => i.includes('"wip_exceeded"') && i.includes('"count":4'))).toBe(true);
});

test("closing while costly reads run: they answer unavailable, and the thread's connection is closed", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  await addBigCards(svc, 20);
  const filter = costlyFilter;
  // one read runs, 24 wait behind it on the thread (~4 s of reading, more than close
  // waits for): those are skipped, not read
  const reading = Array.from({ length: 25 }, () => Promise.resolve(listCards(svc, { type_id: "task" }, "ada", { filter })));
  await Bun.sleep(5);
  svc.close();
  const settled = await Promise.allSettled(reading);
  expect(settled.map((r) => (r.status === "rejected" ? (r.reason as { code?: string }).code : r.status))).toEqual(Array(25).fill("unavailable"));
  // every connection closed: the WAL is checkpointed and left empty, as after any close
  expect(statSync(join(dir, ".cards", "cards.db-wal")).size).toBe(0);
});

test("a stopped or failed thread hands its reads back (ReadThreadDown), and one that cannot open the file says so", async () => {
  const config = () => ({ workspaceId: "w", doneStatus: "done", search: [] });
  const missing = new ReadThread({ path: "/nonexistent/dir/cards.db", searchPath: "/nonexistent/dir/search.db", cacheKib: 1024 }, config);
  // SQLite's own error, with its code, as a read on the calling thread would throw it
  await expect(missing.run("page", { limit: 1 })).rejects.toMatchObject({ code: "SQLITE_CANTOPEN" });
  missing.stop();
  await expect(missing.run("page", { limit: 1 })).rejects.toBeInstanceOf(ReadThreadDown);
});
