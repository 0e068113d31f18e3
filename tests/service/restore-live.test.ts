/**
 * A restore into a workspace a server is serving: the restored log is history. The
 * server's feed publishes none of it to subscribers (hooks, streams) as new writes; GET
 * /events still lists it, and writes after the restore are published as usual.
 */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard, dumpWorkspace, listEvents, restoreWorkspace } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" };

test("restored events are not published live; later writes are", async () => {
  const src = await openTestService(makeWorkspace(), "embedded");
  const lines: string[] = [];
  try {
    for (let i = 0; i < 3; i++) await createCard(src, { type_id: "task", title: `old ${i}` }, ada);
    dumpWorkspace(src, (l) => lines.push(l));
  } finally {
    src.close();
  }
  const dir = makeWorkspace();
  const server = await openTestService(dir, "serve");
  const restorer = await openTestService(dir, "embedded");
  try {
    const got: CardEvent[] = [];
    const off = server.subscribe((e) => got.push(e));
    await restoreWorkspace(restorer, (async function* () { yield* lines; })());
    server.pollFeed();
    expect(got).toEqual([]);
    expect(listEvents(server, {}).items.length).toBe(3);
    await createCard(restorer, { type_id: "task", title: "new" }, ada);
    server.pollFeed();
    off();
    expect(got.map((e) => [e.type, (e.diff as { card?: { title?: string } }).card?.title])).toEqual([["card_created", "new"]]);
  } finally {
    restorer.close();
    server.close();
  }
});
