/**
 * The live feed (src/events/feed.ts) and bus: another process's writes reach subscribers
 * whole and in order however many piled up, and a subscriber that throws is dropped
 * without disturbing the write or the others.
 */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;

test("more than one poll batch (500) written by another process arrives whole, in id order", async () => {
  const dir = makeWorkspace();
  const svc = await openTestService(dir, "serve");
  const other = await openTestService(dir, "embedded");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { got.push(e); });
    const n = 1100;
    for (let i = 0; i < n; i++) await createCard(other, { type_id: "task", title: `o${i}` }, ada);
    svc.pollFeed();
    const ids = got.map((e) => Number((e as { id: string }).id));
    expect(ids).toHaveLength(n);
    expect(ids).toEqual(Array.from({ length: n }, (_, i) => ids[0]! + i));
    off();
  } finally {
    other.close();
    svc.close();
  }
}, 30_000);

test("a subscriber that throws is dropped: the write commits and the other subscribers keep getting events", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    let thrown = 0;
    const seen: string[] = [];
    const offBad = svc.subscribe(() => { thrown++; throw new Error("broken subscriber"); });
    const offGood = svc.subscribe((e) => { seen.push(e.type); });
    const a = await createCard(svc, { type_id: "task", title: "a" }, ada);
    const b = await createCard(svc, { type_id: "task", title: "b" }, ada);
    expect(svc.store.getCard(a.id)).not.toBeNull();
    expect(svc.store.getCard(b.id)).not.toBeNull();
    expect(thrown).toBe(1);
    expect(seen.filter((t) => t === "card_created")).toHaveLength(2);
    offBad();
    offGood();
  } finally {
    svc.close();
  }
});
