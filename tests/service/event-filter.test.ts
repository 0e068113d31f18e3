/** The stream's filter: `since` is a floor for live events too, not only for the replay. */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { eventMatcher, parseStreamFilter } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

test("a since past the log's end holds back live events up to it; signals (no id) pass", async () => {
  const svc = await openTestService(makeWorkspace());
  try {
    const matches = eventMatcher(svc, parseStreamFilter(svc, { since: "000000000090" }));
    const at = new Date().toISOString();
    const stored = (id: string) => ({ id, type: "comment_added", card_id: "card_x", actor: "ada", at, scope: "card", diff: {} }) as unknown as CardEvent;
    expect(matches(stored("000000000061"))).toBe(false);
    expect(matches(stored("000000000090"))).toBe(false);
    expect(matches(stored("000000000091"))).toBe(true);
    expect(matches({ type: "wip_exceeded", board_id: "main", actor: "ada", at, scope: "board", diff: {} } as unknown as CardEvent)).toBe(true);
    expect(eventMatcher(svc, parseStreamFilter(svc, {}))(stored("000000000001"))).toBe(true);
  } finally {
    svc.close();
  }
});
