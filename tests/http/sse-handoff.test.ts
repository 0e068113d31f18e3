/**
 * SSE replay hand-off and slow consumers (src/http/sse.ts),
 * in process. Each test names the mutants it kills.
 */
import { expect, test } from "bun:test";
import { eventStream } from "../../src/http/sse.ts";
import { createCard, deleteCard, patchCard, type Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";
import { readStream } from "../helpers/sse.ts";

const ada = { actor: "ada" } as never;
const big = "t".repeat(2000); // ~2.3 KB a card_created frame

const read = readStream;

async function bigCards(svc: Service, n: number, prefix: string): Promise<void> {
  for (let i = 0; i < n; i++) await createCard(svc, { type_id: "task", title: `${prefix}${i}`, fields: { description: big } }, ada);
}

// X4 (live frames held during the replay are never sent)
test("live events written while a large replay is still unread follow the replay", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    await bigCards(svc, 200, "old"); // ~460 KB of replay: more than the 256 KiB buffer
    const res = eventStream(svc, new Request("http://x/v1/events/stream?since=0&types=card_created"));
    await createCard(svc, { type_id: "task", title: "live one" }, ada);
    await createCard(svc, { type_id: "task", title: "live two" }, ada);
    await Bun.sleep(100); // the flush runs while the client has not read yet
    const { text } = await read(res, (t) => t.includes('"live two"'));
    expect(text).not.toContain(": dropped");
    const titles = [...text.matchAll(/"title":"([^"]+)"/g)].map((m) => m[1]);
    expect(titles).toHaveLength(202);
    expect(titles.slice(-2)).toEqual(["live one", "live two"]);
    expect(text.indexOf(": live after")).toBeLessThan(text.indexOf('"live one"'));
  } finally {
    svc.close();
  }
}, 30_000);

// X1 (a client that does not read during a replay while live events pile up is never dropped)
test("a client that stops reading mid-replay while live events pile up past the buffer is dropped", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    await bigCards(svc, 200, "old");
    const res = eventStream(svc, new Request("http://x/v1/events/stream?since=0&types=card_created"));
    await bigCards(svc, 150, "live"); // ~350 KB held behind the unread replay
    await Bun.sleep(100);
    const { text, done } = await read(res, () => false, 3000);
    expect(text.trimEnd().endsWith(": dropped, reconnect")).toBe(true);
    expect(done).toBe(true);
  } finally {
    svc.close();
  }
}, 30_000);

// X8 (no feed poll before the replay)
test("resuming right after another process's write the feed has not polled never gets that write live", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  const other = await openTestService(dir, "embedded");
  try {
    await createCard(svc, { type_id: "task", title: "seen" }, ada);
    const keep = svc.subscribe(() => {}); // the server's feed exists (its timer polls every 200 ms)
    await createCard(other, { type_id: "task", title: "from another process" }, ada);
    const since = svc.store.lastEventId()!; // the client already has that event
    const res = eventStream(svc, new Request(`http://x/v1/events/stream?since=${since}`));
    svc.pollFeed();
    const { text } = await read(res, (t) => t.includes("from another process"), 800);
    expect(text).toContain(`: live after ${since}`);
    expect(text).not.toContain("from another process");
    keep();
  } finally {
    other.close();
    svc.close();
  }
});

// X16 (a batch published while a sliced flush is writing is never flushed)
test("events published while a flush is still writing its slices are flushed after it", async () => {
  const { SSE_FLUSH_SLICE } = await import("../../src/http/sse.ts");
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const streams = Array.from({ length: SSE_FLUSH_SLICE + 8 }, () =>
      eventStream(svc, new Request("http://x/v1/events/stream?types=card_created")));
    const want: string[] = [];
    let last = "";
    // read as we write (a client that does not read past the buffer is dropped)
    const reading = Promise.all(streams.map((r) => read(r, (t) => last !== "" && t.includes(`"${last}"`), 5000)));
    const end = Date.now() + 150;
    for (let i = 0; Date.now() < end; i++) {
      want.push(`w${i}`);
      await createCard(svc, { type_id: "task", title: `w${i}` }, ada);
      await new Promise((r) => setImmediate(r)); // lets flush slices run between writes
    }
    last = want.at(-1)!;
    const texts = await reading;
    for (const { text } of texts) expect([...text.matchAll(/"title":"([^"]+)"/g)].map((m) => m[1])).toEqual(want);
  } finally {
    svc.close();
  }
}, 30_000);

// X13 (any reload ends a board's streams, not only one that removes the board)
test("a reload that keeps the board leaves its streams open", async () => {
  const { editJson } = await import("../helpers/workspace.ts");
  const { reloadDefinitions } = await import("../../src/service/index.ts");
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  try {
    const res = eventStream(svc, new Request("http://x/v1/events/stream?board_id=bugs&types=card_created"));
    editJson(dir, "definitions/boards/bugs.json", (b) => { b.card_type_ids.push("review"); });
    expect((await reloadDefinitions(svc, { actor: "ada" })).changed).toBe(true);
    await Bun.sleep(200); // past the delay after which a removed board's streams close
    await createCard(svc, { type_id: "bug", title: "still here", fields: { steps: "s" } }, ada);
    const { text, done } = await read(res, (t) => t.includes("still here"), 1000);
    expect(text).not.toContain("was removed");
    expect(done).toBe(false);
    expect(text).toContain("still here");
  } finally {
    svc.close();
  }
});

