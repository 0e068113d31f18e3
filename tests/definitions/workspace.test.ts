import { describe, expect, test } from "bun:test";
import { CONDITION_EVENTS } from "../../src/domain/types.ts";
import { BUG, expectOnly, expectProblem, MAIN, problems, TASK, W } from "./helpers.ts";

const WORKSPACE_KEYS = ["id", "name", "columns", "tag_set", "link_types", "users", "settings"];
const BOARD_IDS = ["bugs", "main"];

describe("workspace.json shape", () => {
  test("values written the way people write them get the fix: a column as a bare id, a number in quotes, a duration as a number", async () => {
    const list = await problems((f) => {
      f[W].columns[0] = "backlog";
      f[TASK].schema_version = "2";
      f[MAIN].monitors = { ...f[MAIN].monitors, idle_after: 3600 };
    });
    expectProblem(list, { file: W, path: "columns[0]", message: 'must be an object, got "backlog": a column is {"id": "backlog", "name": "..."}' });
    expectProblem(list, { file: TASK, path: "schema_version", message: 'must be a number, got "2" (write it without quotes: 2)' });
    expectProblem(list, { file: MAIN, path: "monitors.idle_after", message: 'got the number 3600: write "3600s" for seconds' });
  });

  test("a column written as a bare id is one problem: what names that column is not reported too (before: nine \"not a known workspace column\")", async () => {
    const list = await problems((f) => { f[W].columns[2] = "doing"; });
    expect(list.map((p) => `${p.file} ${p.path}`)).toEqual([`${W} columns[2]`]);
  });

  test("columns that are not a list are one problem, not one per reference to a column", async () => {
    expectOnly(await problems((f) => { f[W].columns = "todo"; }), { file: W, path: "columns", message: 'must be a list ([...]), got "todo"' });
  });

  test("an unknown key names the key and lists the allowed keys", async () => {
    const p = expectOnly(await problems((f) => { f[W].colour = "blue"; }), {
      file: W, path: "colour", message: 'unknown key "colour"', valid_options: WORKSPACE_KEYS,
    });
    expect(p.message).toContain(`allowed keys: ${WORKSPACE_KEYS.join(", ")}`);
  });

  test("every unknown key of one object is reported, not only the first", async () => {
    const list = await problems((f) => { f[W].settings.colour = 1; f[W].settings.shade = 2; });
    expectProblem(list, { file: W, path: "settings.colour", message: 'unknown key "colour"' });
    expectProblem(list, { file: W, path: "settings.shade", message: 'unknown key "shade"' });
    expect(list).toHaveLength(2);
  });

  test("unknown keys in nested objects (a column)", async () => {
    expectOnly(await problems((f) => { f[W].columns[1].color = "red"; }), {
      file: W, path: "columns[1].color", message: 'unknown key "color"', valid_options: ["id", "name"],
    });
  });

  test("a missing required key", async () => {
    expectOnly(await problems((f) => { delete f[W].columns[0].name; }), {
      file: W, path: "columns[0].name", message: 'required key "name" is missing',
    });
  });

  test("a value of the wrong type", async () => {
    expectOnly(await problems((f) => { f[W].settings.strict_fields = "yes"; }), {
      file: W, path: "settings.strict_fields", message: 'must be true or false, got "yes"',
    });
  });

  test("an object where a list belongs, and a list where an object belongs", async () => {
    const list = await problems((f) => { f[W].tag_set = { a: 1 }; f[W].columns[0] = ["backlog"]; });
    expectProblem(list, { file: W, path: "tag_set", message: "must be a list ([...]), got an object" });
    expectProblem(list, { file: W, path: "columns[0]", message: "must be an object ({...}), got a list" });
  });

  test("a workspace needs at least one column", async () => {
    const list = await problems((f) => { f[W].columns = []; });
    expectProblem(list, { file: W, path: "columns", message: "at least one column" });
  });

  test("ids must match the id pattern, and the error says so", async () => {
    expectOnly(await problems((f) => { f[W].users.push({ id: "Bad Id!", kind: "human" }); }), {
      file: W, path: "users[3].id", message: '"Bad Id!" is not a valid user id: user ids are 1-64 ASCII letters, digits, ".", "_", "@" or "-", starting with a letter or digit (as POST /users takes them)',
    });
  });

  test("a user id POST /users takes (with . and @) may be declared too, and named as default_user", async () => {
    expect(await problems((f) => { f[W].users.push({ id: "a.b@example.com", kind: "human" }); f[W].settings.default_user = "a.b@example.com"; })).toEqual([]);
  });

  test("a display_name is one line", async () => {
    expectOnly(await problems((f) => { f[W].users.push({ id: "bob", kind: "human", display_name: "Bob\nSmith" }); }), {
      file: W, path: "users[3].display_name", message: "must be one line",
    });
  });

  test("two tags or options that differ only in Unicode form (composed and decomposed accents) are one twice", async () => {
    const p = expectOnly(await problems((f) => { f[W].tag_set.push("caf\u00e9", "cafe\u0301"); }), { file: W, path: "tag_set[9]", message: /^duplicate tag / });
    expect(p.message).toBe(`duplicate tag ${JSON.stringify("cafe\u0301")}: it is ${JSON.stringify("caf\u00e9")} in another Unicode form (composed and decomposed accents look alike); keep one`);
  });

  test("user ids may be as long as the API allows (64), unlike other ids (40)", async () => {
    expect(await problems((f) => { f[W].users.push({ id: "u".repeat(64), kind: "agent" }); })).toEqual([]);
    const list = await problems((f) => { f[W].users.push({ id: "u".repeat(65), kind: "agent" }); });
    expect(list.some((p) => p.path === "users[3].id" && p.message.includes("at most 64"))).toBe(true);
  });

  test("ids must not be empty, nor start with - or _", async () => {
    const list = await problems((f) => { f[W].id = ""; f[W].columns[0].id = "-x"; });
    expectProblem(list, { file: W, path: "id", message: "must not be empty" });
    expectProblem(list, { file: W, path: "columns[0].id", message: "is not a valid id" });
  });

  test("user kind is human or agent", async () => {
    expectOnly(await problems((f) => { f[W].users[1].kind = "robot"; }), {
      file: W, path: "users[1].kind", message: '"robot" is not a valid user kind', valid_options: ["human", "agent"],
    });
  });

  test("link type kind is directional or bidirectional", async () => {
    expectOnly(await problems((f) => { f[W].link_types[0].type = "both"; }), {
      file: W, path: "link_types[0].type", message: "is not a valid link type kind", valid_options: ["directional", "bidirectional"],
    });
  });
});

