/**
 * `cards serve` reads costly lists on a thread of its own (store/sqlite/read-thread.ts),
 * an extra entry point of the compiled binary: while one agent's board filter reads every
 * card's text, the server goes on answering everyone else.
 */
import { expect, test } from "bun:test";
import { makeWorkspace } from "../helpers/workspace.ts";
import { assertBinary, serve } from "../helpers/binary.ts";

assertBinary();

test("while a costly saved filter reads, the server answers other requests", async () => {
  // ten $contains of "aaa...ab" over 60 cards of 200 KB of "a": each nearly matches
  // everywhere, so the substring searches take about half a second together
  const heavy = { $or: Array.from({ length: 10 }, (_, i) => ({ "fields.description": { $contains: `${"a".repeat(45)}b${i}` } })) };
  const dir = makeWorkspace((files) => {
    const board = files["definitions/boards/main.json"] as { presentation: { filters: Record<string, unknown> } };
    board.presentation.filters.heavy = heavy;
  });
  const srv = await serve(dir, { CARDS_ACTOR: "ada" });
  try {
    const big = "a".repeat(200_000);
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: `big ${i}`, fields: { description: big } }) });
      expect(r.status).toBe(201);
    }
    const order: string[] = [];
    const list = fetch(`${srv.url}/v1/cards?board_id=main&filter=heavy`).then(async (r) => {
      order.push("list");
      return { status: r.status, body: await r.json() };
    });
    await Bun.sleep(30); // the list is being read
    const health = await fetch(`${srv.url}/v1/health`);
    expect(health.status).toBe(200);
    order.push("health");
    const got = await list;
    expect(got).toEqual({ status: 200, body: { items: [] } });
    expect(order).toEqual(["health", "list"]);
  } finally {
    await srv.stop();
  }
});
