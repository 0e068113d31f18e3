/** The stream's filter: `since` is a floor for live events too, not only for the replay; one past the log's end is refused. */
import { expect, test } from "bun:test";
import type { CardEvent } from "../../src/domain/types.ts";
import { createCard, eventMatcher, parseStreamFilter } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

test("since holds back live events up to it; signals (no id) pass; a since past the log's end is 400 naming the end", async () => {
  const svc = await openTestService(makeWorkspace());
  try {
    for (let i = 0; i < 3; i++) await createCard(svc, { type_id: "task", title: `t${i}` }, { actor: "ada" } as never);
    const matches = eventMatcher(svc, parseStreamFilter(svc, { since: "000000000002" }));
    const at = new Date().toISOString();
    const stored = (id: string) => ({ id, type: "comment_added", card_id: "card_x", actor: "ada", at, scope: "card", diff: {} }) as unknown as CardEvent;
    expect(matches(stored("000000000001"))).toBe(false);
    expect(matches(stored("000000000002"))).toBe(false);
    expect(matches(stored("000000000003"))).toBe(true);
    expect(matches({ type: "wip_exceeded", board_id: "main", actor: "ada", at, scope: "board", diff: {} } as unknown as CardEvent)).toBe(true);
    expect(eventMatcher(svc, parseStreamFilter(svc, {}))(stored("000000000001"))).toBe(true);
    // the newest event is a valid floor; one past it would mute the stream until the log caught up
    expect(() => parseStreamFilter(svc, { since: "000000000003" })).not.toThrow();
    let err: any;
    try { parseStreamFilter(svc, { since: "000000000090" }); } catch (e) { err = e; }
    expect(err?.code).toBe("bad_request");
    expect(err?.message).toContain("past the newest event of this workspace (000000000003)");
  } finally {
    svc.close();
  }
});

test("the first id past the log's end is already refused; Last-Event-ID wins over ?since; empty parameters are absent ones", async () => {
  const svc = await openTestService(makeWorkspace());
  try {
    for (let i = 0; i < 3; i++) await createCard(svc, { type_id: "task", title: `t${i}` }, { actor: "ada" } as never);
    expect(() => parseStreamFilter(svc, { since: "000000000004" })).toThrow(/past the newest event/);
    // a reconnecting EventSource sends Last-Event-ID and repeats the URL's ?since: the header is where it got to
    expect(parseStreamFilter(svc, { since: "000000000001" }, "000000000002").since).toBe("000000000002");
    expect(parseStreamFilter(svc, { since: "000000000002" }, undefined).since).toBe("000000000002");
    // `?actor=&owner=&card_id=&board_id=&since=` from a form or a script's template filters nothing
    const empty = parseStreamFilter(svc, { actor: "", owner: "", card_id: "", board_id: "", since: "" });
    expect(empty).toEqual({});
    const at = new Date().toISOString();
    const e = { id: "000000000001", type: "card_created", card_id: "card_x", actor: "bob", at, scope: "card", diff: {} } as unknown as CardEvent;
    expect(eventMatcher(svc, empty)(e)).toBe(true);
  } finally {
    svc.close();
  }
});