describe("settings", () => {
  test('tag_policy "propose" was removed: the message says so and lists open, locked', async () => {
    const p = expectOnly(await problems((f) => { f[W].settings.tag_policy = "propose"; }), {
      file: W, path: "settings.tag_policy", message: 'tag_policy "propose" was removed', valid_options: ["open", "locked"],
    });
    expect(p.message).toContain("open, locked");
  });

  test("another unknown tag_policy", async () => {
    expectOnly(await problems((f) => { f[W].settings.tag_policy = "free"; }), {
      file: W, path: "settings.tag_policy", message: '"free" is not a valid tag_policy', valid_options: ["open", "locked"],
    });
  });

  test("default_board must name a real board", async () => {
    expectOnly(await problems((f) => { f[W].settings.default_board = "nope"; }), {
      file: W, path: "settings.default_board", message: 'default_board "nope" names no board', valid_options: BOARD_IDS,
    });
  });

  test("default_user must be a non-empty string", async () => {
    const list = await problems((f) => { f[W].settings.default_user = ""; });
    expectOnly(list, { file: W, path: "settings.default_user", message: "default_user must be a non-empty string" });
    expectOnly(await problems((f) => { f[W].settings.default_user = 7; }), {
      file: W, path: "settings.default_user", message: "must be a string",
    });
  });

  test("persist_conditions entries are condition events", async () => {
    expectOnly(await problems((f) => { f[W].settings.persist_conditions = ["wip_exceeded", "card_created"]; }), {
      file: W, path: "settings.persist_conditions[1]", message: '"card_created" is not a valid condition event', valid_options: [...CONDITION_EVENTS],
    });
  });

  test("enforce_transitions is a boolean", async () => {
    expectOnly(await problems((f) => { f[W].settings.enforce_transitions = 1; }), {
      file: W, path: "settings.enforce_transitions", message: "must be true or false, got 1",
    });
  });

  test("event_retention_days is a positive whole number", async () => {
    expectOnly(await problems((f) => { f[W].settings.event_retention_days = 1.5; }), {
      file: W, path: "settings.event_retention_days", message: "must be a whole number",
    });
  });
});

