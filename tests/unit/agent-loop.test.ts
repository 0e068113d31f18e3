/** The columns the agent loop names (cards prime, the tool server's instructions). */
import { describe, expect, test } from "bun:test";
import { agentLoopColumns } from "../../src/domain/transitions.ts";
import type { WorkspaceDef } from "../../src/domain/types.ts";

const ws = (ids: string[]): WorkspaceDef => ({ columns: ids.map((id) => ({ id, name: id })), settings: {} }) as unknown as WorkspaceDef;
const loop = (ids: string[]) => agentLoopColumns(ws(ids));

describe("agentLoopColumns", () => {
  test("a 3-column workflow claims into its in-progress column, never into done (before: take-next --status done)", () => {
    expect(loop(["open", "in_progress", "done"])).toMatchObject({ ready: "open", doing: "in_progress", done: "done" });
    expect(loop(["todo", "in-progress", "done"])).toMatchObject({ ready: "todo", doing: "in-progress", done: "done" });
    expect(loop(["new", "active", "closed"])).toMatchObject({ ready: "new", doing: "active", done: "closed" });
    expect(loop(["a", "b", "c"])).toMatchObject({ ready: "a", doing: "b", done: "c" });
  });

  test("the column after todo when no column names work in progress", () => {
    expect(loop(["backlog", "todo", "working_on", "done"])).toMatchObject({ ready: "todo", doing: "working_on" });
  });

  test("doing wins over other names; longer workflows keep the third column", () => {
    expect(loop(["backlog", "todo", "doing", "review", "done"])).toEqual({ ready: "todo", doing: "doing", review: "review", done: "done" });
    expect(loop(["active", "doing", "done"])).toMatchObject({ doing: "doing" });
    expect(loop(["new", "triage", "mitigating", "resolved", "done"])).toMatchObject({ ready: "triage", doing: "mitigating", review: "done" });
  });

  test("todo, review, done: work is done in todo and handed to review (before: review was both)", () => {
    expect(loop(["todo", "review", "done"])).toEqual({ ready: "todo", doing: "todo", review: "review", done: "done" });
  });

  test("two columns: work waits and is done in the first", () => {
    expect(loop(["todo", "done"])).toMatchObject({ ready: "todo", doing: "todo", done: "done" });
  });
});

describe("agentLoopColumns on an enforced graph", () => {
  const enforced = (ids: string[], transitions: Record<string, string[]>) =>
    agentLoopColumns({ columns: ids.map((id) => ({ id, name: id })), settings: { enforce_transitions: true } } as unknown as WorkspaceDef,
      { id: "main", name: "main", columns: ids, card_type_ids: ["task"], transitions } as any);

  test("the hand-off is a forward move from doing (before: the first listed move, back to the queue)", () => {
    const ids = ["backlog", "ready", "wip", "qa", "shipped"];
    const loop = enforced(ids, { backlog: ["ready"], ready: ["wip"], wip: ["ready", "qa"], qa: ["shipped", "wip"] });
    expect(loop).toEqual({ ready: "ready", doing: "wip", review: "qa", done: "shipped" });
  });

  test("among forward moves, one from which done is reached", () => {
    const ids = ["todo", "doing", "parked", "check", "done"];
    const loop = enforced(ids, { todo: ["doing"], doing: ["todo", "parked", "check"], parked: ["doing"], check: ["done"] });
    expect(loop.review).toBe("check");
  });
});
