/** `cards mcp` tools: the list and its schemas, the whole agent loop, error results. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { assertBinary } from "../helpers/binary.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { connect, type Session } from "./helpers.ts";

const FIXED = [
  "workspace", "get_card", "list_cards", "search_cards", "claim", "release", "take_next", "append_entry",
  "update_entry", "remove_entry", "add_link", "remove_link", "add_comment", "edit_comment", "upgrade_schema",
  "attach_artifact", "get_artifact", "history", "breaches", "events",
];

let s: Session;
let tools: Map<string, any>;
beforeAll(async () => {
  assertBinary();
  s = await connect(makeWorkspace());
  tools = new Map((await s.client.listTools()).tools.map((t) => [t.name, t]));
});
afterAll(() => s?.close());

describe("tools/list", () => {
  test("every fixed tool of the SPEC plus create_/update_ per card type, and nothing else", () => {
    const types = ["task", "bug", "review"];
    expect([...tools.keys()].sort()).toEqual([...FIXED, ...types.flatMap((t) => [`create_${t}`, `update_${t}`])].sort());
  });

  test("no tool takes an actor, an idempotency key or a dry run; every tool has a short description", () => {
    for (const t of tools.values()) {
      const props = Object.keys(t.inputSchema.properties ?? {});
      for (const banned of ["actor", "idempotency_key", "dry_run"]) expect(props).not.toContain(banned);
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.description.length).toBeLessThan(200);
      expect(t.inputSchema.type).toBe("object");
      // the server refuses any other argument: the schema says so
      expect(t.inputSchema.additionalProperties).toBe(false);
    }
  });

  test("fixed tool inputs follow the SPEC table", () => {
    const props = (n: string) => Object.keys(tools.get(n).inputSchema.properties).sort();
    expect(props("claim")).toEqual(["card_id", "status", "version"]);
    expect(tools.get("claim").inputSchema.required).toEqual(["card_id", "version"]);
    expect(props("release")).toEqual(["card_id", "force", "status", "version"]);
    expect(props("take_next")).toEqual(["assign_to", "board_id", "filter", "status", "type_id"]);
    expect(props("append_entry")).toEqual(["card_id", "entry", "field", "version"]);
    expect(props("upgrade_schema")).toEqual(["card_id", "confirm", "target_version"]);
    expect(props("attach_artifact")).toEqual(["card_id", "content_base64", "field"]);
    expect(props("events")).toEqual(["board_id", "limit", "since", "types"]);
    // SPEC's parameters, plus filter (issue 3) and brief (docs/mcp.md)
    expect(props("list_cards")).toEqual(["blocked", "board_id", "brief", "cursor", "filter", "limit", "owner", "q", "status", "type_id"]);
    expect(tools.get("append_entry").inputSchema.properties.field.description).toContain("task.evidence (note*, at, by)");
    // bug.logs holds URIs (artifact_policy uri): attach_artifact refuses it, so it is not offered
    expect(tools.get("attach_artifact").description).toContain("(task.output)");
  });

  test("create_<type> schemas are derived from the field definitions", () => {
    const task = tools.get("create_task").inputSchema;
    const f = task.properties.fields.properties;
    const bug = tools.get("create_bug").inputSchema;
    expect(task.required).toEqual(["title"]); // priority is required but has a default
    expect(task.properties.status.enum).toEqual(["backlog", "todo", "doing", "review", "done"]);
    expect(f.priority).toMatchObject({ type: ["string", "null"], enum: ["low", "normal", "high", "urgent", null], default: "normal", description: "How soon this should be picked up." });
    expect(f.components).toMatchObject({ type: ["array", "null"], items: { enum: ["api", "cli", "ui", "store", "docs"] }, uniqueItems: true });
    expect(f.estimate_hours).toEqual({ type: ["number", "null"], minimum: 0, maximum: 200 }); // the label says no more than the id
    expect(bug.properties.fields.properties.steps.description).toBe("Steps to reproduce");
    expect(f.due).toMatchObject({ type: ["string", "null"], format: "date-time" });
    expect(f.parent).toMatchObject({ type: ["string", "null"], pattern: "^card_[0-9a-f]{16}$" });
    expect(f.evidence).toMatchObject({ type: ["array", "null"], items: { type: "object", required: ["note"], properties: { at: { format: "date-time" } } } });
    expect(f.output).toMatchObject({ type: ["object", "null"], required: ["uri"], properties: { uri: {}, mime: {}, size: {}, sha256: {} } });
    expect(bug.required).toEqual(["title", "fields"]);
    expect(bug.properties.fields.required).toEqual(["steps"]);
    // a field that must be given takes no null (the service refuses it as missing)
    expect(bug.properties.fields.properties.steps.type).toBe("string");
    expect(bug.properties.tags.items.enum).toContain("needs-human");
    const review = tools.get("create_review").inputSchema;
    expect(review.properties.status.enum).toEqual(["todo", "doing", "review", "done"]);
    expect(review.properties.fields.properties.reviewers).toMatchObject({ type: ["array", "null"], items: { type: "string" }, default: ["ada"] });
  });

  test("update_<type> requires card_id and version, takes repeating fields only as null, and nothing required inside fields", () => {
    for (const t of ["task", "bug", "review"]) {
      const u = tools.get(`update_${t}`).inputSchema;
      expect(u.required).toEqual(["card_id", "version"]);
      expect(u.properties.fields.required).toBeUndefined();
      expect(Object.keys(u.properties)).toEqual(expect.arrayContaining(["status", "owner", "tags", "title", "force"]));
    }
    // a repeating field takes only null there (clearing a value stored before it was repeating)
    expect(tools.get("update_task").inputSchema.properties.fields.properties.evidence).toMatchObject({ type: "null" });
  });

  test("under strict_fields a fields object takes only its declared keys; update schemas carry no defaults", () => {
    for (const t of ["task", "bug", "review"]) {
      expect(tools.get(`create_${t}`).inputSchema.properties.fields.additionalProperties).toBe(false);
      const u = tools.get(`update_${t}`).inputSchema.properties.fields;
      expect(u.additionalProperties).toBe(false);
      // a harness filling in defaults would reset priority or reviewers on every update
      for (const [id, f] of Object.entries(u.properties as Record<string, any>)) expect([t, id, f.default]).toEqual([t, id, undefined]);
    }
    expect(tools.get("create_task").inputSchema.properties.fields.properties.priority.default).toBe("normal");
  });

  test("update_<type> fields say how to clear them: null for an optional one, [] for a multiple one; a required one cannot be cleared", () => {
    const f = tools.get("update_task").inputSchema.properties.fields.properties;
    // priority is required: null is refused by the service, so the schema does not offer it
    expect(f.priority.type).toBe("string");
    expect(f.priority.enum).not.toContain(null);
    expect(f.estimate_hours.type).toEqual(["number", "null"]);
    expect(f.components.type).toEqual(["array", "null"]);
    expect(f.components.minItems).toBeUndefined();
  });

  test("create_<type> takes null and [] for a field not given, as the service does: a harness checking arguments passes them, and the default applies", async () => {
    const Ajv = (await import("ajv/dist/2020.js")).default;
    const addFormats = (await import("ajv-formats")).default;
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const check = ajv.compile(tools.get("create_task").inputSchema);
    const args = { title: "nulls", fields: { priority: null, components: [], estimate_hours: null, due: null, parent: null, evidence: null, output: null } };
    expect([check(args), check.errors]).toEqual([true, null]);
    const r = await s.call("create_task", args);
    expect(r.isError).toBe(false);
    expect(r.data.fields).toEqual({ priority: "normal" });
    // a field that must be given still must be: the schema and the service both refuse null
    const bug = ajv.compile(tools.get("create_bug").inputSchema);
    expect(bug({ title: "b", fields: { steps: null } })).toBe(false);
    expect((await s.call("create_bug", { title: "b", fields: { steps: null } })).isError).toBe(true);
  });

  test("read tools carry readOnlyHint (a harness need not ask before each read); writes do not", () => {
    const readOnly = [...tools.values()].filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name).sort();
    expect(readOnly).toEqual(["breaches", "events", "get_artifact", "get_card", "history", "list_cards", "search_cards", "workspace"]);
  });

  test("a local artifact field takes only a stored artifact's uri (an invented https uri passed the schema and was always refused)", () => {
    for (const name of ["create_task", "update_task"]) {
      const uri = tools.get(name).inputSchema.properties.fields.properties.output.properties.uri;
      expect([name, uri.pattern]).toEqual([name, "^artifacts/sha256/[0-9a-f]{2}/[0-9a-f]{64}$"]);
      expect(uri.description).toContain("attach_artifact");
    }
  });

  test("writes that only add say they destroy nothing, and no tool reaches outside the workspace (MCP's defaults: destructive, open-world)", () => {
    const all = [...tools.values()];
    expect(all.filter((t) => t.annotations?.openWorldHint !== false).map((t) => t.name)).toEqual([]);
    const additive = all.filter((t) => t.annotations?.destructiveHint === false).map((t) => t.name).sort();
    expect(additive).toEqual(["add_comment", "add_link", "append_entry", "create_bug", "create_review", "create_task"]);
    // the others may overwrite or remove: they keep MCP's destructive default
    for (const name of ["update_task", "remove_link", "remove_entry", "edit_comment", "claim", "release", "take_next"]) {
      expect([name, tools.get(name)!.annotations?.destructiveHint]).toEqual([name, undefined]);
    }
  });

  test("the whole list stays well under the 6,000-token budget (bytes/4)", () => {
    const bytes = JSON.stringify({ tools: [...tools.values()] }).length;
    expect(bytes / 4).toBeLessThan(6000);
  });
});

describe("the agent loop", () => {
  test("workspace -> take_next -> append_entry -> update_task -> add_comment -> history", async () => {
    const ws = (await s.call("workspace")).data;
    expect(ws.workspace.columns.map((c: any) => c.id)).toContain("doing");
    expect(Object.keys(ws.card_types)).toEqual(expect.arrayContaining(["task", "bug", "review"]));

    const created = await s.call("create_task", { title: "Fix the login timeout", status: "todo", fields: { priority: "high", components: ["api"] }, tags: ["backend"] });
    expect(created.isError).toBe(false);
    expect(created.data).toMatchObject({ type_id: "task", status: "todo", created_by: "agent-1", version: 1 });

    const taken = await s.call("take_next", { filter: { blocked: false }, status: "doing" });
    const card = taken.data.card;
    expect(card).toMatchObject({ id: created.data.id, owner: "agent-1", status: "doing" });

    const appended = await s.call("append_entry", { card_id: card.id, field: "evidence", version: card.version, entry: { note: "the session cookie expires after 5 minutes" } });
    expect(appended.data.entry_id).toStartWith("ent_");
    expect(appended.data.card.fields.evidence[0]).toMatchObject({ note: "the session cookie expires after 5 minutes", entry_id: appended.data.entry_id });

    const moved = await s.call("update_task", { card_id: card.id, version: appended.data.card.version, status: "review", fields: { branch: "fix/login-timeout" } });
    expect(moved.isError).toBe(false);
    expect(moved.data).toMatchObject({ status: "review", fields: { branch: "fix/login-timeout" } });

    const commented = await s.call("add_comment", { card_id: card.id, body: "Handoff: fix on fix/login-timeout, needs a review of the cookie settings." });
    expect(commented.data.comments.at(-1)).toMatchObject({ author: "agent-1" });

    const history = (await s.call("history", { card_id: card.id })).data.items;
    expect(history.map((h: any) => h.type)).toEqual([
      "card_created", "owner_changed", "status_changed", "item_appended", "field_updated", "status_changed", "comment_added",
    ]);
    expect(history.every((h: any) => h.actor === "agent-1")).toBe(true);
    expect(history.at(-1).summary).toContain("Handoff");

    const listed = (await s.call("list_cards", { owner: "me", status: "review" })).data;
    expect(listed.items.map((c: any) => c.id)).toEqual([card.id]);
    expect((await s.call("search_cards", { q: "login" })).data.items[0].id).toBe(card.id);
    // a search answers next_cursor, and takes it back (before: "unknown argument cursor")
    await s.call("create_task", { title: "Login page copy", fields: { priority: "low" } });
    const first = (await s.call("search_cards", { q: "login", limit: 1 })).data;
    expect(first.next_cursor).toEqual(expect.any(String));
    const next = await s.call("search_cards", { q: "login", limit: 1, cursor: first.next_cursor });
    expect(next.isError).toBeFalsy();
    expect(next.data.items).toHaveLength(1);
    expect(next.data.items[0].id).not.toBe(first.items[0].id);
    // an empty search is no search (it listed every card)
    const empty = await s.call("search_cards", { q: " " });
    expect(empty.isError).toBe(true);
    expect(empty.data).toMatchObject({ error: "validation_failed", field: "q", hint: expect.stringContaining("list_cards") });
    expect((await s.call("events", { types: "comment_added" })).data.items.at(-1).card_id).toBe(card.id);
    expect((await s.call("release", { card_id: card.id })).data.owner).toBeUndefined();
    expect((await s.call("take_next", { filter: { blocked: false }, status: "doing", type_id: "bug" })).data).toEqual({ card: null });
  });

  test("history of a card with more than 100 events ends with the newest (an agent resumes from the latest)", async () => {
    const card = (await s.call("create_task", { title: "long-lived", status: "todo" })).data;
    for (let i = 1; i <= 105; i++) expect((await s.call("add_comment", { card_id: card.id, body: `note ${i}` })).isError).toBe(false);
    const items = (await s.call("history", { card_id: card.id })).data.items;
    expect(items.length).toBe(100);
    expect(items.at(-1).summary).toContain("note 105");
    expect(items[0].summary).toContain("note 6"); // oldest first within the window
  });

  test("links, entries and comments round-trip; blocked cards are not handed out", async () => {
    const a = (await s.call("create_task", { title: "A", status: "todo" })).data;
    const b = (await s.call("create_task", { title: "B", status: "todo" })).data;
    const linked = await s.call("add_link", { card_id: a.id, type_id: "depends-on", target: b.id, note: "needs B" });
    expect(linked.data.links).toEqual([expect.objectContaining({ type_id: "depends-on", target: b.id })]);
    expect((await s.call("list_cards", { blocked: true })).data.items.map((c: any) => c.id)).toEqual([a.id]);
    expect((await s.call("breaches", { type: "card_blocked" })).data.items.map((i: any) => i.card_id)).toContain(a.id);
    const next = (await s.call("take_next", { filter: { blocked: false, title: { $in: ["A", "B"] } } })).data.card;
    expect(next.id).toBe(b.id);
    expect((await s.call("remove_link", { card_id: a.id, type_id: "depends-on", target: b.id })).data.links).toEqual([]);
    const before = (await s.call("get_card", { card_id: a.id })).data;
    expect((await s.call("append_entry", { card_id: a.id, field: "evidence", entry: { note: "one" } })).isError).toBe(true); // version is required
    const e = (await s.call("append_entry", { card_id: a.id, field: "evidence", version: before.version, entry: { note: "one" } })).data;
    const u = (await s.call("update_entry", { card_id: a.id, field: "evidence", entry_id: e.entry_id, version: e.card.version, entry: { note: "two" } })).data;
    expect(u.fields.evidence[0].note).toBe("two");
    expect((await s.call("remove_entry", { card_id: a.id, field: "evidence", entry_id: e.entry_id, version: u.version })).data.fields.evidence).toBeUndefined();
    const c = (await s.call("add_comment", { card_id: a.id, body: "first" })).data.comments[0];
    expect((await s.call("edit_comment", { card_id: a.id, comment_id: c.id, body: "edited" })).data.comments[0].body).toBe("edited");
    const got = (await s.call("get_card", { card_id: a.id })).data;
    expect(got.comments[0].body).toBe("edited");
    const claimed = (await s.call("claim", { card_id: a.id, version: got.version, status: "doing" })).data;
    expect(claimed).toMatchObject({ owner: "agent-1", status: "doing" });
  });
});

describe("list_cards filter", () => {
  test("a filter object narrows the list (same grammar as take-next; `me` is the session actor)", async () => {
    const hi = (await s.call("create_task", { title: "hot", fields: { priority: "urgent" } })).data;
    await s.call("create_task", { title: "cold", fields: { priority: "low" } });
    const r = (await s.call("list_cards", { filter: { "fields.priority": { $in: ["high", "urgent"] } }, limit: 200 })).data;
    expect(r.items.map((c: any) => c.id)).toContain(hi.id);
    expect(r.items.every((c: any) => ["high", "urgent"].includes(c.fields.priority))).toBe(true);
    await s.call("claim", { card_id: hi.id, version: hi.version });
    const mine = (await s.call("list_cards", { filter: { owner: "me" }, limit: 200 })).data.items;
    expect(mine.map((c: any) => c.id)).toContain(hi.id);
    expect(mine.every((c: any) => c.owner === "agent-1")).toBe(true);
    const bad = await s.call("list_cards", { filter: { status: { $near: "x" } } });
    expect(bad.isError).toBe(true);
    expect(bad.data.field).toContain("status");
  });
});

describe("error results", () => {
  test("an unknown enum value is a tool result with isError and valid_options, not a protocol error", async () => {
    const r = await s.call("create_task", { title: "x", fields: { priority: "asap" } });
    expect(r.isError).toBe(true);
    expect(r.data).toMatchObject({ error: "unknown_enum", field: "priority", value: "asap", valid_options: ["low", "normal", "high", "urgent"] });
  });

  test("an illegal move names the allowed columns; a stale version carries the current card", async () => {
    const card = (await s.call("create_task", { title: "moves", status: "todo" })).data;
    const illegal = await s.call("update_task", { card_id: card.id, version: card.version, status: "done" });
    expect(illegal).toMatchObject({ isError: true, data: { error: "transition_illegal", valid_options: ["doing", "backlog"] } });
    const stale = await s.call("update_task", { card_id: card.id, version: card.version + 5, title: "t" });
    expect(stale.data).toMatchObject({ error: "version_conflict", card: { id: card.id, version: card.version } });
    const wrongType = await s.call("update_bug", { card_id: card.id, version: card.version, title: "t" });
    expect(wrongType.data).toMatchObject({ error: "validation_failed", field: "card_id", hint: "use update_task" });
  });

  test("list_cards brief: each card without its fields (a page of long fields ran to ~77 KB)", async () => {
    await s.call("create_task", { title: "brief me", fields: { description: "x".repeat(2000) } });
    const full = await s.call("list_cards", { limit: 5 });
    const brief = await s.call("list_cards", { limit: 5, brief: true });
    expect(brief.data.items.map((c: any) => c.id)).toEqual(full.data.items.map((c: any) => c.id));
    expect(brief.data.items[0].fields).toBeUndefined();
    expect(brief.data.items[0]).toMatchObject({ id: full.data.items[0].id, title: full.data.items[0].title, version: full.data.items[0].version });
    expect(brief.text.length * 4).toBeLessThan(full.text.length);
  });

  test("bad arguments are isError results: unknown key with valid_options, missing key, wrong type, unknown card", async () => {
    expect((await s.call("get_card", { id: "x" })).data).toMatchObject({ error: "validation_failed", field: "id", valid_options: ["card_id"] });
    // a missing version says where to read it (before: no hint, unlike the CLI and HTTP)
    expect((await s.call("claim", { card_id: "card_0000000000000000" })).data).toMatchObject({ error: "validation_failed", field: "version", hint: expect.stringContaining("get_card shows it") });
    // an external uri names no stored bytes, and says so (before: a plain not_found)
    expect((await s.call("get_artifact", { uri: "https://ci.example/run/1" })).data).toMatchObject({ error: "not_found", hint: expect.stringContaining("artifact_policy uri") });
    expect((await s.call("claim", { card_id: "c", version: "3" })).data).toMatchObject({ error: "validation_failed", field: "version" });
    expect((await s.call("get_card", { card_id: "card_0000000000000000" })).data).toMatchObject({ error: "not_found" });
    expect((await s.call("add_link", { card_id: "card_0000000000000000", type_id: "nope", target: "x" })).isError).toBe(true);
    expect((await s.call("take_next", { filter: { colour: "red" } })).data).toMatchObject({ error: "validation_failed", field: "filter.colour" });
    // a field passed beside fields is pointed inside; a wrong type reads as English
    expect((await s.call("create_task", { title: "x", priority: "high" })).data).toMatchObject({ field: "priority", hint: expect.stringContaining("pass it inside fields") });
    expect((await s.call("create_task", { title: "x", tags: "infra" })).data.message).toBe("create_task: tags must be an array");
    // names every object inherits are unknown arguments too (`key in props` let them pass)
    for (const key of ["constructor", "toString", "hasOwnProperty"]) {
      expect((await s.call("get_card", { card_id: "card_0000000000000000", [key]: 1 })).data).toMatchObject({ error: "validation_failed", field: key, valid_options: ["card_id"] });
    }
  });
});

describe("tool arguments reach the service", () => {
  test("take_next assign_to, add_link note, release force, events since, breaches type: each changes the answer", async () => {
    // a fresh workspace: take_next takes the oldest card in scope
    const own = await connect(makeWorkspace((f) => { (f["definitions/workspace.json"] as any).users = [{ id: "bob", kind: "agent" }, { id: "agent-1", kind: "agent" }]; }));
    try {
      const a = (await own.call("create_task", { title: "first" })).data;
      const b = (await own.call("create_task", { title: "second" })).data;
      const taken = await own.call("take_next", { assign_to: "bob" });
      expect([taken.isError, taken.data.card.id, taken.data.card.owner]).toEqual([false, a.id, "bob"]);
      // bob holds it: release needs force
      expect((await own.call("release", { card_id: a.id })).isError).toBe(true);
      const forced = await own.call("release", { card_id: a.id, force: true });
      expect([forced.isError, forced.data.owner]).toEqual([false, undefined]);
      const linked = await own.call("add_link", { card_id: b.id, type_id: "depends-on", target: a.id, note: "after first" });
      expect(linked.data.links).toEqual([expect.objectContaining({ type_id: "depends-on", target: a.id, note: "after first" })]);
      const first = (await own.call("events", { limit: 1 })).data;
      const next = (await own.call("events", { since: first.next_cursor, limit: 1 })).data;
      expect(next.items[0].id > first.items[0].id).toBe(true);
      // b is blocked, and the todo lane watched on main is empty: two kinds; type keeps one
      const blocked = (await own.call("breaches", { type: "card_blocked" })).data.items;
      expect(blocked.length).toBeGreaterThan(0);
      expect(blocked.every((i: any) => i.kind === "card_blocked")).toBe(true);
      expect((await own.call("breaches", {})).data.items.some((i: any) => i.kind !== "card_blocked")).toBe(true);
    } finally {
      await own.close();
    }
  });
});
