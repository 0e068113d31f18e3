/**
 * The tool registry in process: a card type whose generated tool name a fixed tool has
 * (type "entry" -> update_entry) gets `_card` appended, so the fixed tool keeps its
 * SPEC name and meaning and the type's cards can still be updated.
 */
import { expect, test } from "bun:test";
import { ToolRegistry } from "../../src/mcp/tools.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

test('a card type "entry": update_entry stays the fixed tool; the type\'s own is update_entry_card', async () => {
  const dir = makeWorkspace((f) => {
    f["definitions/card-types/entry.json"] = { id: "entry", name: "Entry", fields: [{ id: "x", type: "string" }] };
    (f["definitions/boards/main.json"] as { card_type_ids: string[] }).card_type_ids.push("entry");
  });
  const svc = await openTestService(dir, "embedded");
  try {
    const reg = new ToolRegistry(svc.defs);
    const names = reg.specs.map((t) => t.name);
    expect(names.filter((n) => n === "update_entry")).toHaveLength(1);
    expect(names).toEqual(expect.arrayContaining(["create_entry", "update_entry_card"]));
    expect(Object.keys(reg.tools.get("update_entry")!.spec.inputSchema.properties as object).sort()).toEqual(["card_id", "entry", "entry_id", "field", "version"]);
    const ctx = { svc, actor: "agent-1" };
    const made = await reg.call("create_entry", { title: "an entry card" }, ctx, () => {});
    const card = made.structuredContent as { id: string; version: number };
    const up = await reg.call("update_entry_card", { card_id: card.id, version: card.version, title: "renamed" }, ctx, () => {});
    expect([up.isError, (up.structuredContent as { title: string }).title]).toEqual([undefined, "renamed"]);
    // a task card sent to update_entry_card is pointed at its own tool, and the reverse too
    const task = (await reg.call("create_task", { title: "t" }, ctx, () => {})).structuredContent as { id: string; version: number };
    expect((await reg.call("update_entry_card", { card_id: task.id, version: task.version, title: "x" }, ctx, () => {})).structuredContent).toMatchObject({ hint: "use update_task" });
    expect((await reg.call("update_task", { card_id: card.id, version: 2, title: "x" }, ctx, () => {})).structuredContent).toMatchObject({ hint: "use update_entry_card" });
  } finally {
    svc.close();
  }
});

test('types "entry" and "entry_card" both keep a tool of their own', async () => {
  const dir = makeWorkspace((f) => {
    f["definitions/card-types/entry.json"] = { id: "entry", name: "Entry", fields: [{ id: "x", type: "string" }] };
    f["definitions/card-types/entry_card.json"] = { id: "entry_card", name: "Entry card", fields: [{ id: "y", type: "string" }] };
  });
  const svc = await openTestService(dir, "embedded");
  try {
    const reg = new ToolRegistry(svc.defs);
    const names = reg.specs.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(["update_entry", "update_entry_card", "update_entry_card_card", "create_entry", "create_entry_card"]));
    const ctx = { svc, actor: "agent-1" };
    const e = (await reg.call("create_entry", { title: "e" }, ctx, () => {})).structuredContent as { id: string; version: number };
    const up = await reg.call("update_entry_card_card", { card_id: e.id, version: e.version, title: "renamed" }, ctx, () => {});
    expect((up.structuredContent as { title: string }).title).toBe("renamed");
    expect((await reg.call("update_entry_card", { card_id: e.id, version: 2, title: "x" }, ctx, () => {})).structuredContent).toMatchObject({ hint: "use update_entry_card_card" });
  } finally {
    svc.close();
  }
});

test("arguments: null is an absent one (a required one is then missing); a non-integer version or limit is refused by name", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const reg = new ToolRegistry(svc.defs);
    const ctx = { svc, actor: "agent-1" };
    const err = async (name: string, args: unknown) => (await reg.call(name, args, ctx, () => {})).structuredContent as { error?: string; field?: string; message?: string };
    const card = (await reg.call("create_task", { title: "t" }, ctx, () => {})).structuredContent as { id: string; version: number };
    expect(await err("get_card", { card_id: null })).toMatchObject({ error: "validation_failed", field: "card_id", message: "get_card: card_id is required" });
    expect(await err("claim", { card_id: card.id, version: 1.5 })).toMatchObject({ error: "validation_failed", field: "version", message: "claim: version must be an integer" });
    expect(await err("claim", { card_id: card.id, version: "1" })).toMatchObject({ error: "validation_failed", field: "version" });
    expect(await err("list_cards", { limit: 2.5 })).toMatchObject({ error: "validation_failed", field: "limit", message: "list_cards: limit must be an integer" });
    // an optional argument sent as null (as some harnesses fill every declared key) is left out
    const listed = (await reg.call("list_cards", { status: null, limit: null, owner: null }, ctx, () => {})).structuredContent as { items: { id: string }[] };
    expect(listed.items.map((c) => c.id)).toContain(card.id);
    const claimed = (await reg.call("claim", { card_id: card.id, version: card.version, status: null }, ctx, () => {})).structuredContent as { owner: string };
    expect(claimed.owner).toBe("agent-1");
    // update_task's owner: null is not given (before: cleared); "" clears
    const kept = (await reg.call("update_task", { card_id: card.id, version: 2, owner: null, title: "renamed", status: null }, ctx, () => {})).structuredContent as { owner: string; title: string };
    expect([kept.owner, kept.title]).toEqual(["agent-1", "renamed"]);
  } finally {
    svc.close();
  }
});

test("an object argument sent as its JSON text is the object; any other string is refused with a hint", async () => {
  const svc = await openTestService(makeWorkspace(), "embedded");
  try {
    const reg = new ToolRegistry(svc.defs);
    const ctx = { svc, actor: "agent-1" };
    const call = async (name: string, args: unknown) => (await reg.call(name, args, ctx, () => {})).structuredContent as Record<string, any>;
    const made = await call("create_task", { title: "as text", fields: '{"priority":"high"}' });
    expect(made.fields.priority).toBe("high");
    await call("create_task", { title: "low one", fields: { priority: "low" } });
    const high = await call("list_cards", { filter: ' {"fields.priority":"high"}' });
    expect(high.items.map((c: { id: string }) => c.id)).toEqual([made.id]);
    const next = await call("take_next", { filter: '{"fields.priority":"high"}' });
    expect(next.card.id).toBe(made.id);
    expect(await call("list_cards", { filter: "mine" })).toMatchObject({
      error: "validation_failed", field: "filter", value: "mine", message: "list_cards: filter must be a JSON object",
      hint: expect.stringContaining("as an object"),
    });
    // JSON text of something other than an object stays a wrong type
    expect(await call("list_cards", { filter: "[1]" })).toMatchObject({ error: "validation_failed", field: "filter", value: "[1]" });
    expect(await call("list_cards", { filter: "{not json" })).toMatchObject({ error: "validation_failed", field: "filter" });
  } finally {
    svc.close();
  }
});