// X26 (a member that joined mid-batch keeps its offset into later batches)
test("a stream that joined mid-batch gets every later batch whole", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const url = "http://x/v1/events/stream?types=card_created";
    const first = eventStream(svc, new Request(url));
    await createCard(svc, { type_id: "task", title: "before" }, ada);
    const second = eventStream(svc, new Request(url)); // joins with one frame pending
    await Bun.sleep(60); // that batch is flushed
    await createCard(svc, { type_id: "task", title: "later" }, ada);
    const [a, b] = await Promise.all([first, second].map((r) => read(r, (t) => t.includes('"later"'), 1000)));
    expect(a!.text).toContain('"later"');
    expect(b!.text).toContain('"later"');
    expect(b!.text).not.toContain('"before"');
  } finally {
    svc.close();
  }
});

// X27 (a closed stream never leaves its group: its subscription, and the consumer it counts as, stay)
test("closing a stream ends its subscription: its types have no consumer any more", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const res = eventStream(svc, new Request("http://x/v1/events/stream?types=status_timeout"));
    expect(svc.hasConsumer("status_timeout")).toBe(true);
    await res.body!.cancel();
    expect(svc.hasConsumer("status_timeout")).toBe(false);
    expect((svc as any).bus.size).toBe(0);
  } finally {
    svc.close();
  }
});

// X28 (a stream closed between two slices of a flush is written to)
test("a stream closed while a flush is between slices does not stall the other streams", async () => {
  const { SSE_FLUSH_SLICE } = await import("../../src/http/sse.ts");
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const url = "http://x/v1/events/stream?types=card_created";
    const streams = Array.from({ length: SSE_FLUSH_SLICE + 4 }, () => eventStream(svc, new Request(url)));
    const readers = streams.map((s) => s.body!.getReader());
    const dec = new TextDecoder();
    for (const r of readers) { // ": connected", then ": live after ..."
      let t = "";
      while (!t.includes(": live after")) t += dec.decode((await r.read()).value);
    }
    const victim = readers.at(-1)!; // written in the second slice
    // the first stream's read resolves right after the first slice: close the victim then
    const firstGot = readers[0]!.read().then(() => victim.cancel());
    await createCard(svc, { type_id: "task", title: "one" }, ada);
    await firstGot;
    await Bun.sleep(50);
    await createCard(svc, { type_id: "task", title: "two" }, ada);
    let text = "";
    const end = Date.now() + 1000;
    let pending: Promise<{ done: boolean; value?: Uint8Array }> | undefined;
    while (!text.includes('"two"') && Date.now() < end) {
      pending ??= readers[1]!.read();
      const r = await Promise.race([pending, Bun.sleep(50).then(() => null)]);
      if (!r) continue;
      pending = undefined;
      if (r.done) break;
      text += dec.decode(r.value, { stream: true });
    }
    expect(text).toContain('"two"');
    for (const r of readers.slice(0, -1)) void r.cancel().catch(() => {});
  } finally {
    svc.close();
  }
});

// X12 (keepalive interval): an idle stream gets `: keepalive` every 15 s (docs, openapi)
test("an idle stream gets a keepalive comment after 15 s", async () => {
  const { jest } = await import("bun:test");
  const svc = await openTestService(makeWorkspace(), "serve");
  jest.useFakeTimers();
  let res: Response;
  try {
    res = eventStream(svc, new Request("http://x/v1/events/stream"));
    jest.advanceTimersByTime(15_001);
  } finally {
    jest.useRealTimers();
  }
  try {
    const { text } = await read(res!, (t) => t.includes(": keepalive"), 500);
    expect(text).toContain(": keepalive");
  } finally {
    svc.close();
  }
});

test("a stream scoped to a board replays the events of a card deleted since, its tombstone included (the feed's SQL keeps them: the match must too)", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const since = svc.store.lastEventId() ?? "0";
    const bug = await createCard(svc, { type_id: "bug", title: "gone soon", fields: { steps: "s" } }, ada);
    await patchCard(svc, bug.id, { version: bug.version, title: "renamed" }, ada);
    await deleteCard(svc, bug.id, undefined, ada);
    const res = eventStream(svc, new Request(`http://x/v1/events/stream?board_id=bugs&since=${since}`));
    const { text } = await readStream(res, (t) => t.includes("card_deleted"));
    expect([...text.matchAll(/^event: (\S+)$/gm)].map((m) => m[1])).toEqual(["card_created", "field_updated", "card_deleted"]);
  } finally {
    svc.close();
  }
});
