import { describe, expect, test } from "bun:test";
import { THEME_TOKENS } from "../../src/definitions/schemas.ts";
import { BUGS, expectOnly, expectProblem, MAIN, problems, REVIEW, TRIAGE, W } from "./helpers.ts";

const COLUMNS = ["backlog", "todo", "doing", "review", "done"];
const BUGS_NO_REVIEW = ["backlog", "todo", "doing", "done"];
const TYPES = ["bug", "review", "task"];

describe("board columns and types", () => {
  test("columns are a subset of the workspace columns", async () => {
    expectOnly(await problems((f) => { f[MAIN].columns.push("archive"); }), {
      file: MAIN, path: "columns[5]", message: '"archive" is not a known workspace column', valid_options: COLUMNS,
    });
  });

  test("columns have no repeats", async () => {
    expectOnly(await problems((f) => { f[MAIN].columns.push("todo"); }), {
      file: MAIN, path: "columns[5]", message: 'duplicate column "todo"',
    });
  });

  test("card_type_ids name real card types", async () => {
    expectOnly(await problems((f) => { f[MAIN].card_type_ids.push("epic"); }), {
      file: MAIN, path: "card_type_ids[3]", message: '"epic" is not a known card type', valid_options: TYPES,
    });
  });

  test("a board needs a card type", async () => {
    const list = await problems((f) => { f[BUGS].card_type_ids = []; });
    expectProblem(list, { file: BUGS, path: "card_type_ids", message: "at least one card type" });
  });

  test("settings.enforce_transitions is a boolean; settings has no other keys", async () => {
    const list = await problems((f) => { f[MAIN].settings = { enforce_transitions: "yes", strict_fields: false }; });
    expectProblem(list, { file: MAIN, path: "settings.enforce_transitions", message: 'must be true or false, got "yes"' });
    expectProblem(list, { file: MAIN, path: "settings.strict_fields", message: 'unknown key "strict_fields"', valid_options: ["enforce_transitions"] });
    expect(list).toHaveLength(2);
  });
});

