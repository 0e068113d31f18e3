/** The SSE stream of the compiled server, read with a real SSE client (the `eventsource` package). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventSource } from "eventsource";
import { assertBinary, run, serve, type Server } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { ALL_EVENT_TYPES } from "../../src/domain/types.ts";

interface Got { type: string; id: string; data: any }

/** Opens a stream and collects every event of every type. */
function listen(url: string, headers: Record<string, string> = {}) {
  const got: Got[] = [];
  const es = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }),
  });
  for (const t of ALL_EVENT_TYPES) es.addEventListener(t, (m) => got.push({ type: t, id: m.lastEventId, data: JSON.parse(m.data) }));
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(e);
  });
  return {
    got, es, opened,
    async waitFor(pred: (g: Got[]) => boolean, ms = 3000): Promise<void> {
      const end = Date.now() + ms;
      while (!pred(got)) {
        if (Date.now() > end) throw new Error(`timed out; got ${JSON.stringify(got.map((g) => g.type))}`);
        await Bun.sleep(20);
      }
    },
    close: () => es.close(),
  };
}

/** Creates `n` cards of ~200 KiB each (fills a stalled stream's buffer quickly). */
/**
 * Cards of 200 KB each that a stalled stream is sent: 40 MB, more than the loopback
 * socket buffers can take in for it (autotuned up to tcp_rmem + tcp_wmem, 32 + 4 MB
 * here), so its queue on the server must pass the slow-consumer limit.
 */
const STALL_CARDS = 200;

