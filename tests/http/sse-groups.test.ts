/**
 * Live streams with the same filter share one subscription and one encoded batch per
 * flush (src/http/sse.ts). Each stream still gets exactly the events published after it
 * connected, in order, and its own filter's events only.
 */
import { describe, expect, test } from "bun:test";
import { eventStream, flushDelayMs, SSE_FLUSH_SLICE } from "../../src/http/sse.ts";
import { addComment, claimCard, createCard, type Service } from "../../src/service/index.ts";
import { openTestService } from "../helpers/workspace.ts";
import { readStream } from "../helpers/sse.ts";

const ada = { actor: "ada" } as never;

async function withService(fn: (svc: Service) => Promise<void>): Promise<void> {
  const svc = await openTestService();
  try {
    await fn(svc);
  } finally {
    svc.close();
  }
}

/** Reads a stream's text until `until` matches or the time is up. */
const readUntil = async (res: Response, until: (text: string) => boolean, ms = 2000): Promise<string> => (await readStream(res, until, ms)).text;

const titles = (text: string): string[] => [...text.matchAll(/"title":"([^"]+)"/g)].map((m) => m[1]!);

describe("streams sharing a filter", () => {
  test("a stream that joins while a batch is pending gets only what was published after it connected", () => withService(async (svc) => {
    const url = "http://x/v1/events/stream?types=card_created";
    const first = eventStream(svc, new Request(url));
    await createCard(svc, { type_id: "task", title: "before" }, ada);
    // same tick: the flush of "before" has not run yet
    const second = eventStream(svc, new Request(url));
    await createCard(svc, { type_id: "task", title: "after" }, ada);
    const [a, b] = await Promise.all([
      readUntil(first, (t) => t.includes('"after"')),
      readUntil(second, (t) => t.includes('"after"')),
    ]);
    expect(titles(a)).toEqual(["before", "after"]);
    expect(titles(b)).toEqual(["after"]);
  }));

  test("different filters do not share: each stream sees its own filter's events", () => withService(async (svc) => {
    const all = eventStream(svc, new Request("http://x/v1/events/stream?types=card_created"));
    const bob = eventStream(svc, new Request("http://x/v1/events/stream?types=card_created&actor=bob"));
    const bob2 = eventStream(svc, new Request("http://x/v1/events/stream?actor=bob&types=card_created"));
    await createCard(svc, { type_id: "task", title: "by ada" }, ada);
    await createCard(svc, { type_id: "task", title: "by bob" }, { actor: "bob" } as never);
    const [a, b, b2] = await Promise.all([all, bob, bob2].map((r) => readUntil(r, (t) => t.includes('"by bob"'))));
    expect(titles(a!)).toEqual(["by ada", "by bob"]);
    expect(titles(b!)).toEqual(["by bob"]);
    expect(titles(b2!)).toEqual(["by bob"]);
  }));

  test("filters that differ only in owner, or only in card_id, do not share either", () => withService(async (svc) => {
    const a = await createCard(svc, { type_id: "task", title: "a" }, ada);
    const b = await createCard(svc, { type_id: "task", title: "b" }, ada);
    await claimCard(svc, a.id, { version: 1 }, ada);
    await claimCard(svc, b.id, { version: 1 }, { actor: "agent-1" } as never);
    const open = (q: string) => eventStream(svc, new Request(`http://x/v1/events/stream?types=comment_added&${q}`));
    const streams = [open("owner=ada"), open("owner=agent-1"), open(`card_id=${a.id}`), open(`card_id=${b.id}`)];
    await addComment(svc, a.id, { body: "on a" }, ada);
    await addComment(svc, b.id, { body: "on b" }, ada);
    const texts = await Promise.all(streams.map((r) => readUntil(r, (t) => t.includes("on b"), 600)));
    const cards = texts.map((t) => [...t.matchAll(/"card_id":"(card_[0-9a-f]+)"/g)].map((m) => m[1]));
    expect(cards).toEqual([[a.id], [b.id], [a.id], [b.id]]);
  }));

  test("actor=me is the stream's own actor (X-Service-Actor): two viewers, two filters", () => withService(async (svc) => {
    const me = (who: string) => eventStream(svc, new Request("http://x/v1/events/stream?types=card_created&actor=me", { headers: { "x-service-actor": who } }));
    const asBob = me("bob");
    const asAda = me("ada");
    await createCard(svc, { type_id: "task", title: "by ada" }, ada);
    await createCard(svc, { type_id: "task", title: "by bob" }, { actor: "bob" } as never);
    const [b, a] = await Promise.all([asBob, asAda].map((r) => readUntil(r, (t) => t.includes('"by bob"'), 800)));
    expect(titles(b!)).toEqual(["by bob"]); // before: events of an actor literally named "me": none
    expect(titles(a!)).toEqual(["by ada"]);
  }));
});

