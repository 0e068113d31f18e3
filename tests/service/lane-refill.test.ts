/** lane_refilled once per crossing (src/service/lanes.ts). */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

// L2 (lane_refilled on every write that leaves a watched column non-empty)
test("a second card into a refilled watched column signals nothing", async () => {
  const svc = await openTestService(makeWorkspace(), "serve");
  try {
    const got: CardEvent[] = [];
    const off = svc.subscribe((e) => { if (!e.id) got.push(e); }, { types: ["lane_refilled", "lane_drained"] });
    await createCard(svc, { type_id: "task", title: "a", status: "todo" }, { actor: "ada" });
    await createCard(svc, { type_id: "task", title: "b", status: "todo" }, { actor: "ada" });
    expect(got.map((e) => e.type)).toEqual(["lane_refilled"]);
    off();
  } finally {
    svc.close();
  }
});