describe("transitions and WIP limits", () => {
  // bugs.json without its review column: "review" is a workspace column but not one of this board's
  const noReview = (f: any) => { f[BUGS].columns = BUGS_NO_REVIEW; };

  /** bugs becomes the default board, so its transitions govern bug cards */
  const governs = (f: any) => { f[W].settings.default_board = "bugs"; };

  test("transitions on a board that governs none of its card types are a problem (never checked)", async () => {
    expectOnly(await problems((f) => { f[BUGS].transitions = { todo: ["doing"] }; }), {
      file: BUGS, path: "transitions", message: "these transitions are never checked: the moves of bug cards follow board main",
    });
    expect(await problems((f) => { governs(f); f[BUGS].transitions = { todo: ["doing"] }; })).toEqual([]);
  });

  test("enforce_transitions on a board that governs none of its card types is a problem (before: accepted, and no move was checked)", async () => {
    const mainFree = (f: any) => { f[MAIN].settings = { enforce_transitions: false }; };
    expectOnly(await problems((f) => { mainFree(f); f[BUGS].settings = { enforce_transitions: true }; }), {
      file: BUGS, path: "settings.enforce_transitions", message: "never applies: the moves of bug cards follow board main",
    });
    expect(await problems((f) => { mainFree(f); governs(f); f[BUGS].settings = { enforce_transitions: true }; })).toEqual([]);
    expect(await problems((f) => { mainFree(f); f[BUGS].settings = { enforce_transitions: false }; })).toEqual([]);
  });

  test("enforce_transitions repeated on a board whose types' governing board (or the workspace) already enforces is redundant, not a problem (before: the workspace stopped loading)", async () => {
    // the sample's main enforces its graph, and governs bug cards
    expect(await problems((f) => { f[BUGS].settings = { enforce_transitions: true }; })).toEqual([]);
    expect(await problems((f) => { f[MAIN].settings = {}; f[W].settings.enforce_transitions = true; f[BUGS].settings = { enforce_transitions: true }; })).toEqual([]);
  });

  test("a board column the workspace lacks is no valid option, and what refers to it is reported in the same load", async () => {
    const list = await problems((f) => { governs(f); f[BUGS].columns = [...f[BUGS].columns, "zz"]; f[BUGS].transitions = { zz: ["done"] }; f[BUGS].wip_limits = { zz: 1 }; });
    expect(list.map((p) => p.path).sort()).toEqual(["columns[5]", "transitions.zz", "wip_limits.zz"].sort());
    // before: "zz" was offered as a valid option, and the two references passed
    for (const p of list.filter((x) => x.path !== "columns[5]")) expect(p.valid_options).not.toContain("zz");
  });

  test("transition keys are this board's columns", async () => {
    expectOnly(await problems((f) => { noReview(f); governs(f); f[BUGS].transitions = { review: ["done"] }; }), {
      file: BUGS, path: "transitions.review", message: '"review" is not a known column of this board', valid_options: BUGS_NO_REVIEW,
    });
  });

  test("transition targets are this board's columns", async () => {
    expectOnly(await problems((f) => { noReview(f); governs(f); f[BUGS].transitions = { doing: ["done", "review"] }; }), {
      file: BUGS, path: "transitions.doing[1]", message: '"review" is not a known column of this board', valid_options: BUGS_NO_REVIEW,
    });
  });

  test("a transition target list must be a list", async () => {
    expectOnly(await problems((f) => { f[MAIN].transitions.done = "todo"; }), {
      file: MAIN, path: "transitions.done", message: 'must be a list ([...]), got "todo"',
    });
  });

  test("wip_limits keys are this board's columns", async () => {
    expectOnly(await problems((f) => { noReview(f); f[BUGS].wip_limits = { review: 1 }; }), {
      file: BUGS, path: "wip_limits.review", message: "is not a known column of this board", valid_options: BUGS_NO_REVIEW,
    });
  });

  test("wip_limits values are non-negative whole numbers", async () => {
    const list = await problems((f) => { f[MAIN].wip_limits = { doing: -1, review: 1.5, todo: "3", done: 0 }; });
    expectProblem(list, { file: MAIN, path: "wip_limits.doing", message: "must be at least 0" });
    expectProblem(list, { file: MAIN, path: "wip_limits.review", message: "must be a whole number" });
    expectProblem(list, { file: MAIN, path: "wip_limits.todo", message: 'must be a number, got "3"' });
    expect(list).toHaveLength(3);
  });

  test("wip_limits must be an object, not a list", async () => {
    expectOnly(await problems((f) => { f[MAIN].wip_limits = [3]; }), {
      file: MAIN, path: "wip_limits", message: "must be an object ({...}), got a list",
    });
  });
});

describe("monitors", () => {
  const noReview = (f: any) => { f[BUGS].columns = BUGS_NO_REVIEW; };

  test("alert_when_empty entries are this board's columns", async () => {
    expectOnly(await problems((f) => { noReview(f); f[BUGS].monitors = { alert_when_empty: ["todo", "review"] }; }), {
      file: BUGS, path: "monitors.alert_when_empty[1]", message: "is not a known column of this board", valid_options: BUGS_NO_REVIEW,
    });
  });

  test("max_time_in_status keys are this board's columns", async () => {
    expectOnly(await problems((f) => { noReview(f); f[BUGS].monitors = { max_time_in_status: { review: "1h" } }; }), {
      file: BUGS, path: "monitors.max_time_in_status.review", message: "is not a known column of this board",
    });
  });

  test("max_time_in_status values are durations", async () => {
    expectOnly(await problems((f) => { f[MAIN].monitors.max_time_in_status.doing = "2 days"; }), {
      file: MAIN, path: "monitors.max_time_in_status.doing", message: 'invalid duration "2 days"',
    });
  });

  test("idle_after is a positive duration", async () => {
    expectOnly(await problems((f) => { f[MAIN].monitors.idle_after = "-3d"; }), {
      file: MAIN, path: "monitors.idle_after", message: "durations must be positive",
    });
    expectOnly(await problems((f) => { f[MAIN].monitors.idle_after = 3600; }), {
      file: MAIN, path: "monitors.idle_after", message: "must be a duration string, got the number 3600",
    });
  });

  test("emit_rejections is a boolean and monitors has no other keys", async () => {
    const list = await problems((f) => { f[MAIN].monitors.emit_rejections = "on"; f[MAIN].monitors.alert_when_full = []; });
    expectProblem(list, { file: MAIN, path: "monitors.emit_rejections", message: "must be true or false" });
    expectProblem(list, {
      file: MAIN, path: "monitors.alert_when_full", message: 'unknown key "alert_when_full"',
      valid_options: ["alert_when_empty", "emit_rejections", "max_time_in_status", "idle_after"],
    });
    expect(list).toHaveLength(2);
  });
});

