/**
 * hookMatches (src/extensions/match.ts), pure.
 * Each test names the mutants of mutation round 4 it kills (a change to the code that survived the suite before).
 */
import { expect, test } from "bun:test";
import type { CardEvent, ExtensionDef } from "../../src/domain/types.ts";
import { hookMatches, type MatchContext } from "../../src/extensions/match.ts";

const types: Record<string, string> = { c1: "task", c2: "bug" };
const ctx: MatchContext = {
  cardType: (e) => (e.card_id ? types[e.card_id] : undefined),
  boardTypes: (id) => ({ main: ["task"], bugs: ["bug"] } as Record<string, string[]>)[id],
};
const hook = (x: Partial<ExtensionDef>): ExtensionDef => ({ id: "h", kind: "hook", run: ["true"], ...x });
const ev = (x: Partial<CardEvent>): CardEvent => ({ type: "comment_added", actor: "ada", at: "2024-01-01T00:00:00Z", scope: "card", diff: {}, ...x } as CardEvent);

// M1 (`on: []` treated as "every type")
test("a hook with an empty `on` list runs for no event", () => {
  expect(hookMatches(hook({ on: [] }), ev({ card_id: "c1" }), ctx)).toBe(false);
});

// M2 (filter.card_id ignored)
test("filter card_id: another card's event does not match", () => {
  const h = hook({ filter: { card_id: "c1" } });
  expect(hookMatches(h, ev({ card_id: "c1" }), ctx)).toBe(true);
  expect(hookMatches(h, ev({ card_id: "c2" }), ctx)).toBe(false);
});

// M3 (board-scoped events reach type_id-filtered hooks when cardType answers)
test("filter type_id: a board-scoped signal never matches, even one carrying a card id", () => {
  const h = hook({ filter: { type_id: "task" } });
  expect(hookMatches(h, ev({ card_id: "c1" }), ctx)).toBe(true);
  expect(hookMatches(h, ev({ scope: "board", board_id: "main", card_id: "c1", type: "wip_exceeded" }), ctx)).toBe(false);
});

// M4 (board-scoped event of another board matches filter.board_id)
test("filter board_id: a board-scoped signal of another board does not match", () => {
  const h = hook({ filter: { board_id: "main" } });
  expect(hookMatches(h, ev({ scope: "board", board_id: "main", type: "wip_exceeded" }), ctx)).toBe(true);
  expect(hookMatches(h, ev({ scope: "board", board_id: "bugs", type: "wip_exceeded" }), ctx)).toBe(false);
});

// M5 (a card event whose card type is unknown matches a board filter)
test("filter board_id: a card event whose card type cannot be found does not match", () => {
  const h = hook({ filter: { board_id: "main" } });
  expect(hookMatches(h, ev({ card_id: "c1" }), ctx)).toBe(true);
  expect(hookMatches(h, ev({ card_id: "gone" }), ctx)).toBe(false);
  expect(hookMatches(h, ev({ card_id: "c2" }), ctx)).toBe(false);
});
