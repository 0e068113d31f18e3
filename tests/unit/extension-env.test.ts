/** The one list of variables cards sets for extensions (src/domain/extension-env.ts) holds every one the starters set. */
import { expect, test } from "bun:test";
import { extensionEnv } from "../../src/extensions/env.ts";

test("a variable set for an extension kind but missing from CARDS_ENV is refused; the declared env loses to the listed ones", () => {
  const hook = { id: "h", kind: "hook", run: ["true"], env: { CARDS_ACTOR: "declared", OTHER: "kept" } } as never;
  expect(extensionEnv({}, hook, { CARDS_ACTOR: "event-actor" })).toEqual({ CARDS_ACTOR: "event-actor", OTHER: "kept" });
  expect(() => extensionEnv({}, hook, { CARDS_NEW_THING: "x" })).toThrow(/CARDS_NEW_THING is set for a hook but missing from CARDS_ENV/);
  const run = { id: "r", kind: "run", run: ["true"] } as never;
  expect(() => extensionEnv({}, run, { CARDS_EVENT_ID: "1" })).toThrow(/missing from CARDS_ENV/);
});