describe("flushes written in slices", () => {
  test("more streams than one slice, several bursts: each stream gets every event, in order", () => withService(async (svc) => {
    const n = SSE_FLUSH_SLICE * 3 + 5;
    const streams = Array.from({ length: n }, (_, i) =>
      eventStream(svc, new Request(`http://x/v1/events/stream?types=card_created${i % 2 ? "&actor=ada" : ""}`)));
    const want: string[] = [];
    for (let burst = 0; burst < 4; burst++) {
      for (let k = 0; k < 3; k++) {
        const title = `b${burst}-${k}`;
        want.push(title);
        await createCard(svc, { type_id: "task", title }, ada);
      }
      await Bun.sleep(burst % 2 ? 1 : 25); // bursts in one flush and in separate ones
    }
    const last = want.at(-1)!;
    const texts = await Promise.all(streams.map((r) => readUntil(r, (t) => t.includes(`"${last}"`), 4000)));
    for (const t of texts) expect(titles(t)).toEqual(want);
  }));
});

describe("flush delay", () => {
  test("a few streams get events within ~5 ms; many streams are batched longer, never past 20 ms", () => {
    expect(flushDelayMs(1)).toBeLessThan(5.1);
    expect(flushDelayMs(16)).toBe(6);
    expect(flushDelayMs(200)).toBe(17.5);
    expect(flushDelayMs(10_000)).toBe(20);
  });
});

describe("replay and live hand-off", () => {
  test("another process's event the feed has not polled yet is sent once, live, not also in the replay", async () => {
    const { makeWorkspace } = await import("../helpers/workspace.ts");
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    const other = await openTestService(dir, "embedded");
    try {
      const first = await createCard(svc, { type_id: "task", title: "seen" }, ada);
      const keep = svc.subscribe(() => {}); // the feed exists, at the newest event
      const since = (svc.store.lastEventId())!;
      // written by another process: the server's feed has not polled it yet
      await createCard(other, { type_id: "task", title: "from another process" }, ada);
      const res = eventStream(svc, new Request(`http://x/v1/events/stream?since=${since}`));
      svc.pollFeed();
      // read for a while: a second copy would come with the flush after the poll
      const text = await readUntil(res, (t) => (t.match(/from another process/g) ?? []).length >= 2, 800);
      expect(titles(text).filter((t) => t === "from another process")).toHaveLength(1);
      expect(titles(text)).not.toContain(first.title);
      keep();
    } finally {
      other.close();
      svc.close();
    }
  });
});

