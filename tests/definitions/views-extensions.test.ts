import { describe, expect, test } from "bun:test";
import { ALL_EVENT_TYPES } from "../../src/domain/types.ts";
import { formatProblems, loadDefinitions } from "../../src/definitions/load.ts";
import { BUG, EXT, expectOnly, expectProblem, MAIN, problems, sample, TASK, TRIAGE, W, writeWorkspace } from "./helpers.ts";

describe("views", () => {
  test("board_id names a real board", async () => {
    expectOnly(await problems((f) => { f[TRIAGE].board_id = "inbox"; }), {
      file: TRIAGE, path: "board_id", message: '"inbox" is not a known board', valid_options: ["bugs", "main"],
    });
  });

  test("path starts with /", async () => {
    expectOnly(await problems((f) => { f[TRIAGE].path = "triage"; }), {
      file: TRIAGE, path: "path", message: 'view path must start with "/"',
    });
  });

  test("views are read-only: only GET", async () => {
    expectOnly(await problems((f) => { f[TRIAGE].methods = ["GET", "POST"]; }), {
      file: TRIAGE, path: "methods[1]", message: 'views are read-only: method "POST" is not allowed', valid_options: ["GET"],
    });
  });

  test("filter and bind are objects", async () => {
    const list = await problems((f) => { f[TRIAGE].filter = "status=backlog"; f[TRIAGE].bind = [1]; });
    expectProblem(list, { file: TRIAGE, path: "filter", message: "must be an object" });
    expectProblem(list, { file: TRIAGE, path: "bind", message: "must be an object" });
    expect(list).toHaveLength(2);
  });

  test("a view without board_id has its filter checked against the workspace: columns, card types, fields", async () => {
    const list = await problems((f) => { delete f[TRIAGE].board_id; f[TRIAGE].filter = { status: "zz", type_id: "ghost", "fields.priority": 5 }; });
    // before: syntax alone, so all three passed
    expect(list.map((p) => [p.file, p.path])).toEqual([[TRIAGE, "filter.status"], [TRIAGE, "filter.type_id"], [TRIAGE, 'filter["fields.priority"]']]);
    expect(list.map((p) => p.message).join("\n")).toContain('"zz" is not a column of this workspace');
  });

  test("a view's date bound that is no timestamp is a problem, as in a board's filters", async () => {
    const list = await problems((f) => { f[TRIAGE].board_id = "main"; f[TRIAGE].filter = { "fields.due": { $lt: "tomorrow" } }; });
    expectOnly(list, { file: TRIAGE, path: 'filter["fields.due"]', message: "not a timestamp" });
    expect(await problems((f) => { f[TRIAGE].board_id = "main"; f[TRIAGE].filter = { "fields.due": { $lt: "2026-03-01T12:00:00+02:00" } }; })).toEqual([]);
  });

  test("unknown keys in a view", async () => {
    expectOnly(await problems((f) => { f[TRIAGE].route = "/x"; }), {
      file: TRIAGE, path: "route", message: 'unknown key "route"', valid_options: ["id", "board_id", "path", "bind", "filter", "methods"],
    });
  });
});

const hook = (extra: Record<string, unknown> = {}) => ({ id: "h", kind: "hook", run: ["./notify"], ...extra });
const yaml = (list: unknown[]) => JSON.stringify(list); // JSON is YAML