async function postBigCards(url: string, n: number): Promise<void> {
  const big = "x".repeat(200 * 1024);
  for (let i = 0; i < n; i++) {
    await fetch(`${url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: `big ${i}`, fields: { description: big } }) });
  }
}

/** Everything a stream sends until the server closes it. */
async function readToEnd(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

let server: Server;
let dir: string;
const post = (path: string, body: unknown, actor = "ada") =>
  fetch(`${server.url}/v1${path}`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": actor }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);
const patch = (path: string, body: unknown) =>
  fetch(`${server.url}/v1${path}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

beforeAll(async () => {
  assertBinary();
  dir = makeWorkspace((f) => {
    const main = f["definitions/boards/main.json"] as any;
    main.monitors.max_time_in_status = { doing: "2d", review: "1s" };
    main.monitors.idle_after = "3d";
  });
  server = await serve(dir);
});
afterAll(async () => { await server?.stop(); });

describe("live delivery", () => {
  test("a write through HTTP arrives with its id, name = type, data = the event", async () => {
    const s = listen(`${server.url}/v1/events/stream`);
    await s.opened;
    const card = await post("/cards", { type_id: "task", title: "live" });
    await s.waitFor((g) => g.some((e) => e.data.card_id === card.id));
    const ev = s.got.find((e) => e.data.card_id === card.id)!;
    expect(ev.type).toBe("card_created");
    expect(ev.id).toBe(ev.data.id);
    expect(ev.data.diff.card.title).toBe("live");
    s.close();
  });

  test("a write by an embedded CLI process reaches subscribers within a second", async () => {
    const s = listen(`${server.url}/v1/events/stream?types=card_created`);
    await s.opened;
    const started = Date.now();
    const card = run(["cards", "create", "--type", "task", "--title", "from another process"], { cwd: dir }).json;
    await s.waitFor((g) => g.some((e) => e.data.card_id === card.id), 1500);
    expect(Date.now() - started).toBeLessThan(1500);
    s.close();
  });

  test("filters: types, card_id, actor, owner, board_id", async () => {
    const a = await post("/cards", { type_id: "task", title: "filtered" });
    const bug = await post("/cards", { type_id: "bug", title: "b", fields: { steps: "s" } });
    const byType = listen(`${server.url}/v1/events/stream?types=status_changed`);
    const byCard = listen(`${server.url}/v1/events/stream?card_id=${a.id}`);
    const byActor = listen(`${server.url}/v1/events/stream?actor=agent-2`);
    const byOwner = listen(`${server.url}/v1/events/stream?owner=agent-1`);
    const byBoard = listen(`${server.url}/v1/events/stream?board_id=bugs`);
    await Promise.all([byType.opened, byCard.opened, byActor.opened, byOwner.opened, byBoard.opened]);
    await post(`/cards/${a.id}/claim`, { version: 1 }, "agent-1");
    await patch(`/cards/${a.id}`, { version: 2, status: "todo" });
    await post(`/cards/${bug.id}/comments`, { body: "seen" }, "agent-2");
    await byCard.waitFor((g) => g.length >= 2);
    await byActor.waitFor((g) => g.length >= 1);
    await byBoard.waitFor((g) => g.length >= 1);
    await byType.waitFor((g) => g.length >= 1);
    await byOwner.waitFor((g) => g.length >= 2);
    expect(byType.got.every((e) => e.type === "status_changed")).toBe(true);
    expect(byCard.got.every((e) => e.data.card_id === a.id)).toBe(true);
    expect(byActor.got.map((e) => e.type)).toEqual(["comment_added"]);
    expect(byBoard.got.every((e) => e.data.card_id === bug.id)).toBe(true);
    expect(byOwner.got.every((e) => e.data.card_id === a.id)).toBe(true);
    for (const s of [byType, byCard, byActor, byOwner, byBoard]) s.close();
  });

  test("a bad parameter is a 4xx envelope, not a stream", async () => {
    const r = await fetch(`${server.url}/v1/events/stream?types=nope`);
    expect(r.status).toBe(422);
    expect(((await r.json()) as any).valid_options).toContain("card_created");
    expect((await fetch(`${server.url}/v1/events/stream?board_id=nope`)).status).toBe(404);
    // a card that never existed: before, keep-alives forever
    const typo = await fetch(`${server.url}/v1/events/stream?card_id=card_00000000000000ff`);
    expect([typo.status, ((await typo.json()) as any).error]).toEqual([404, "not_found"]);
    // a filter given twice is one list (as OpenAPI clients send arrays), never the last value alone
    const twice = await fetch(`${server.url}/v1/events/stream?card_id=card_00000000000000ff&card_id=card_00000000000000fe`);
    expect([twice.status, ((await twice.json()) as any).field]).toEqual([400, "card_id"]);
  });
});

describe("a board removed by a reload", () => {
  test("its streams end after its definition_reloaded, instead of going on with its cards' events", async () => {
    const own = makeWorkspace();
    const srv = await serve(own);
    try {
      const res = await fetch(`${srv.url}/v1/events/stream?board_id=bugs`);
      const reader = res.body!.getReader();
      const all = readToEnd(reader);
      const { rmSync } = await import("node:fs");
      const { join } = await import("node:path");
      rmSync(join(own, "definitions/boards/bugs.json"));
      rmSync(join(own, "definitions/views/triage.json"));
      expect((await fetch(`${srv.url}/v1/workspace/reload`, { method: "POST" })).status).toBe(200);
      // before: the stream stayed open and delivered the cards of a board that is 404
      const text = await Promise.race([all, Bun.sleep(5000).then(() => "still open")]);
      expect(text).toContain("event: definition_reloaded");
      expect(text).toContain(": board bugs was removed");
      expect((await fetch(`${srv.url}/v1/events/stream?board_id=bugs`)).status).toBe(404);
    } finally {
      await srv.stop();
    }
  }, 20_000);
});

describe("resume and replay", () => {
  test("Last-Event-ID replays what came after, then goes live", async () => {
    const first = await post("/cards", { type_id: "task", title: "resume-1" });
    const events = (await (await fetch(`${server.url}/v1/cards/${first.id}/events`)).json()) as any;
    const from = events.items[0].id;
    const second = await post("/cards", { type_id: "task", title: "resume-2" });
    const s = listen(`${server.url}/v1/events/stream?types=card_created`, { "last-event-id": from });
    await s.waitFor((g) => g.some((e) => e.data.card_id === second.id));
    expect(s.got.some((e) => e.data.card_id === first.id)).toBe(false);
    const third = await post("/cards", { type_id: "task", title: "resume-3" });
    await s.waitFor((g) => g.some((e) => e.data.card_id === third.id));
    const ids = s.got.map((e) => Number(e.id));
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    s.close();
  });

  test("resuming right after another process's write never sends that write again", async () => {
    // the CLI's write is committed; the server's feed has not polled it yet (every 200 ms)
    for (let i = 0; i < 6; i++) {
      const made = run(["cards", "create", "--type", "task", "--title", `cli-${i}`], { cwd: dir });
      expect(made.code).toBe(0);
      const newest = run(["api", "GET", `/cards/${made.json.id}/events`], { cwd: dir }).json.items.at(-1).id;
      const s = listen(`${server.url}/v1/events/stream`, { "last-event-id": newest });
      await s.opened;
      await Bun.sleep(350);
      s.close();
      expect(s.got.filter((e) => Number(e.id) <= Number(newest)).map((e) => e.id)).toEqual([]);
    }
  });

  test("replay is bounded at 500 events", async () => {
    const fresh = makeWorkspace();
    for (let i = 0; i < 3; i++) {
      run(["api", "POST", "/users", "--data", `{"id":"warm-${i}","kind":"agent"}`], { cwd: fresh });
    }
    const srv = await serve(fresh);
    try {
      await Promise.all(Array.from({ length: 520 }, (_, i) =>
        fetch(`${srv.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: `n${i}` }) })));
      const s = listen(`${srv.url}/v1/events/stream?since=0`);
      await s.waitFor((g) => g.length >= 500);
      await Bun.sleep(300);
      expect(s.got.length).toBe(500);
      expect(s.got[0]!.id).toBe("000000000001");
      s.close();
    } finally {
      await srv.stop();
    }
  });
});

describe("replay larger than the stream's buffer", () => {
  test("a reading client gets all 500 replayed events on one connection, then live ones", async () => {
    const fresh = makeWorkspace();
    const srv = await serve(fresh);
    try {
      const text = "t".repeat(2000); // ~2.3 KB a card_created event: 520 of them are ~1.2 MB, past the 256 KiB buffer
      for (let i = 0; i < 520; i += 40) {
        await Promise.all(Array.from({ length: Math.min(40, 520 - i) }, (_, j) =>
          fetch(`${srv.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: `n${i + j}`, fields: { description: text } }) })));
      }
      const res = await fetch(`${srv.url}/v1/events/stream?since=0`);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let got = "";
      const count = () => (got.match(/^event: /gm) ?? []).length;
      const readUntil = async (pred: () => boolean): Promise<void> => {
        const end = Date.now() + 10_000;
        while (!pred()) {
          if (Date.now() > end) throw new Error(`timed out after ${count()} events`);
          const { done, value } = await reader.read();
          if (done) throw new Error(`the stream ended after ${count()} events: ${got.slice(-60)}`);
          got += decoder.decode(value, { stream: true });
        }
      };
      await readUntil(() => count() >= 500);
      expect(got).not.toContain(": dropped");
      expect(count()).toBe(500);
      await fetch(`${srv.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: "live one" }) });
      await readUntil(() => got.includes("live one"));
      expect(got).not.toContain(": dropped");
      await reader.cancel();
    } finally {
      await srv.stop();
    }
  }, 30_000);
});

describe("slow consumers", () => {
  test("a consumer that stops reading is dropped with `: dropped, reconnect`; others keep flowing", async () => {
    const fresh = makeWorkspace();
    const srv = await serve(fresh);
    try {
      const stalled = await fetch(`${srv.url}/v1/events/stream`);
      const reader = stalled.body!.getReader();
      await reader.read(); // ": connected"
      const healthy = listen(`${srv.url}/v1/events/stream?types=card_created`);
      await healthy.opened;
      await postBigCards(srv.url, STALL_CARDS);
      await healthy.waitFor((g) => g.length >= STALL_CARDS, 20_000);
      const text = await readToEnd(reader);
      expect(text.trimEnd().endsWith(": dropped, reconnect")).toBe(true);
      expect((text.match(/^event: /gm) ?? []).length).toBeLessThan(STALL_CARDS);
      healthy.close();
    } finally {
      await srv.stop();
    }
  }, 30_000);
});

describe("streams with the same filter", () => {
  test("share delivery, but a stalled one is dropped alone: its twin with the same filter keeps flowing", async () => {
    const fresh = makeWorkspace();
    const srv = await serve(fresh);
    try {
      const url = `${srv.url}/v1/events/stream?types=card_created`;
      const stalled = await fetch(url);
      const reader = stalled.body!.getReader();
      await reader.read(); // ": connected"
      const twin = listen(url);
      const other = listen(url);
      await Promise.all([twin.opened, other.opened]);
      const n = STALL_CARDS;
      await postBigCards(srv.url, n);
      await twin.waitFor((g) => g.length >= n, 20_000);
      await other.waitFor((g) => g.length >= n, 20_000);
      expect(twin.got.map((g) => g.data.diff.card.title)).toEqual(Array.from({ length: n }, (_, i) => `big ${i}`));
      const text = await readToEnd(reader);
      expect(text.trimEnd().endsWith(": dropped, reconnect")).toBe(true);
      twin.close();
      other.close();
    } finally {
      await srv.stop();
    }
  }, 30_000);
});

describe("conditions on the stream", () => {
  test("wip_exceeded / wip_cleared once per crossing; wip_exceeded is persisted (persist_conditions)", async () => {
    const s = listen(`${server.url}/v1/events/stream?types=wip_exceeded,wip_cleared`);
    await s.opened;
    const cards = [];
    for (let i = 0; i < 5; i++) cards.push(await post("/cards", { type_id: "task", title: `wip ${i}`, status: "todo" }));
    for (const c of cards) await patch(`/cards/${c.id}`, { version: 1, status: "doing" });
    await s.waitFor((g) => g.length >= 1);
    await Bun.sleep(200);
    expect(s.got.map((e) => e.type)).toEqual(["wip_exceeded"]);
    expect(s.got[0]!.data).toMatchObject({ scope: "board", board_id: "main", diff: { column: "doing", count: 4, limit: 3 } });
    expect(s.got[0]!.id).not.toBe(""); // persisted: it has an id
    await patch(`/cards/${cards[0].id}`, { version: 2, status: "todo" });
    await Bun.sleep(200);
    expect(s.got.length).toBe(1); // 4 left: still exceeded
    await patch(`/cards/${cards[1].id}`, { version: 2, status: "todo" });
    await s.waitFor((g) => g.length >= 2);
    expect(s.got[1]!.type).toBe("wip_cleared");
    expect(s.got[1]!.id).toBe(""); // not persisted: no id
    const breaches = (await (await fetch(`${server.url}/v1/breaches?board_id=main&type=wip_exceeded`)).json()) as any;
    expect(breaches.items).toEqual([]);
    s.close();
  });

  test("lane_drained / lane_refilled on a watched column", async () => {
    const fresh = makeWorkspace();
    const srv = await serve(fresh);
    try {
      const s = listen(`${srv.url}/v1/events/stream?types=lane_drained,lane_refilled`);
      await s.opened;
      const c = (await (await fetch(`${srv.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ type_id: "task", title: "t", status: "todo" }) })).json()) as any;
      await s.waitFor((g) => g.length >= 1);
      await fetch(`${srv.url}/v1/cards/${c.id}`, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ version: 1, status: "doing" }) });
      await s.waitFor((g) => g.length >= 2);
      expect(s.got.map((e) => [e.type, e.data.diff.column])).toEqual([["lane_refilled", "todo"], ["lane_drained", "todo"]]);
      const b = (await (await fetch(`${srv.url}/v1/breaches?type=lane_limit`)).json()) as any;
      expect(b.items).toContainEqual({ kind: "lane_limit", board_id: "main", column: "todo", count: 0, limit: 0 });
      s.close();
    } finally {
      await srv.stop();
    }
  });

  test("transition_rejected fires on a refused move (emit_rejections)", async () => {
    const s = listen(`${server.url}/v1/events/stream?types=transition_rejected`);
    await s.opened;
    const c = await post("/cards", { type_id: "task", title: "rejected" });
    // a dry run previews the refusal and records nothing, not even the signal
    const dry = await patch(`/cards/${c.id}`, { version: 1, status: "review", dry_run: true });
    expect(dry.error).toBe("transition_illegal");
    const r = await patch(`/cards/${c.id}`, { version: 1, status: "done" });
    expect(r.error).toBe("transition_illegal");
    await s.waitFor((g) => g.length >= 1);
    await Bun.sleep(200);
    expect(s.got.length).toBe(1);
    expect(s.got[0]!.data).toMatchObject({ card_id: c.id, diff: { before: "backlog", after: "done", valid_options: ["todo"] } });
    s.close();
  });

  test("status_timeout fires once after the max time in status, only while a consumer asks for it", async () => {
    const s = listen(`${server.url}/v1/events/stream?types=status_timeout`);
    await s.opened;
    const c = await post("/cards", { type_id: "task", title: "slow review", status: "todo" });
    await patch(`/cards/${c.id}`, { version: 1, status: "doing" });
    await patch(`/cards/${c.id}`, { version: 2, status: "review" });
    await s.waitFor((g) => g.some((e) => e.data.card_id === c.id), 4000);
    const ev = s.got.find((e) => e.data.card_id === c.id)!;
    expect(ev.data.diff).toMatchObject({ status: "review", max: "1s" });
    await Bun.sleep(1500);
    expect(s.got.filter((e) => e.data.card_id === c.id).length).toBe(1);
    const b = (await (await fetch(`${server.url}/v1/breaches?board_id=main&type=status_timeout`)).json()) as any;
    expect(b.items.some((i: any) => i.card_id === c.id && i.status === "review" && i.max === "1s")).toBe(true);
    s.close();
  }, 10_000);

  test("card_blocked appears in /breaches with its blockers", async () => {
    const a = await post("/cards", { type_id: "task", title: "waits" });
    const b = await post("/cards", { type_id: "task", title: "blocker" });
    await post(`/cards/${a.id}/links`, { type_id: "blocked-by", target: b.id });
    const r = (await (await fetch(`${server.url}/v1/breaches?board_id=main&type=card_blocked`)).json()) as any;
    expect(r.as_of).toBeString();
    expect(r.items).toContainEqual({ kind: "card_blocked", board_id: "main", card_id: a.id, blockers: [b.id] });
    expect((await fetch(`${server.url}/v1/breaches?type=nope`)).status).toBe(422);
  });
});
