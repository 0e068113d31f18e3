/**
 * The SQLite driver builds a written event from what it bound (no RETURNING) and learns
 * a claim's outcome from the UPDATE's change count plus a point read. What a write
 * publishes must still be byte for byte what the durable feed later reads, and racing
 * claims that share one group commit must each get their own card with its real status.
 */
import { describe, expect, test } from "bun:test";
import { addLink, createCard, listEvents, takeNext, type Service } from "../../src/service/index.ts";
import type { CardEvent } from "../../src/domain/types.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const as = (actor: string) => ({ actor }) as never;

async function withServer(fn: (svc: Service) => Promise<void>): Promise<void> {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    await fn(svc);
  } finally {
    svc.close();
  }
}

describe("claims and events written without RETURNING", () => {
  test("eight take-next calls in one group commit claim eight different cards, each with its status", () => withServer(async (svc) => {
    const made = [];
    for (let i = 0; i < 8; i++) made.push(await createCard(svc, { type_id: "task", title: `pool ${i}`, status: "todo" }, as("ada")));
    // issued together: they share one transaction, each in its own savepoint
    const got = await Promise.all(Array.from({ length: 8 }, (_, i) => takeNext(svc, { type_id: "task" }, as(`w${i}`))));
    const ids = got.map((g) => g.card!.id);
    expect(new Set(ids).size).toBe(8);
    expect(ids.sort()).toEqual(made.map((c) => c.id).sort());
    for (const [i, g] of got.entries()) {
      expect(g.card!.owner).toBe(`w${i}`);
      expect(g.card!.status).toBe("todo");
      expect(g.card!.version).toBe(2);
    }
    expect((await takeNext(svc, { type_id: "task" }, as("late"))).card).toBeNull();
  }));

  test("a claim that moves the card answers the new status", () => withServer(async (svc) => {
    await createCard(svc, { type_id: "task", title: "to move", status: "todo" }, as("ada"));
    const { card } = await takeNext(svc, { type_id: "task", status: "doing" }, as("w1"));
    expect(card!.status).toBe("doing");
    expect(card!.owner).toBe("w1");
  }));

  test("what a write publishes live is exactly what the feed reads back", () => withServer(async (svc) => {
    const live: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (e.id) live.push(e); });
    try {
      await createCard(svc, { type_id: "task", title: "evented", status: "todo", fields: { priority: "high" }, tags: [] }, as("ada"));
      await takeNext(svc, { type_id: "task", status: "doing" }, as("w1"));
    } finally {
      off();
    }
    const feed = listEvents(svc, {}).items.filter((e) => live.some((l) => l.id === e.id));
    expect(live.map((e) => e.type)).toEqual(["card_created", "owner_changed", "status_changed"]);
    expect(JSON.stringify(live)).toBe(JSON.stringify(feed));
  }));

  test("a condition signal a write publishes live has the bytes another process reads from the workspace feed", async () => {
    const dir = makeWorkspace();
    const server = await openTestService(dir, "serve");
    const other = await openTestService(dir, "serve");
    const live: CardEvent[] = [];
    const read: CardEvent[] = [];
    const offs = [
      server.subscribe((e) => { if (e.type === "card_blocked") live.push(e); }),
      other.subscribe((e) => { if (e.type === "card_blocked") read.push(e); }),
    ];
    try {
      const a = await createCard(server, { type_id: "task", title: "waits" }, as("ada"));
      const b = await createCard(server, { type_id: "task", title: "blocker" }, as("ada"));
      await addLink(server, a.id, { type_id: "depends-on", target: b.id }, as("ada"));
      for (let i = 0; i < 100 && read.length === 0; i++) await Bun.sleep(20);
      expect(live).toHaveLength(1);
      // wire order, as events: before, the live one put card_id and diff before actor and at
      expect(Object.keys(live[0]!)).toEqual(["type", "actor", "at", "card_id", "scope", "diff"]);
      expect(JSON.stringify(live)).toBe(JSON.stringify(read));
    } finally {
      for (const off of offs) off();
      other.close();
      server.close();
    }
  });
});

describe("a write without an actor", () => {
  test("reaching the service with an empty actor is actor_required, and writes nothing (never an event by \"\")", async () => {
    await withServer(async (svc) => {
      const before = svc.store.lastEventId();
      let err: any;
      try { await createCard(svc, { type_id: "task", title: "by nobody" }, as("")); } catch (e) { err = e; }
      expect(err?.code).toBe("actor_required");
      expect(svc.store.lastEventId()).toBe(before);
    });
  });
});
