import { describe, expect, test } from "bun:test";
import { FIELD_TYPES } from "../../src/domain/types.ts";
import { ICON_ALIASES } from "../../src/definitions/schemas.ts";
import { addField, BUG, expectOnly, expectProblem, problems, TASK, type Files } from "./helpers.ts";

/** Adds one field to the task type and returns the problems and the field's path. */
async function withField(def: Record<string, unknown>, edit?: (f: Files) => void) {
  let i = -1;
  const list = await problems((f) => { i = addField(f, TASK, def); edit?.(f); });
  return { list, at: `fields[${i}]` };
}

const ITEM_TYPES = FIELD_TYPES.filter((t) => t !== "repeating");

describe("field type and keys", () => {
  test("an unknown field type lists the ten types", async () => {
    const { list, at } = await withField({ id: "x", type: "boolean" });
    expectOnly(list, { file: TASK, path: `${at}.type`, message: '"boolean" is not a valid field type', valid_options: [...FIELD_TYPES] });
  });

  test("an unknown key on a field lists the FieldDef keys", async () => {
    const { list, at } = await withField({ id: "x", type: "string", colour: "red" });
    const p = expectOnly(list, { file: TASK, path: `${at}.colour`, message: 'unknown key "colour"' });
    expect(p.valid_options).toContain("item_fields");
    expect(p.valid_options).toContain("artifact_policy");
  });

  test("display is one of feed, badge, hidden, link, monospace", async () => {
    const { list, at } = await withField({ id: "x", type: "string", display: "bold" });
    expectOnly(list, { file: TASK, path: `${at}.display`, message: "not a valid display", valid_options: ["feed", "badge", "hidden", "link", "monospace"] });
  });

  test("artifact_policy is local or uri", async () => {
    const { list, at } = await withField({ id: "x", type: "artifact", artifact_policy: "s3" });
    expectOnly(list, { file: TASK, path: `${at}.artifact_policy`, message: "not a valid artifact_policy", valid_options: ["local", "uri"] });
  });

  test("duplicate field ids", async () => {
    const { list, at } = await withField({ id: "priority", type: "string" });
    expectOnly(list, { file: TASK, path: `${at}.id`, message: 'duplicate field id "priority"' });
  });

  test("title and status are reserved field ids", async () => {
    const { list, at } = await withField({ id: "status", type: "string" });
    expectOnly(list, { file: TASK, path: `${at}.id`, message: '"status" is reserved' });
  });

  test("field ids follow the id pattern", async () => {
    const { list, at } = await withField({ id: "due date", type: "date" });
    expectOnly(list, { file: TASK, path: `${at}.id`, message: "is not a valid id" });
  });

  test.each([
    ["options", { type: "string", options: ["a"] }, "options is only allowed on enum fields, not on string fields"],
    ["option_themes", { type: "text", option_themes: {} }, "option_themes is only allowed on enum fields"],
    ["min", { type: "string", min: 1 }, "min is only allowed on number and date fields"],
    ["max", { type: "enum", options: ["a"], max: 1 }, "max is only allowed on number and date fields"],
    ["target_type", { type: "string", target_type: "task" }, "target_type is only allowed on card_link fields"],
    ["link_type", { type: "user", link_type: "related" }, "link_type is only allowed on card_link fields"],
    ["item_fields", { type: "text", item_fields: [{ id: "a", type: "string" }] }, "item_fields is only allowed on repeating fields"],
    ["artifact_policy", { type: "string", artifact_policy: "uri" }, "artifact_policy is only allowed on artifact fields"],
  ])("%s on the wrong type is an error", async (key, def, message) => {
    const { list, at } = await withField({ id: "x", ...def });
    expectOnly(list, { file: TASK, path: `${at}.${key}`, message });
  });
});