describe("workspace uniqueness and references", () => {
  test("duplicate column ids", async () => {
    expectOnly(await problems((f) => { f[W].columns.push({ id: "todo", name: "Again" }); }), {
      file: W, path: "columns[5].id", message: 'duplicate column id "todo"',
    });
  });

  test("duplicate tags", async () => {
    expectOnly(await problems((f) => { f[W].tag_set.push("docs"); }), {
      file: W, path: "tag_set[8]", message: 'duplicate tag "docs"',
    });
  });

  test("a tag with a comma or spaces around it, and a whole number past 2^53 - 1, are refused (review 2026-11-25)", async () => {
    const list = await problems((f) => { f[W].tag_set.push("a,b", " pad "); f[TASK].schema_version = 1e20; });
    expectProblem(list, { file: W, path: "tag_set[8]", message: '"a,b" holds a comma: a tag list on the command line is split at commas (--tags a,b)' });
    expectProblem(list, { file: W, path: "tag_set[9]", message: '" pad " has spaces around it: the command line trims them' });
    expectProblem(list, { file: TASK, path: "schema_version", message: "must be at most 9007199254740991 (2^53 - 1)" });
    expect(list).toHaveLength(3);
  });

  test("duplicate link type ids", async () => {
    expectOnly(await problems((f) => { f[W].link_types.push({ id: "related", name: "R", type: "bidirectional" }); }), {
      file: W, path: "link_types[5].id", message: 'duplicate link type id "related"',
    });
  });

  test("duplicate user ids", async () => {
    expectOnly(await problems((f) => { f[W].users.push({ id: "ada", kind: "agent" }); }), {
      file: W, path: "users[3].id", message: 'duplicate user id "ada"',
    });
  });

  test("link type source_types and target_types name real card types", async () => {
    const list = await problems((f) => {
      f[W].link_types[4].source_types = ["task", "epic"];
      f[W].link_types[4].target_types = ["story"];
    });
    expectProblem(list, { file: W, path: "link_types[4].source_types[1]", message: '"epic" is not a known card type', valid_options: ["bug", "review", "task"] });
    expectProblem(list, { file: W, path: "link_types[4].target_types[0]", message: '"story" is not a known card type' });
    expect(list).toHaveLength(2);
  });

  test("removing a column used by a type and boards reports each use", async () => {
    const list = await problems((f) => { f[W].columns = f[W].columns.filter((c: any) => c.id !== "review"); });
    expectProblem(list, { file: "definitions/card-types/review.json", path: "allowed_columns[2]", message: '"review" is not a known workspace column' });
    expectProblem(list, { file: "definitions/boards/main.json", path: "columns[3]", message: '"review" is not a known workspace column' });
    expectProblem(list, { file: "definitions/boards/bugs.json", path: "columns[3]", message: '"review" is not a known workspace column' });
  });

  test("a locked tag_set also checks tags defaults; an open policy does not", async () => {
    const edit = (policy: string) => (f: any) => {
      f[W].settings.tag_policy = policy;
      f[BUG].fields.find((x: any) => x.id === "areas").default = ["docs", "shiny"];
    };
    expectOnly(await problems(edit("locked")), {
      file: BUG, path: "fields[3].default", message: 'tag "shiny" is not in the workspace tag_set', valid_options: expect.arrayContaining(["docs"]) as any,
    });
    expect(await problems(edit("open"))).toEqual([]);
  });

  test("a card type file keeps its fields check even when another type file is broken", async () => {
    const list = await problems((f) => { f[BUG] = "{"; f[TASK].fields[0].options = []; });
    expectProblem(list, { file: TASK, path: "fields[0].options", message: "at least one value" });
  });
});