describe("extensions", () => {
  test("a hook without `on` matches every event and loads", async () => {
    const f = sample();
    f[EXT] = yaml([hook()]);
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.extensions).toEqual([{ id: "h", kind: "hook", run: ["./notify"] }]);
  });

  test("every documented key loads", async () => {
    const f = sample();
    f[EXT] = [
      "- id: notify",
      "  kind: hook",
      "  description: tell the channel",
      "  on: [status_changed, card_created]",
      "  filter: {board_id: main, type_id: task, card_id: card_1, to_status: done, from_status: review}",
      "  run: [./notify, --quiet]",
      "  cwd: scripts",
      "  env: {LEVEL: info}",
      "- id: mirror",
      "  kind: service",
      "  run: [./mirror]",
      "  autostart: true",
      "  restart_policy: on-failure",
      "  expose: {port: 8080}",
      "- id: report",
      "  kind: run",
      "  run: [./report]",
    ].join("\n");
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.extensions.map((e) => e.id)).toEqual(["notify", "mirror", "report"]);
    expect(defs.extensions[0]?.filter).toEqual({ board_id: "main", type_id: "task", card_id: "card_1", to_status: "done", from_status: "review" });
  });

  test("ids are unique", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([hook(), hook()]); }), {
      file: EXT, path: "[1].id", message: 'duplicate extension id "h"',
    });
  });

  test("run is a non-empty list of non-empty strings", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ run: [] })]); }), {
      file: EXT, path: "[0].run", message: "run must be a non-empty argument list",
    });
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ run: "./notify --quiet" })]); }), {
      file: EXT, path: "[0].run", message: 'must be a list ([...]), got "./notify --quiet"',
    });
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ run: [""] })]); }), {
      file: EXT, path: "[0].run[0]", message: "must not be empty",
    });
  });

  test("kind is hook, run or service", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ kind: "plugin" })]); }), {
      file: EXT, path: "[0].kind", message: '"plugin" is not a valid extension kind', valid_options: ["hook", "run", "service"],
    });
  });

  test("on lists event types", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ on: ["status_changed", "card_moved"] })]); }), {
      file: EXT, path: "[0].on[1]", message: '"card_moved" is not a valid event type', valid_options: [...ALL_EVENT_TYPES],
    });
  });

  test("filter keys are board_id, type_id, card_id, to_status, from_status", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([hook({ filter: { status: "done" } })]); }), {
      file: EXT, path: "[0].filter.status", message: 'unknown key "status"', valid_options: ["board_id", "type_id", "card_id", "to_status", "from_status"],
    });
  });

  test("filter references name real boards, types and columns", async () => {
    const list = await problems((f) => {
      f[EXT] = yaml([hook({ filter: { board_id: "ops", type_id: "epic", to_status: "closed", from_status: "open" } })]);
    });
    expectProblem(list, { file: EXT, path: "[0].filter.board_id", message: '"ops" is not a known board' });
    expectProblem(list, { file: EXT, path: "[0].filter.type_id", message: '"epic" is not a known card type' });
    expectProblem(list, { file: EXT, path: "[0].filter.to_status", message: '"closed" is not a known workspace column' });
    expectProblem(list, { file: EXT, path: "[0].filter.from_status", message: '"open" is not a known workspace column' });
    expect(list).toHaveLength(4);
  });

  test("on and filter are for hooks; autostart and restart_policy for services", async () => {
    const list = await problems((f) => {
      f[EXT] = yaml([
        { id: "r", kind: "run", run: ["x"], on: ["card_created"], filter: {} },
        { id: "h", kind: "hook", run: ["x"], autostart: true, restart_policy: "always" },
      ]);
    });
    expectProblem(list, { file: EXT, path: "[0].on", message: "on is only used by hook extensions, not run" });
    expectProblem(list, { file: EXT, path: "[0].filter", message: "filter is only used by hook extensions" });
    expectProblem(list, { file: EXT, path: "[1].autostart", message: "autostart is only used by service extensions, not hook" });
    expectProblem(list, { file: EXT, path: "[1].restart_policy", message: "restart_policy is only used by service extensions" });
    expect(list).toHaveLength(4);
  });

  test("restart_policy values", async () => {
    expectOnly(await problems((f) => { f[EXT] = yaml([{ id: "s", kind: "service", run: ["x"], restart_policy: "sometimes" }]); }), {
      file: EXT, path: "[0].restart_policy", message: "not a valid restart_policy", valid_options: ["on-failure", "always", "never"],
    });
  });

  test("a problem in the YAML file names its line, in the problem and in the printed list (review 2026-11-25)", async () => {
    const text = "# hooks and services\n- id: ok\n  kind: hook\n  run: [x]\n- id: s\n  kind: service\n  run: [x]\n  restart_policy: sometimes\n  env:\n    PORT: 8080\n- id: h\n  kind: hook\n  run: [x]\n  filter: {board_id: nowhere}\n";
    const list = await problems((f) => { f[EXT] = text; });
    expect(list.map((p) => [p.path, p.line]).sort()).toEqual([["[1].env.PORT", 10], ["[1].restart_policy", 8], ["[2].filter.board_id", 14]]);
    expect(formatProblems(list)).toContain(`${EXT}:8: [1].restart_policy:`);
  });

  test("env values are strings", async () => {
    expectOnly(await problems((f) => { f[EXT] = "- id: s\n  kind: service\n  run: [x]\n  env:\n    PORT: 8080\n"; }), {
      file: EXT, path: "[0].env.PORT", message: "must be a string, got 8080",
    });
  });
});

describe("several problems at once", () => {
  test("every problem in every file is reported in one load", async () => {
    const list = await problems((f) => {
      f[W].settings.tag_policy = "propose";
      f[W].settings.default_board = "nope";
      f[W].extra = true;
      f[TASK].fields[4].min = "2024-01-01";
      f[TASK].fields[5].multiple = true;
      f[TASK].icon = "unicorn";
      f[BUG] = '{"id": "bug",}';
      f[MAIN].columns.push("archive");
      f[MAIN].monitors.idle_after = "soon";
      f[MAIN].wip_limits.later = 1;
      f[TRIAGE].methods = ["DELETE"];
      f[EXT] = "- id: a\n  kind: hook\n  run: []\n";
    });
    // files in load order (workspace, card types, boards, views, extensions), shape problems before references
    const where = list.map((p) => `${p.file} ${p.path}`);
    expect(where).toEqual([
      `${W} settings.tag_policy`,
      `${W} extra`,
      `${W} settings.default_board`,
      `${BUG} `,
      `${TASK} fields[4].min`,
      `${TASK} icon`,
      `${TASK} fields[5].multiple`,
      `${MAIN} monitors.idle_after`,
      `${MAIN} columns[5]`,
      `${MAIN} wip_limits.later`,
      `${TRIAGE} methods[0]`,
      `${EXT} [0].run`,
    ]);
  });
});
