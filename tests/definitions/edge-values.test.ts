/** Definition rules at their edges: bounds of settings, reserved and malformed ids, each character a theme value may not hold. */
import { describe, expect, test } from "bun:test";
import { expectProblem, MAIN, problems, TASK, W } from "./helpers.ts";

describe("definition values at their edges", () => {
  test("event_retention_days 0 is refused, 1 loads", async () => {
    expectProblem(await problems((f) => { f[W].settings.event_retention_days = 0; }), { file: W, path: "settings.event_retention_days", message: "" });
    expect(await problems((f) => { f[W].settings.event_retention_days = 1; })).toEqual([]);
  });

  test('a declared user named "me" is refused: me names the caller', async () => {
    expectProblem(await problems((f) => { f[W].users = [{ id: "me", kind: "human" }]; }), { file: W, path: "users[0].id", message: "reserved" });
  });

  test("ids start with a letter or a digit", async () => {
    expectProblem(await problems((f) => { f[TASK].fields.push({ id: "_x", type: "string" }); }), { file: TASK, path: `fields[${9}].id`, message: "" });
    expectProblem(await problems((f) => { f[W].columns.push({ id: "-x", name: "X" }); }), { file: W, path: "columns[5].id", message: "" });
  });

  test.each([";", "{", "}", "<", ">"])("a theme value holding %s is refused (it would end the CSS declaration)", async (c) => {
    expectProblem(await problems((f) => { f[MAIN].theme = { accent: `red${c}x` }; }), { file: MAIN, path: "theme.accent", message: "must not contain" });
  });
});