describe("a restored log", () => {
  test("is replayed whole to a stream that asks, even before the server's feed has polled it", async () => {
    const { makeWorkspace } = await import("../helpers/workspace.ts");
    const { dumpWorkspace, restoreWorkspace } = await import("../../src/service/index.ts");
    const src = await openTestService(makeWorkspace(), "embedded");
    const lines: string[] = [];
    for (let i = 0; i < 3; i++) await createCard(src, { type_id: "task", title: `restored ${i}` }, ada);
    dumpWorkspace(src, (l) => lines.push(l));
    src.close();
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    const restorer = await openTestService(dir, "embedded");
    try {
      const keep = svc.subscribe(() => {}); // the server's feed exists, at event 0
      await restoreWorkspace(restorer, (async function* () { yield* lines; })());
      const res = eventStream(svc, new Request("http://x/v1/events/stream?since=0"));
      const text = await readUntil(res, (t) => titles(t).length >= 3, 1000);
      expect(titles(text)).toEqual(["restored 0", "restored 1", "restored 2"]);
      keep();
    } finally {
      restorer.close();
      svc.close();
    }
  });
});


describe("a board's stream across reloads", () => {
  test("a type added to the board, or taken off it, reaches streams opened before the reload", async () => {
    const { editJson, makeWorkspace } = await import("../helpers/workspace.ts");
    const { reloadDefinitions } = await import("../../src/service/index.ts");
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "serve");
    try {
      // board bugs shows bugs only; a review card's events are not its
      const before = eventStream(svc, new Request("http://x/v1/events/stream?board_id=bugs&types=card_created"));
      editJson(dir, "definitions/boards/bugs.json", (b) => { b.card_type_ids.push("review"); });
      expect((await reloadDefinitions(svc, { actor: "ada" })).changed).toBe(true);
      const after = eventStream(svc, new Request("http://x/v1/events/stream?board_id=bugs&types=card_created"));
      await createCard(svc, { type_id: "review", title: "now on bugs" }, ada);
      const [a, b] = await Promise.all([readUntil(before, (t) => t.includes("now on bugs")), readUntil(after, (t) => t.includes("now on bugs"))]);
      expect(titles(a)).toEqual(["now on bugs"]);
      expect(titles(b)).toEqual(["now on bugs"]);

      const opened = eventStream(svc, new Request("http://x/v1/events/stream?board_id=bugs&types=card_created"));
      editJson(dir, "definitions/boards/bugs.json", (b) => { b.card_type_ids = b.card_type_ids.filter((t: string) => t !== "review"); });
      expect((await reloadDefinitions(svc, { actor: "ada" })).changed).toBe(true);
      await createCard(svc, { type_id: "review", title: "off bugs again" }, ada);
      await createCard(svc, { type_id: "bug", title: "a bug", fields: { steps: "s" } }, ada);
      expect(titles(await readUntil(opened, (t) => t.includes("a bug")))).toEqual(["a bug"]);
    } finally {
      svc.close();
    }
  });
});

describe("the replay is read as the client reads", () => {
  test("a resuming stream that is not read holds a few pages of its replay, not the whole replay (it held all 500 events: gigabytes for a few hundred streams)", () => withService(async (svc) => {
    const card = await createCard(svc, { type_id: "task", title: "busy" }, ada);
    const body = "c".repeat(64 * 1024);
    for (let i = 0; i < 60; i++) await addComment(svc, card.id, { body }, ada);
    const store = svc.store as { listEvents: (q: { limit?: number }) => unknown[] };
    const real = store.listEvents.bind(store);
    let rowsRead = 0;
    store.listEvents = (q) => {
      const rows = real(q);
      rowsRead += rows.length;
      return rows;
    };
    try {
      const res = eventStream(svc, new Request("http://x/v1/events/stream?since=0"));
      await Bun.sleep(50);
      // the stream's buffer (256 KiB) holds four of the 64 KiB comments, and one page waits
      expect(rowsRead).toBeGreaterThan(0);
      expect(rowsRead).toBeLessThanOrEqual(12);
      // read to the end: every event once, in order, then the live point
      const text = await readUntil(res, (t) => t.includes(": live after"), 5000);
      expect((text.match(/^event: comment_added$/gm) ?? []).length).toBe(60);
      expect((text.match(/^event: card_created$/gm) ?? []).length).toBe(1);
      const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(61);
    } finally {
      store.listEvents = real;
    }
  }));
});