describe("multiple", () => {
  test.each(["string", "text", "number", "date", "tags", "card_link", "artifact"])("multiple on %s is an error", async (type) => {
    const { list, at } = await withField({ id: "x", type, multiple: true });
    expectOnly(list, { file: TASK, path: `${at}.multiple`, message: `multiple is only allowed on enum and user fields, not on ${type} fields` });
  });

  test("multiple on enum and user loads", async () => {
    const { list } = await withField({ id: "x", type: "user", multiple: true }, (f) => addField(f, TASK, { id: "y", type: "enum", multiple: true, options: ["a"] }));
    expect(list).toEqual([]);
  });

  test("multiple inside item_fields is an error, even on enum", async () => {
    const { list, at } = await withField({ id: "log", type: "repeating", item_fields: [{ id: "who", type: "user", multiple: true }] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields[0].multiple`, message: "multiple is not allowed inside item_fields" });
  });
});

describe("enum options and themes", () => {
  test("options are required for enum", async () => {
    const { list, at } = await withField({ id: "x", type: "enum" });
    expectOnly(list, { file: TASK, path: `${at}.options`, message: "enum fields need options" });
  });

  test("options must not be empty", async () => {
    const { list, at } = await withField({ id: "x", type: "enum", options: [] });
    expectOnly(list, { file: TASK, path: `${at}.options`, message: "at least one value" });
  });

  test("duplicate options", async () => {
    const { list, at } = await withField({ id: "x", type: "enum", options: ["a", "b", "a"] });
    expectOnly(list, { file: TASK, path: `${at}.options[2]`, message: 'duplicate option "a"' });
    const nfd = await withField({ id: "x", type: "enum", options: ["\u00fcber", "b", "u\u0308ber"] });
    expectOnly(nfd.list, { file: TASK, path: `${nfd.at}.options[2]`, message: /^duplicate option "u\u0308ber": it is "\u00fcber" in another Unicode form/ });
  });

  test("an option two card types share is spelled in one Unicode form (a filter over both found the other type's cards by neither)", async () => {
    const { list, at } = await withField({ id: "mood", type: "enum", options: ["\u00e9lev\u00e9e", "bas"] }, (f) => { addField(f, BUG, { id: "mood", type: "enum", options: ["bas", "e\u0301leve\u0301e"] }); });
    // the types are read in file order: bug's spelling came first
    expectOnly(list, { file: TASK, path: `${at}.options[0]`, message: /^option "\u00e9lev\u00e9e" of field "mood" is "e\u0301leve\u0301e" of card type "bug" in another Unicode form/ });
    // the same spelling in both is fine
    const same = await withField({ id: "mood", type: "enum", options: ["\u00e9lev\u00e9e"] }, (f) => { addField(f, BUG, { id: "mood", type: "enum", options: ["\u00e9lev\u00e9e"] }); });
    expect(same.list).toEqual([]);
  });

  test("option_themes keys are options", async () => {
    const { list, at } = await withField({ id: "x", type: "enum", options: ["a", "b"], option_themes: { c: { color: "red" } } });
    expectOnly(list, { file: TASK, path: `${at}.option_themes.c`, message: '"c" is not one of the options', valid_options: ["a", "b"] });
  });

  test("option theme icons are known icon aliases", async () => {
    const { list, at } = await withField({ id: "x", type: "enum", options: ["a"], option_themes: { a: { icon: "unicorn" } } });
    expectOnly(list, { file: TASK, path: `${at}.option_themes.a.icon`, message: '"unicorn" is not a valid icon alias', valid_options: [...ICON_ALIASES] });
  });

  test("option theme keys are icon and color only", async () => {
    const { list, at } = await withField({ id: "x", type: "enum", options: ["a"], option_themes: { a: { colour: "red" } } });
    expectOnly(list, { file: TASK, path: `${at}.option_themes.a.colour`, message: 'unknown key "colour"', valid_options: ["icon", "color"] });
  });
});

describe("min and max", () => {
  test("a date bound given as a date string: the message says bounds are Unix seconds UTC", async () => {
    const { list, at } = await withField({ id: "x", type: "date", min: "2024-01-01T00:00:00Z" });
    expectOnly(list, { file: TASK, path: `${at}.min`, message: "a date field's bounds are Unix seconds UTC" });
  });

  test("a date bound in milliseconds is a problem naming the seconds; a number field's large bound is fine", async () => {
    const { list, at } = await withField({ id: "x", type: "date", min: 1704067200000 });
    expectOnly(list, { file: TASK, path: `${at}.min`, message: "min 1704067200000 looks like milliseconds: a date field's bounds are Unix seconds UTC (1704067200?)" });
    expect((await withField({ id: "x", type: "number", max: 1e15 })).list).toEqual([]);
  });

  test("a negative date bound in milliseconds (before 1970) is told the same; so is one far before", async () => {
    const { list, at } = await withField({ id: "x", type: "date", min: -631152000000 });
    expectOnly(list, { file: TASK, path: `${at}.min`, message: "min -631152000000 looks like milliseconds: a date field's bounds are Unix seconds UTC (-631152000?)" });
    const far = await withField({ id: "x", type: "date", max: -1e20 });
    expectOnly(far.list, { file: TASK, path: `${far.at}.max`, message: "max -100000000000000000000 is before 1200 BC: a date field's bounds are Unix seconds UTC (e.g. 1704067200 for 2024-01-01)" });
    // -99,999,999,999 s (1199 BC) is a bound in seconds
    expect((await withField({ id: "x", type: "date", min: -99999999999 })).list).toEqual([]);
  });

  test("a number bound must be a number", async () => {
    const { list, at } = await withField({ id: "x", type: "number", max: true });
    expectOnly(list, { file: TASK, path: `${at}.max`, message: "must be a number, got true" });
    // a quoted number is told to drop the quotes, not about date bounds
    const quoted = await withField({ id: "x", type: "number", min: "0" });
    expectOnly(quoted.list, { file: TASK, path: `${quoted.at}.min`, message: 'must be a number, got "0" (write it without quotes: 0)' });
  });

  test("a date bound far past milliseconds says so, without a seconds value that is no better", async () => {
    const { list, at } = await withField({ id: "x", type: "date", min: 1e20 });
    expectOnly(list, { file: TASK, path: `${at}.min`, message: "min 100000000000000000000 is past the year 5000: a date field's bounds are Unix seconds UTC (e.g. 1704067200 for 2024-01-01)" });
  });

  test("min must not exceed max", async () => {
    const { list, at } = await withField({ id: "x", type: "number", min: 10, max: 5 });
    expectOnly(list, { file: TASK, path: `${at}.min`, message: "min (10) must not exceed max (5)" });
  });

  test("min equal to max is fine", async () => {
    expect((await withField({ id: "x", type: "date", min: 1704067200, max: 1704067200 })).list).toEqual([]);
  });
});

describe("repeating", () => {
  test("item_fields are required", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating" });
    expectOnly(list, { file: TASK, path: `${at}.item_fields`, message: "repeating fields need item_fields" });
  });

  test("item_fields must not be empty", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields`, message: "at least one field" });
  });

  test("no nesting: an item field may not be repeating", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [{ id: "y", type: "repeating", item_fields: [{ id: "z", type: "text" }] }] });
    expectProblem(list, { file: TASK, path: `${at}.item_fields[0].type`, message: "repeating fields cannot be nested", valid_options: ITEM_TYPES });
    expectProblem(list, { file: TASK, path: `${at}.item_fields[0].item_fields`, message: 'unknown key "item_fields"' });
    expect(list).toHaveLength(2);
  });

  test("duplicate item field ids", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [{ id: "a", type: "text" }, { id: "a", type: "date" }] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields[1].id`, message: 'duplicate item field id "a"' });
  });

  test("entry_id is reserved inside item_fields", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [{ id: "entry_id", type: "string" }] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields[0].id`, message: '"entry_id" is reserved' });
  });

  test("item fields get the same checks as fields", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [{ id: "lvl", type: "enum", options: ["a"], default: "b" }] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields[0].default`, message: '"b" is not one of the options', valid_options: ["a"] });
  });
});

describe("card_link references", () => {
  test("target_type names a real card type", async () => {
    const { list, at } = await withField({ id: "x", type: "card_link", target_type: "epic" });
    expectOnly(list, { file: TASK, path: `${at}.target_type`, message: '"epic" is not a known card type', valid_options: ["bug", "review", "task"] });
  });

  test("link_type names a real link type", async () => {
    const { list, at } = await withField({ id: "x", type: "card_link", link_type: "owns" });
    expectOnly(list, {
      file: TASK, path: `${at}.link_type`, message: '"owns" is not a known link type',
      valid_options: ["depends-on", "blocked-by", "related", "parent", "sent-to"],
    });
  });

  test("card_link in item_fields is checked too", async () => {
    const { list, at } = await withField({ id: "x", type: "repeating", item_fields: [{ id: "l", type: "card_link", target_type: "epic" }] });
    expectOnly(list, { file: TASK, path: `${at}.item_fields[0].target_type`, message: '"epic" is not a known card type' });
  });
});

describe("defaults must be valid for their field", () => {
  test.each([
    [{ type: "enum", options: ["a", "b"], default: "c" }, '"c" is not one of the options', ["a", "b"]],
    [{ type: "enum", options: ["a", "b"], default: ["a"] }, "must be one option (a string)", ["a", "b"]],
    [{ type: "enum", multiple: true, options: ["a", "b"], default: "a" }, "must be a non-empty list of options", undefined],
    [{ type: "enum", multiple: true, options: ["a", "b"], default: [] }, "must be a non-empty list of options", undefined],
    [{ type: "enum", multiple: true, options: ["a", "b"], default: ["a", "z"] }, '"z" is not one of the options', ["a", "b"]],
    [{ type: "enum", multiple: true, options: ["a", "b"], default: ["a", "a"] }, 'lists "a" twice', undefined],
    [{ type: "user", multiple: true, default: "ada" }, "must be a non-empty list of user ids", undefined],
    [{ type: "user", multiple: true, default: [1] }, "must be a list of strings", undefined],
    [{ type: "user", default: ["ada"] }, "must be a user id", undefined],
    [{ type: "number", min: 0, max: 10, default: 11 }, "11 is above max 10", undefined],
    [{ type: "number", min: 0, default: -1 }, "-1 is below min 0", undefined],
    [{ type: "number", default: "5" }, 'must be a number, got "5"', undefined],
    [{ type: "date", default: "tomorrow" }, "must be an RFC 3339 timestamp", undefined],
    [{ type: "date", min: 1735689600, default: "2024-06-01T00:00:00Z" }, "below min 1735689600", undefined],
    [{ type: "string", default: "two\nlines" }, "single line", undefined],
    [{ type: "text", default: 3 }, "must be a string", undefined],
    [{ type: "tags", default: "docs" }, "must be a list of tags", undefined],
    [{ type: "card_link", default: "card_0001" }, "default is not supported: card_link fields take no default (remove the key)", undefined],
    [{ type: "artifact", default: { uri: "x" } }, "default is not supported: artifact fields take no default (remove the key)", undefined],
    [{ type: "repeating", item_fields: [{ id: "a", type: "text" }], default: [] }, "default is not supported: repeating fields take no default (remove the key)", undefined],
    [{ type: "string", default: null }, "must not be null", undefined],
    [{ type: "text", required: true, default: "" }, "default must not be empty: the field is required", undefined],
    [{ type: "string", required: true, default: "  " }, "default must not be empty: the field is required", undefined],
  ])("%j", async (def, message, validOptions) => {
    const { list, at } = await withField({ id: "x", ...def });
    const p = expectOnly(list, { file: TASK, path: `${at}.default`, message });
    expect(p.valid_options).toEqual(validOptions);
  });

  test.each([
    { type: "enum", multiple: true, options: ["a", "b"], default: ["b", "a"] },
    { type: "user", multiple: true, default: ["ada", "agent-1"] },
    { type: "number", min: 0, max: 10, default: 10 },
    { type: "date", min: 1704067200, default: "2025-01-31T12:00:00Z" },
    { type: "tags", default: ["docs"] },
    { type: "text", default: "two\nlines" },
  ])("valid default %j loads", async (def) => {
    expect((await withField({ id: "x", ...def })).list).toEqual([]);
  });

  // each loaded, then every create without the field was refused (the load check was a looser copy)
  test.each([
    [{ type: "user", default: "   " }, "must be a user id"],
    [{ type: "user", default: "a\nb" }, "must be a user id"],
    [{ type: "user", multiple: true, default: ["  "] }, "must be a user id"],
    [{ type: "tags", default: ["x", "x"] }, "duplicate"],
    [{ type: "tags", default: [""] }, "non-empty single-line"],
    [{ type: "date", default: "2025-02-30T00:00:00Z" }, "no such date"],
    [{ type: "date", default: "2025-01-01T24:00:00Z" }, ""],
    [{ type: "date", max: 1735689600, default: "2025-01-01T00:00:00.5Z" }, "max"],
  ])("a default the create would refuse is a problem at load: %j", async (def, message) => {
    const { list, at } = await withField({ id: "x", ...def }, (f) => { (f["definitions/workspace.json"] as any).settings.tag_policy = "open"; });
    expectOnly(list, { file: TASK, path: `${at}.default`, message });
  });

  test("every default the sample workspace declares is taken by a create without the field", async () => {
    const { loadDefinitions } = await import("../../src/definitions/load.ts");
    const { validateFields } = await import("../../src/domain/fields.ts");
    const defs = await loadDefinitions(new URL("../../", import.meta.url).pathname);
    for (const type of defs.cardTypes.values()) {
      if (!type.fields.some((f) => f.default !== undefined)) continue;
      const required = Object.fromEntries(type.fields.filter((f) => f.required && f.default === undefined).map((f) => [f.id, f.type === "number" ? 1 : f.type === "enum" ? f.options![0] : "x"]));
      expect(() => validateFields({ type, settings: defs.workspace.settings, tagSet: defs.workspace.tag_set ?? [], fields: required, mode: "create", makeEntryId: () => "ent_1" })).not.toThrow();
    }
  });
});

describe("card type icon", () => {
  test("icon must be a known alias, echoed as valid options", async () => {
    expectOnly(await problems((f) => { f[TASK].icon = "unicorn"; }), {
      file: TASK, path: "icon", message: '"unicorn" is not a valid icon alias', valid_options: [...ICON_ALIASES],
    });
  });

  test("the alias list is a fixed list of about forty names with the common ones", () => {
    expect(ICON_ALIASES.length).toBeGreaterThanOrEqual(35);
    for (const name of ["task", "bug", "review", "doc", "check", "flag", "star", "bolt", "clock", "user", "robot", "link", "lock"]) {
      expect(ICON_ALIASES).toContain(name);
    }
    expect(new Set(ICON_ALIASES).size).toBe(ICON_ALIASES.length);
  });
});
