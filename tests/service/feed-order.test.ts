/**
 * feed ordering / cursor tests (src/events/feed.ts).
 * Each test names the mutants of mutation round 4 it kills (a change to the code that survived the suite before).
 */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard, type Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;
const lane = ["lane_refilled", "lane_drained", "transition_rejected"];
const label = (e: CardEvent) => (e.id ? `e${e.id}` : `s:${e.type}`);

/** A server's service and another process's (an embedded CLI) on one workspace, closed after `fn`. */
async function withServerAndOther(fn: (svc: Service, other: Service) => Promise<void>): Promise<void> {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  const other = await openTestService(dir, "embedded");
  try {
    await fn(svc, other);
  } finally {
    other.close();
    svc.close();
  }
}


// F1 (contiguity check on events dropped) and F15 (no poll when not contiguous)
test("another process's write just before ours is published, before ours, as our write returns", () => withServerAndOther(async (svc, other) => {
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { got.push(e); });
  const theirs = await createCard(other, { type_id: "task", title: "theirs" }, ada);
  const ours = await createCard(svc, { type_id: "task", title: "ours" }, ada);
  // synchronously after our write: both, theirs first (no wait for the 200 ms timer)
  expect(got.map((e) => e.card_id)).toEqual([theirs.id, ours.id]);
  off();
}));

// F2 (contiguity check on signals dropped)
test("another process's signal just before our write's signal is not lost", () => withServerAndOther(async (svc, other) => {
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { got.push(e); }, { types: lane });
  await other.signal({ actor: "bob" } as never, { type: "transition_rejected", diff: { reason: "x" } } as never);
  await createCard(svc, { type_id: "task", title: "refills todo", status: "todo" }, ada);
  await Bun.sleep(400); // a timer poll, too
  expect(got.filter((e) => !e.id).map((e) => e.type)).toEqual(["transition_rejected", "lane_refilled"]);
  off();
}));

// F16 (signals published before events in publishCommitted)
test("a write's condition signal follows the event that caused it", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { got.push(e); }, { types: lane });
    await createCard(svc, { type_id: "task", title: "refills todo", status: "todo" }, ada);
    expect(got.map((e) => e.type)).toEqual(["card_created", "lane_refilled"]);
    off();
  } finally {
    svc.close();
  }
});

// F5 (afterEvent < eventSeq) and F6 (signalsUpTo(seq))
test("another process's signal is published between the event before it and the event after it", () => withServerAndOther(async (svc, other) => {
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { got.push(e); });
  const a = await createCard(other, { type_id: "task", title: "a" }, ada);
  await other.signal({ actor: "bob" } as never, { type: "transition_rejected", card_id: a.id, diff: { reason: "x" } } as never);
  const b = await createCard(other, { type_id: "task", title: "b" }, ada);
  svc.pollFeed();
  expect(got.map((e) => `${e.type}:${e.card_id}`)).toEqual([`card_created:${a.id}`, `transition_rejected:${a.id}`, `card_created:${b.id}`]);
  off();
}));

// F7 (a full page of events no longer holds back the signals that follow later events)
test("a signal written after event 550 of 600 by another process is published after event 550, not after the first page", () => withServerAndOther(async (svc, other) => {
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { got.push(e); });
  for (let i = 0; i < 550; i++) await createCard(other, { type_id: "task", title: `o${i}` }, ada);
  await other.signal({ actor: "bob" } as never, { type: "transition_rejected", diff: { reason: "x" } } as never);
  for (let i = 0; i < 50; i++) await createCard(other, { type_id: "task", title: `p${i}` }, ada);
  svc.pollFeed();
  const at = got.findIndex((e) => !e.id);
  expect(got).toHaveLength(601);
  expect(at).toBe(550);
  off();
}), 30_000);

// F8 (poll stops when the events page is short even if the signals page was full)
test("more than 500 signals from another process all arrive on one poll", () => withServerAndOther(async (svc, other) => {
  const got: CardEvent[] = [];
  const off = svc.subscribe((e) => { got.push(e); });
  for (let i = 0; i < 600; i++) await other.signal({ actor: "bob" } as never, { type: "transition_rejected", diff: { i } } as never);
  svc.pollFeed();
  expect(got).toHaveLength(600);
  off();
}), 30_000);

// F11 (event cursor starts at 0) and F10 (signal cursor starts at 0)
test("a process that starts on a workspace with history publishes only what comes after", async () => {
  const dir = makeWorkspace();
  const before = await openTestService(dir, "embedded");
  await createCard(before, { type_id: "task", title: "old" }, ada);
  await before.signal({ actor: "bob" } as never, { type: "transition_rejected", diff: { reason: "old" } } as never);
  before.close();
  const svc = await openTestService(dir, "serve");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { got.push(e); });
    svc.pollFeed();
    expect(got.map(label)).toEqual([]);
    const fresh = await createCard(svc, { type_id: "task", title: "new" }, ada);
    expect(got.map((e) => e.card_id)).toEqual([fresh.id]);
    off();
  } finally {
    svc.close();
  }
});

// B2 (EventBus unsubscribe is a no-op)
test("an unsubscribed listener gets nothing more and leaves the bus", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { got.push(e); });
    await createCard(svc, { type_id: "task", title: "seen" }, ada);
    off();
    await createCard(svc, { type_id: "task", title: "unseen" }, ada);
    expect(got.map((e) => e.type)).toEqual(["card_created"]);
    expect((svc as any).bus.size).toBe(0);
  } finally {
    svc.close();
  }
});

// mutation round 8: Service.signal's time taken before it waited for the write lock
test("a signal that waited for the write lock is timed when it is written: never before an event logged ahead of it", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { got.push(e); }, { types: lane });
    // the signal's write waits (as behind another writer's) while a card is created
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const write = svc.store.write.bind(svc.store);
    let first = true;
    svc.store.write = (async (fn: any) => {
      if (first) { first = false; await gate; }
      return write(fn);
    }) as typeof svc.store.write;
    const signalled = svc.signal(ada, { type: "transition_rejected", diff: { reason: "x" } } as never);
    await Bun.sleep(20);
    const card = await createCard(svc, { type_id: "task", title: "ahead" }, ada);
    release();
    await signalled;
    svc.pollFeed();
    const created = got.find((e) => e.type === "card_created" && e.card_id === card.id)!;
    const rejected = got.find((e) => e.type === "transition_rejected")!;
    expect(got.indexOf(created)).toBeLessThan(got.indexOf(rejected));
    expect(rejected.at >= created.at).toBe(true);
    off();
  } finally {
    svc.close();
  }
});