describe("presentation", () => {
  test("card_preview keys are card types of the board", async () => {
    expectOnly(await problems((f) => { f[BUGS].presentation.card_preview.task = ["priority"]; }), {
      file: BUGS, path: "presentation.card_preview.task", message: '"task" is not a card type of this board', valid_options: ["bug"],
    });
  });

  test("card_preview values are fields of that type", async () => {
    expectOnly(await problems((f) => { f[MAIN].presentation.card_preview.bug.push("priority"); }), {
      file: MAIN, path: "presentation.card_preview.bug[2]", message: '"priority" is not a known field of card type "bug"',
      valid_options: ["severity", "steps", "environment", "areas", "reported_by", "found_in", "resolution", "logs"],
    });
  });

  test("style_field must name an enum field of one of the board's types", async () => {
    expectOnly(await problems((f) => { f[MAIN].presentation.style_field = "color"; }), {
      file: MAIN, path: "presentation.style_field", message: 'style_field "color" is not a field of this board\'s card types',
      valid_options: ["priority", "components", "severity", "resolution", "verdict"],
    });
  });

  test("style_field naming a field that is not an enum", async () => {
    expectOnly(await problems((f) => { f[MAIN].presentation.style_field = "due"; }), {
      file: MAIN, path: "presentation.style_field", message: 'style_field "due" is a date field; it must name an enum field',
    });
  });

  test("style_field must be an enum of this board's types, not of another type", async () => {
    expectOnly(await problems((f) => { f[BUGS].presentation.style_field = "priority"; }), {
      file: BUGS, path: "presentation.style_field", message: "is not a field of this board's card types", valid_options: ["severity", "resolution"],
    });
  });

  test.each(["created_at", "-updated_at", "title", "fields.due", "-fields.priority", "fields.severity"])("lane_sort %p is valid", async (sort) => {
    expect(await problems((f) => { f[MAIN].presentation.lane_sort = sort; })).toEqual([]);
  });

  test.each(["newest", "--created_at", "fields.nope", "fields.", "status", "fields.priority "])("lane_sort %p is invalid", async (sort) => {
    const p = expectOnly(await problems((f) => { f[MAIN].presentation.lane_sort = sort; }), {
      file: MAIN, path: "presentation.lane_sort", message: `${JSON.stringify(sort)} is not a sort key`,
    });
    expect(p.valid_options?.slice(0, 4)).toEqual(["created_at", "updated_at", "title", "fields.areas"]);
  });

  test("lane_sort by a field of a type not on this board is invalid", async () => {
    expectOnly(await problems((f) => { f[BUGS].presentation.lane_sort = "fields.priority"; }), {
      file: BUGS, path: "presentation.lane_sort", message: "is not a sort key",
    });
  });

  test("filters are named objects", async () => {
    const list = await problems((f) => { f[MAIN].presentation.filters.broken = ["owner", "me"]; f[MAIN].presentation.filters.text = "owner=me"; });
    expectProblem(list, { file: MAIN, path: "presentation.filters.broken", message: "must be an object ({...}), got a list" });
    expectProblem(list, { file: MAIN, path: "presentation.filters.text", message: 'must be an object ({...}), got "owner=me"' });
    expect(list).toHaveLength(2);
  });

  test("presentation has only the four named keys", async () => {
    expectOnly(await problems((f) => { f[MAIN].presentation.density = "compact"; }), {
      file: MAIN, path: "presentation.density", message: 'unknown key "density"', valid_options: ["card_preview", "style_field", "lane_sort", "filters"],
    });
  });

  test("default_filter is an object", async () => {
    expectOnly(await problems((f) => { f[BUGS].default_filter = [{ type_id: "bug" }]; }), {
      file: BUGS, path: "default_filter", message: "must be an object ({...}), got a list",
    });
  });
});

