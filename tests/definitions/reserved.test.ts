/**
 * Names JavaScript objects already have: refused as ids and as map keys (a column named
 * `constructor` passed the check, then a move into it failed as an internal error, and
 * valibot's record dropped such keys without a word). Also: migration keys in canonical
 * digits, and no duplicate searchable_fields.
 */
import { describe, test } from "bun:test";
import { expectOnly, expectProblem, MAIN, problems, TASK, W } from "./helpers.ts";

describe("reserved names", () => {
  for (const name of ["constructor", "toString", "valueOf", "hasOwnProperty"]) {
    test(`a column named ${name} is refused`, async () => {
      const list = await problems((f) => {
        f[W].columns.push({ id: name, name: "X" });
      });
      expectProblem(list, { file: W, path: `columns[${5}].id`, message: "is a reserved name" });
    });
  }

  test("a reserved key in a map is reported, not dropped (wip_limits, option_themes, migrations)", async () => {
    const wip = await problems((f) => {
      f[MAIN].wip_limits = JSON.parse('{"__proto__": 2, "doing": 3}');
    });
    expectProblem(wip, { file: MAIN, path: "wip_limits", message: '"__proto__" is a reserved name' });
    const themes = await problems((f) => {
      const priority = f[TASK].fields.find((x: any) => x.id === "priority");
      priority.option_themes = { constructor: { color: "red" } };
    });
    expectProblem(themes, { file: TASK, path: "fields[0].option_themes", message: '"constructor" is a reserved name' });
  });
});

describe("migrations and searchable_fields", () => {
  test('a migration key with a leading zero ("02") is refused: it would never apply', async () => {
    const list = await problems((f) => {
      f[TASK].migrations = { "02": f[TASK].migrations["2"] };
    });
    expectOnly(list, { file: TASK, path: 'migrations["02"]', message: 'migration key "02" must be a version from "2" to "2"' });
  });

  test("a field listed twice in searchable_fields is refused", async () => {
    const list = await problems((f) => {
      f[TASK].searchable_fields = ["description", "description"];
    });
    expectOnly(list, { file: TASK, path: "searchable_fields[1]", message: 'duplicate field "description"' });
  });
});

