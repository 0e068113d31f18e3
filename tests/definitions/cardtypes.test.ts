import { describe, expect, test } from "bun:test";
import { expectOnly, problems, REVIEW, TASK } from "./helpers.ts";

const COLUMNS = ["backlog", "todo", "doing", "review", "done"];
const TASK_FIELDS = ["priority", "description", "components", "estimate_hours", "due", "branch", "parent", "evidence", "output"];

describe("card type references", () => {
  test("allowed_columns is a subset of the workspace columns", async () => {
    expectOnly(await problems((f) => { f[REVIEW].allowed_columns.push("archive"); }), {
      file: REVIEW, path: "allowed_columns[4]", message: '"archive" is not a known workspace column', valid_options: COLUMNS,
    });
  });

  test("allowed_columns has no repeats", async () => {
    expectOnly(await problems((f) => { f[REVIEW].allowed_columns.push("todo"); }), {
      file: REVIEW, path: "allowed_columns[4]", message: 'duplicate column "todo"',
    });
  });

  test("ids are at most 40 characters (tools are named update_<id>; harnesses cap tool names)", async () => {
    const long = "f".repeat(41);
    const list = await problems((f) => { f[TASK].fields[0].id = long; });
    expect(list.some((p) => p.file === TASK && p.path === "fields[0].id" && p.message.includes("at most 40"))).toBe(true);
    expect((await problems((f) => { f[TASK].fields[1].id = "f".repeat(40); })).filter((p) => p.path === "fields[1].id")).toEqual([]);
  });

  test("allowed_columns may not be empty", async () => {
    expectOnly(await problems((f) => { f[REVIEW].allowed_columns = []; }), {
      file: REVIEW, path: "allowed_columns", message: "must not be empty",
    });
  });

  test("searchable_fields name fields of the type", async () => {
    expectOnly(await problems((f) => { f[TASK].searchable_fields.push("notes"); }), {
      file: TASK, path: "searchable_fields[3]", message: '"notes" is not a known field of card type "task"', valid_options: TASK_FIELDS,
    });
  });

  test("schema_version is a whole number from 1", async () => {
    expectOnly(await problems((f) => { f[REVIEW].schema_version = 0; }), {
      file: REVIEW, path: "schema_version", message: "must be at least 1",
    });
  });
});

describe("migrations", () => {
  test("keys are versions from 2 to schema_version", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations["3"] = { from: 2, summary: "later" }; }), {
      file: TASK, path: 'migrations["3"]', message: 'migration key "3" must be a version from "2" to "2"',
    });
  });

  test("a non-numeric key", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations.v2 = f[TASK].migrations["2"]; delete f[TASK].migrations["2"]; }), {
      file: TASK, path: "migrations.v2", message: 'migration key "v2" must be a version',
    });
  });

  test("a type at schema_version 1 has no migrations", async () => {
    expectOnly(await problems((f) => { f[TASK].schema_version = 1; }), {
      file: TASK, path: 'migrations["2"]', message: "the type is at schema_version 1, so it has no migrations yet",
    });
  });

  test("from must be lower than the key", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations["2"].from = 2; }), {
      file: TASK, path: 'migrations["2"].from', message: "from (2) must be lower than the version it migrates to (2)",
    });
  });

  test("summary is required", async () => {
    expectOnly(await problems((f) => { delete f[TASK].migrations["2"].summary; }), {
      file: TASK, path: 'migrations["2"].summary', message: 'required key "summary" is missing',
    });
  });

  test("field_defaults keys name fields of the type", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations["2"].field_defaults.urgency = "high"; }), {
      file: TASK, path: 'migrations["2"].field_defaults.urgency', message: '"urgency" is not a field of card type "task"', valid_options: TASK_FIELDS,
    });
  });

  test("an earlier migration may name a field removed since (an upgrade through it drops the field anyway)", async () => {
    // before: removing priority meant editing migration 2, the type's history
    const removed = await problems((f) => {
      f[TASK].fields = f[TASK].fields.filter((x: any) => x.id !== "priority");
      f[TASK].schema_version = 3;
      f[TASK].migrations["3"] = { from: 2, summary: "priority removed" };
      for (const b of ["definitions/boards/main.json", "definitions/boards/bugs.json"]) {
        if (f[b]?.presentation?.filters?.urgent) delete f[b].presentation.filters.urgent;
        if (f[b]?.presentation?.card_preview?.task) f[b].presentation.card_preview.task = f[b].presentation.card_preview.task.filter((x: string) => x !== "priority");
        if (f[b]?.presentation?.lane_sort) delete f[b].presentation.lane_sort;
      }
    });
    expect(removed.filter((p) => p.path.startsWith("migrations"))).toEqual([]);
    // the current version's own migration still must name fields the type has
    expectOnly(await problems((f) => {
      f[TASK].schema_version = 3;
      f[TASK].migrations["3"] = { from: 2, summary: "s", field_defaults: { urgency: "x" } };
    }), { file: TASK, path: 'migrations["3"].field_defaults.urgency', message: '"urgency" is not a field of card type "task"', valid_options: TASK_FIELDS });
  });

  test("field_defaults values are valid for their field", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations["2"].field_defaults.priority = "asap"; }), {
      file: TASK, path: 'migrations["2"].field_defaults.priority', message: '"asap" is not one of the options',
      valid_options: ["low", "normal", "high", "urgent"],
    });
    expectOnly(await problems((f) => { f[TASK].migrations["2"].field_defaults.estimate_hours = 500; }), {
      file: TASK, path: 'migrations["2"].field_defaults.estimate_hours', message: "500 is above max 200",
    });
  });

  test("unknown keys in a migration", async () => {
    expectOnly(await problems((f) => { f[TASK].migrations["2"].to = 2; }), {
      file: TASK, path: 'migrations["2"].to', message: 'unknown key "to"', valid_options: ["from", "summary", "field_defaults"],
    });
  });

  test("the sample migration loads", async () => {
    expect(await problems(() => {})).toEqual([]);
  });
});