describe("theme", () => {
  test("theme keys are whitelisted design tokens", async () => {
    expectOnly(await problems((f) => { f[MAIN].theme.glow = "#fff"; }), {
      file: MAIN, path: "theme.glow", message: '"glow" is not a theme token', valid_options: [...THEME_TOKENS],
    });
  });

  test("theme values are strings without CSS breakouts", async () => {
    const list = await problems((f) => { f[MAIN].theme = { accent: "red; } body { display: none", radius: 4 }; });
    expectProblem(list, { file: MAIN, path: "theme.accent", message: "must not contain ; { } < >" });
    expectProblem(list, { file: MAIN, path: "theme.radius", message: "must be a string, got 4" });
    expect(list).toHaveLength(2);
  });

  test("the token whitelist has the basics", () => {
    for (const t of ["accent", "background", "surface", "text", "muted", "border", "danger", "warning", "success", "radius", "font"]) {
      expect(THEME_TOKENS).toContain(t);
    }
  });
});

describe("filters in definitions use the filter grammar", () => {
  test("default_filter: an unknown field of the board's types is a problem with the valid paths", async () => {
    const list = await problems((f) => { f[BUGS].default_filter = { "fields.priority": "high" }; });
    expectProblem(list, { file: BUGS, path: 'default_filter["fields.priority"]', message: '"priority" is not a field' });
    expect(list[0]!.valid_options).toContain("fields.severity");
  });

  test("a date bound that is no timestamp in a board's default_filter, or in a saved filter of a board whose date field is not on its first type, is a problem", async () => {
    const main = await problems((f) => { f[MAIN].default_filter = { "fields.due": { $lt: "tomorrow" } }; });
    expectOnly(main, { file: MAIN, path: 'default_filter["fields.due"]', message: "not a timestamp" });
    const bugs = await problems((f) => {
      f[BUGS].card_type_ids = ["bug", "task"];
      f[BUGS].presentation.filters = { soon: { "fields.due": { $lt: "tomorrow" } } };
    });
    expectOnly(bugs, { file: BUGS, path: 'presentation.filters.soon["fields.due"]', message: "not a timestamp" });
  });

  test("saved filters: an unknown operator is a problem at the condition's JSON path, the operator named in the message", async () => {
    const list = await problems((f) => { f[MAIN].presentation.filters.odd = { status: { $near: "todo" } }; });
    expectProblem(list, { file: MAIN, path: "presentation.filters.odd.status", message: "$near is not an operator for status (at presentation.filters.odd.status.$near)" });
  });

  test("a typo'd column or card type in a board filter is a problem with the valid options", async () => {
    const list = await problems((f) => {
      f[BUGS].default_filter = { status: { $in: ["todo", "Done"] } };
      f[MAIN].presentation.filters.epics = { type_id: "epic" };
    });
    expectProblem(list, { file: BUGS, path: "default_filter.status", message: '"Done" is not a column of this workspace (at default_filter.status.$in[1])', valid_options: ["backlog", "todo", "doing", "review", "done"] });
    expectOnly(list.slice(1), { file: MAIN, path: "presentation.filters.epics.type_id", message: '"epic" is not a card type of this workspace' });
  });

  test("a typo'd enum option or locked tag in a board filter is a problem with the valid options; $ne/$nin are not checked", async () => {
    const list = await problems((f) => {
      f[BUGS].default_filter = { "fields.resolution": { $nin: ["wontfix", "Wont-Fix"] }, "fields.severity": { $in: ["critical", "Major"] } };
      f[MAIN].presentation.filters = { frontend: { tags: { $has: "front-end" } }, urgent: { "fields.priority": "urgnt" } };
    });
    expectProblem(list, { file: BUGS, path: 'default_filter["fields.severity"]', message: '"Major" is not an option of fields.severity (at default_filter.fields.severity.$in[1])', valid_options: ["critical", "major", "minor", "trivial"] });
    expectProblem(list, { file: MAIN, path: "presentation.filters.frontend.tags", message: '"front-end" is not in the workspace tag_set (tag_policy is locked)' });
    expectProblem(list, { file: MAIN, path: 'presentation.filters.urgent["fields.priority"]', message: '"urgnt" is not an option of fields.priority', valid_options: ["low", "normal", "high", "urgent"] });
    expect(list).toHaveLength(3);
  });

  test("a field that is an enum in one of the board's types and free text in another takes any value", async () => {
    const list = await problems((f) => {
      const review = f[REVIEW].fields.find((x: { id: string }) => x.id === "summary");
      review.id = "severity";
      f[MAIN].presentation.filters = { odd: { "fields.severity": "anything" } };
      f[BUGS].presentation.filters = { odd: { "fields.severity": "anything" } };
    });
    expectOnly(list, { file: BUGS, path: 'presentation.filters.odd["fields.severity"]', message: '"anything" is not an option of fields.severity' });
  });

  test('"me" is refused in a default_filter (no viewer for WIP counts and monitors), allowed in saved filters', async () => {
    const list = await problems((f) => {
      f[BUGS].default_filter = { $or: [{ owner: "me" }, { "fields.reported_by": "me" }] };
      f[BUGS].presentation = { ...f[BUGS].presentation, filters: { mine: { owner: "me" } } };
    });
    expectOnly(list, { file: BUGS, path: "default_filter", message: '"me" is for saved filters (presentation.filters), not default_filter' });
    // "me" under two top-level keys is still one problem
    const twice = await problems((f) => { f[BUGS].default_filter = { owner: "me", "fields.reported_by": "me" }; });
    expectOnly(twice, { file: BUGS, path: "default_filter", message: '"me" is for saved filters' });
  });

  test("every wrong top-level condition of a board filter is its own problem", async () => {
    const list = await problems((f) => { f[BUGS].default_filter = { status: "nope", type_id: "zzz", "fields.resolution": { $ne: "wontfix" } }; });
    expectProblem(list, { file: BUGS, path: "default_filter.status", message: '"nope" is not a column of this workspace' });
    expectProblem(list, { file: BUGS, path: "default_filter.type_id", message: '"zzz" is not a card type of this workspace' });
    expect(list.map((p) => p.message).join("\n")).not.toContain("(at "); // the path says where
    expect(list).toHaveLength(2);
    // "me" in a default_filter is named beside another wrong condition, not after it is fixed
    const me = await problems((f) => { f[BUGS].default_filter = { status: "nope", owner: "me" }; });
    expectProblem(me, { file: BUGS, path: "default_filter", message: '"me" is for saved filters' });
    expect(me).toHaveLength(2);
  });

  test("view filters are checked too", async () => {
    const list = await problems((f) => { f[TRIAGE].filter = { $or: [] }; });
    expectProblem(list, { file: TRIAGE, path: 'filter["$or"]', message: "$or takes a non-empty array" });
  });

  test("a view's filter names its board's fields and their options", async () => {
    const unknown = await problems((f) => { f[TRIAGE].filter = { "fields.zzz": 1 }; });
    expectOnly(unknown, { file: TRIAGE, path: 'filter["fields.zzz"]', message: '"zzz" is not a field' });
    const option = await problems((f) => { f[TRIAGE].filter = { "fields.severity": "majr" }; });
    expectOnly(option, { file: TRIAGE, path: 'filter["fields.severity"]', message: '"majr" is not an option of fields.severity', valid_options: ["critical", "major", "minor", "trivial"] });
  });
});
