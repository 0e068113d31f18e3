/** The graph check's edge cases and which board governs a type (src/domain/transitions.ts). */
import { describe, expect, test } from "bun:test";
import { assertTransition, doneColumn } from "../../src/domain/transitions.ts";
import { governingBoard } from "../../src/domain/moves.ts";
import type { Board, CardType, WorkspaceDef } from "../../src/domain/types.ts";

const columns = ["todo", "doing", "done"];
const ws = (enforce: boolean, cols = columns) => ({ columns: cols.map((id) => ({ id })), settings: { enforce_transitions: enforce } }) as unknown as WorkspaceDef;
const board = (id: string, extra: Partial<Board> = {}) => ({ id, columns, card_type_ids: ["bug"], ...extra }) as Board;
const bug = { id: "bug", fields: [] } as unknown as CardType;

describe("the graph check", () => {
  test("an unchanged status passes an enforced graph that has no edge from it to itself", () => {
    expect(() => assertTransition(ws(true), board("b", { transitions: { todo: ["doing"] } }), bug, "todo", "todo", false)).not.toThrow();
    expect(() => assertTransition(ws(true), board("b", { transitions: { todo: ["doing"] } }), bug, "todo", "done", false)).toThrow(/not allowed on board b/);
  });

  test("an enforced board without a transitions map allows every move", () => {
    expect(() => assertTransition(ws(true), board("b"), bug, "todo", "done", false)).not.toThrow();
  });

  test("a column the map leaves out has no moves out of it (force aside)", () => {
    const b = board("b", { transitions: { todo: ["doing"], doing: ["todo", "done"] } });
    let err: any;
    try { assertTransition(ws(true), b, bug, "done", "todo", false); } catch (e) { err = e; }
    expect(err).toMatchObject({ code: "transition_illegal", extra: { valid_options: [] } });
    expect(() => assertTransition(ws(true), b, bug, "done", "todo", true)).not.toThrow();
  });
});

describe("the governing board", () => {
  test("the default board when it shows the type, else the alphabetically first board that does, whatever the order they were read in", () => {
    const boards = new Map([["z-bugs", board("z-bugs")], ["main", board("main", { card_type_ids: ["task"] })], ["a-bugs", board("a-bugs")]]);
    expect(governingBoard(boards, "main", "bug")!.id).toBe("a-bugs");
    expect(governingBoard(boards, "z-bugs", "bug")!.id).toBe("z-bugs");
    expect(governingBoard(boards, "main", "nothing")).toBeUndefined();
  });
});

describe("the done column for blocking", () => {
  test("`done` wherever it stands, else the last column", () => {
    expect(doneColumn(ws(false, ["done", "open", "closed"]))).toBe("done");
    expect(doneColumn(ws(false, ["open", "wip", "closed"]))).toBe("closed");
  });
});
