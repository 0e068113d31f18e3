/** Card history lines for events of any shape: a restored log may hold diffs the service never writes. */
import { expect, test } from "bun:test";
import { cardHistory, createCard, patchCard, restoreWorkspace } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

test("events restored with diffs of other shapes still read as lines (before: 500 for a string where a list belongs)", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const at = "2025-01-01T00:00:00.000Z";
    const id = "card_00000000000000aa";
    const event = (n: number, type: string, diff: unknown) =>
      JSON.stringify({ record: "event", event: { id: String(n).padStart(12, "0"), type, actor: "ada", at, card_id: id, scope: "card", diff } });
    const lines = [
      JSON.stringify({ record: "header", format: "cards-dump", format_version: 1 }),
      JSON.stringify({ record: "card", card: { id, type_id: "task", schema_version: 2, title: "odd log", status: "todo", fields: { priority: "normal" }, tags: [], links: [], comments: [], version: 1, created_at: at, updated_at: at, status_since: at, created_by: "ada" } }),
      event(1, "card_created", {}),
      event(2, "card_blocked", { blockers: "card_x" }),
      event(3, "schema_upgraded", { from: 1, to: 2, fields_dropped: "old" }),
      event(4, "owner_changed", {}),
      event(5, "status_changed", { before: "todo" }),
    ];
    await restoreWorkspace(svc, (async function* () { yield* lines; })());
    expect(cardHistory(svc, id, {}).items.map((h) => h.summary)).toEqual(["created the card", "card blocked", "schema upgraded", "owner changed", "status changed"]);
  } finally {
    svc.close();
  }
});

test("a long value is cut between characters, never inside an emoji's surrogate pair (before: a lone surrogate that jq and serde_json refuse)", async () => {
  const open = (files: any) => { files["definitions/workspace.json"].settings.tag_policy = "open"; };
  const svc = await openTestService(makeWorkspace(open), "embedded");
  try {
    const ada = { actor: "ada" } as never;
    // the 57th UTF-16 unit of the title, and of the tags' JSON text, is the first half of 🚀
    const c = await createCard(svc, { type_id: "task", title: `${"x".repeat(56)}${"🚀".repeat(5)}` }, ada);
    await patchCard(svc, c.id, { version: 1, tags: [`${"t".repeat(54)}🚀`, "b"] }, ada);
    const summaries = cardHistory(svc, c.id, {}).items.map((h) => h.summary);
    expect(summaries).toEqual([
      `created task "${"x".repeat(56)}..." in backlog`,
      `tags [] -> ["${"t".repeat(54)}...`,
    ]);
    expect(summaries.map((s) => s.isWellFormed())).toEqual([true, true]);
  } finally {
    svc.close();
  }
});
