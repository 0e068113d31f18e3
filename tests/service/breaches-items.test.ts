/**
 * GET /breaches item by item (SPEC Conditions: what holds now): a WIP breach carries the
 * lane's exact count, `type` lists that kind only, card_idle's `since` is when the card
 * last changed, and a parameter the call does not take is refused rather than ignored.
 */
import { expect, test } from "bun:test";
import { addLink, createCard, listBreaches, patchCard } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

const ada = { actor: "ada" } as never;

test("a lane over its limit is listed with its exact count; type=card_blocked lists no WIP breach", async () => {
  const svc = await openTestService();
  try {
    for (let i = 0; i < 6; i++) await createCard(svc, { type_id: "task", title: `busy ${i}`, status: "doing" }, { actor: "ada", force: true } as never);
    const wip = await listBreaches(svc, { board_id: "main", type: "wip_exceeded" });
    expect(wip.items.map((i: any) => [i.column, i.count, i.limit])).toEqual([["doing", 6, 3]]);
    const blocked = await listBreaches(svc, { board_id: "main", type: "card_blocked" });
    expect(blocked.items).toEqual([]);
  } finally {
    svc.close();
  }
});

test("card_idle's since is the card's last change (updated_at), not when it entered its status", async () => {
  const svc = await openTestService(makeWorkspace((f) => { (f["definitions/boards/main.json"] as any).monitors.idle_after = "0.3s"; }));
  try {
    const c = await createCard(svc, { type_id: "task", title: "left alone", status: "todo" }, ada);
    await Bun.sleep(30);
    const edited = await patchCard(svc, c.id, { version: 1, fields: { branch: "later" } }, ada);
    expect(edited.updated_at).not.toBe(edited.status_since);
    await Bun.sleep(400);
    const idle = await listBreaches(svc, { board_id: "main", type: "card_idle" });
    expect(idle.items.map((i: any) => [i.card_id, i.since, i.threshold])).toEqual([[c.id, edited.updated_at, "0.3s"]]);
  } finally {
    svc.close();
  }
});

test("asked without a board, a blocked card that only a board other than main shows is listed once, with that board", async () => {
  // bug taken off main: its cards are on the bugs board only
  const svc = await openTestService(makeWorkspace((f) => {
    const main = f["definitions/boards/main.json"] as any;
    main.card_type_ids = ["task", "review"];
    delete main.presentation.card_preview.bug;
  }));
  try {
    const blocker = await createCard(svc, { type_id: "task", title: "blocker" }, ada);
    const bug = await createCard(svc, { type_id: "bug", title: "waits", fields: { steps: "1. open it" } }, ada);
    await addLink(svc, bug.id, { type_id: "blocked-by", target: blocker.id }, ada);
    const all = await listBreaches(svc, { type: "card_blocked" });
    // before: listed again without board_id, as if no board showed it
    expect(all.items).toEqual([{ kind: "card_blocked", board_id: "bugs", card_id: bug.id, blockers: [blocker.id] }]);
  } finally {
    svc.close();
  }
});

test("a parameter breaches does not take (board for board_id) is refused, not ignored into every board's breaches", async () => {
  const svc = await openTestService();
  try {
    const err = await Promise.resolve().then(() => listBreaches(svc, { board: "main" } as never)).then(() => null, (e) => e);
    expect([err?.code, err?.extra?.field, err?.extra?.valid_options]).toEqual(["bad_request", "board", ["board_id", "type"]]);
  } finally {
    svc.close();
  }
});
