/** Hook extensions with real child processes, driven by an in-process service. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHooks, type Hooks } from "../../src/extensions/hooks.ts";
import { stderrNote } from "../../src/extensions/env.ts";
import { createCard, deleteCard, followReloads, onReload, patchCard, type Service } from "../../src/service/index.ts";
import { openTestService } from "../helpers/workspace.ts";
import { recordDir, records, sh, waitFor, workspaceWith } from "./util.ts";

const ctx = { actor: "ada" };
const URL = "http://127.0.0.1:4777";
let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function setup(exts: Parameters<typeof workspaceWith>[0], opts: Partial<Parameters<typeof startHooks>[1]> = {}) {
  const ws = workspaceWith(exts);
  const svc = await openTestService(ws, "serve");
  const logs: string[] = [];
  const hooks = startHooks(svc, { url: URL, log: (m) => logs.push(m), ...opts });
  cleanup.push(() => svc.close(), () => hooks.stop());
  return { ws, svc, hooks, logs };
}

/**
 * Two services on one workspace declaring the same gated hook (each run records itself in
 * its server's directory, then waits for the gate); hooks run on the first only.
 */
async function gatedPair(opts: Partial<Parameters<typeof startHooks>[1]>) {
  const { ws, svc, hooks } = await setup([], opts);
  const gate = join(ws, "gate-open");
  const here = recordDir(ws, "here");
  const there = recordDir(ws, "there");
  const gated = (dir: string) => [{ id: "gated", kind: "hook" as const, on: ["card_created" as const], run: sh("gate.sh", gate), env: { RECORD_DIR: dir } }];
  svc.defs = { ...svc.defs, extensions: gated(here) };
  const other = await openTestService(ws, "serve");
  other.defs = { ...other.defs, extensions: gated(there) };
  return { svc, hooks, gate, here, there, other };
}

/** A task moved backlog -> todo -> doing on the main board. */
async function moveTask(svc: Service, title = "t") {
  const card = await createCard(svc, { type_id: "task", title }, ctx);
  const todo = await patchCard(svc, card.id, { version: card.version, status: "todo" }, ctx);
  const doing = await patchCard(svc, card.id, { version: todo.version, status: "doing" }, ctx);
  return { card, doing };
}

describe("hook runs", () => {
  test("gets the event JSON on stdin, the five CARDS_* variables, its env and the workspace root as cwd", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    // declared after the fact: the hook list follows svc.defs
    svc.defs = { ...svc.defs, extensions: [{ id: "rec", kind: "hook", on: ["card_created"], run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "x1" } }] };
    const card = await createCard(svc, { type_id: "task", title: "hello" }, ctx);
    await waitFor(() => records(rec).length === 1, "one record");
    const [r] = records(rec);
    expect(r!.stdin.type).toBe("card_created");
    expect(r!.stdin.card_id).toBe(card.id);
    expect(r!.stdin.diff.card.title).toBe("hello");
    expect(r!.env).toMatchObject({
      CARDS_URL: URL,
      CARDS_WORKSPACE: ws,
      CARDS_ACTOR: "ada",
      CARDS_EVENT_ID: r!.stdin.id,
      CARDS_EVENT_TYPE: "card_created",
      EXTRA: "x1",
      cwd: realpathSync(ws),
    });
    expect(r!.stdin.id).toMatch(/^\d+$/);
  });

  test("cwd is resolved against the workspace root", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    mkdirSync(join(ws, "hooks/here"), { recursive: true });
    svc.defs = { ...svc.defs, extensions: [{ id: "rec", kind: "hook", on: ["card_created"], cwd: "hooks/here", run: sh("record.sh"), env: { RECORD_DIR: rec } }] };
    await createCard(svc, { type_id: "task", title: "cwd" }, ctx);
    await waitFor(() => records(rec).length === 1, "one record");
    expect(records(rec)[0]!.env.cwd).toBe(realpathSync(join(ws, "hooks/here")));
  });

  test("filter to_status / from_status: only the matching status change runs it", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    svc.defs = {
      ...svc.defs,
      extensions: [
        { id: "to-doing", kind: "hook", on: ["status_changed", "card_created"], filter: { to_status: "doing" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "to" } },
        { id: "from-backlog", kind: "hook", filter: { from_status: "backlog" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "from" } },
      ],
    };
    const { card } = await moveTask(svc);
    await waitFor(() => records(rec).length === 2, "two records");
    await Bun.sleep(200);
    const got = records(rec).map((r) => [r.env.EXTRA, r.stdin.type, r.stdin.diff.before, r.stdin.diff.after]).sort();
    expect(got).toEqual([["from", "status_changed", "backlog", "todo"], ["to", "status_changed", "todo", "doing"]]);
    expect(records(rec).every((r) => r.stdin.card_id === card.id)).toBe(true);
  });

  test("filter to_status matches card_created by the new card's status", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    svc.defs = { ...svc.defs, extensions: [{ id: "born-todo", kind: "hook", on: ["card_created"], filter: { to_status: "todo" }, run: sh("record.sh"), env: { RECORD_DIR: rec } }] };
    await createCard(svc, { type_id: "task", title: "backlog" }, ctx);
    const todo = await createCard(svc, { type_id: "task", title: "todo", status: "todo" }, ctx);
    await waitFor(() => records(rec).length === 1, "one record");
    await Bun.sleep(200);
    expect(records(rec).map((r) => r.stdin.card_id)).toEqual([todo.id]);
  });

  test("filter board_id and type_id go by the card's type (looked up for events without the card)", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    svc.defs = {
      ...svc.defs,
      extensions: [
        { id: "bugs-board", kind: "hook", on: ["card_created", "status_changed"], filter: { board_id: "bugs" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "board" } },
        { id: "tasks", kind: "hook", on: ["status_changed"], filter: { type_id: "task" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "type" } },
      ],
    };
    const { card: task } = await moveTask(svc);
    const bug = await createCard(svc, { type_id: "bug", title: "a bug", fields: { severity: "minor", steps: "1. run" } }, ctx);
    await patchCard(svc, bug.id, { version: bug.version, status: "todo" }, ctx);
    await waitFor(() => records(rec).length === 4, "four records");
    await Bun.sleep(200);
    const got = records(rec).map((r) => `${r.env.EXTRA}:${r.stdin.type}:${r.stdin.card_id}`).sort();
    expect(got).toEqual([
      `board:card_created:${bug.id}`, `board:status_changed:${bug.id}`,
      `type:status_changed:${task.id}`, `type:status_changed:${task.id}`,
    ].sort());
  });

  test("another process's change to a card it then deletes, seen after the delete, still reaches hooks filtered by type and board (before: none ran)", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    svc.defs = {
      ...svc.defs,
      extensions: [
        { id: "by-type", kind: "hook", on: ["status_changed"], filter: { type_id: "task" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "type" } },
        { id: "by-board", kind: "hook", on: ["status_changed"], filter: { board_id: "main" }, run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: "board" } },
      ],
    };
    // another process: its writes reach this server through the feed, which polls
    const other = await openTestService(ws, "serve");
    cleanup.push(() => other.close());
    const card = await createCard(other, { type_id: "task", title: "short-lived" }, ctx);
    const moved = await patchCard(other, card.id, { version: card.version, status: "todo" }, ctx);
    await deleteCard(other, card.id, moved.version, ctx); // within the same poll
    await waitFor(() => records(rec).length === 2, "both hooks' runs");
    expect(records(rec).map((r) => `${r.env.EXTRA}:${r.stdin.type}:${r.stdin.card_id}`).sort()).toEqual([`board:status_changed:${card.id}`, `type:status_changed:${card.id}`]);
  });

  test("a condition signal runs a hook with an empty CARDS_EVENT_ID", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    svc.defs = { ...svc.defs, extensions: [{ id: "lanes", kind: "hook", on: ["lane_drained"], filter: { board_id: "main" }, run: sh("record.sh"), env: { RECORD_DIR: rec } }] };
    await moveTask(svc); // todo fills, then drains
    await waitFor(() => records(rec).length >= 1, "a lane_drained record");
    const r = records(rec)[0]!;
    expect(r.env.CARDS_EVENT_TYPE).toBe("lane_drained");
    expect(r.env.CARDS_EVENT_ID).toBe("");
    expect(r.stdin.id).toBeUndefined();
    expect(r.stdin.board_id).toBe("main");
  });
});

describe("hook failures are logged, never fatal", () => {
  test("a non-zero exit is logged with the hook id, event id and type, and stderr; the write stands", async () => {
    const { svc, logs } = await setup([{ id: "grumpy", kind: "hook", on: ["card_created"], run: sh("fail.sh") }]);
    const card = await createCard(svc, { type_id: "task", title: "still here" }, ctx);
    await waitFor(() => logs.length === 1, "a log line");
    const ev = svc.store.listEvents({ cardId: card.id, limit: 10 })[0]!;
    expect(logs[0]).toBe(`hook grumpy: event ${ev.id} card_created: exited with code 3; stderr: "boom: cannot handle card_created"`);
    expect(svc.store.getCard(card.id)?.title).toBe("still here");
  });

  test("a hang is terminated after timeoutMs, and killed when it ignores SIGTERM", async () => {
    const { svc, logs } = await setup([
      { id: "stubborn", kind: "hook", on: ["card_created"], run: sh("hang.sh") },
      { id: "slow", kind: "hook", on: ["card_created"], run: sh("sleep.sh", "30") },
    ], { timeoutMs: 300, killGraceMs: 300 });
    const started = Date.now();
    await createCard(svc, { type_id: "task", title: "hang" }, ctx);
    expect(Date.now() - started).toBeLessThan(250); // the write did not wait
    await waitFor(() => logs.length === 2, "two log lines", 4000);
    const byId = Object.fromEntries(logs.map((l) => [l.split(":")[0], l]));
    expect(byId["hook slow"]).toMatch(/^hook slow: event \d+ card_created: timed out after 300 ms; terminated \(SIGTERM\)$/);
    expect(byId["hook stubborn"]).toMatch(/^hook stubborn: event \d+ card_created: timed out after 300 ms; killed \(SIGKILL\) after ignoring SIGTERM for 300 ms$/);
  });

  test("a missing executable is logged", async () => {
    const { svc, logs } = await setup([{ id: "ghost", kind: "hook", on: ["card_created"], run: ["/no/such/notifier", "--flag"] }]);
    const card = await createCard(svc, { type_id: "task", title: "ghost" }, ctx);
    await waitFor(() => logs.length === 1, "a log line");
    expect(logs[0]).toMatch(/^hook ghost: event \d+ card_created: could not start "\/no\/such\/notifier": .*ENOENT/);
    expect(svc.store.getCard(card.id)).not.toBeNull();
  });

  test("a missing cwd is logged as such, not as a missing executable", async () => {
    const { logs, svc } = await setup([{ id: "badcwd", kind: "hook", on: ["card_created"], cwd: "no-such-dir", run: sh("record.sh") }]);
    await createCard(svc, { type_id: "task", title: "x" }, ctx);
    await waitFor(() => logs.length === 1, "a log line");
    expect(logs[0]).toMatch(/^hook badcwd: event \d+ card_created: could not start: the working directory \S+\/no-such-dir does not exist \(check `cwd`\)$/);
  });

  test("concurrency is bounded per hook: the rest queue, past the queue cap they are not taken, and logged", async () => {
    const { ws, svc, logs } = await setup([], { maxConcurrent: 2, maxQueue: 2 });
    const rec = recordDir(ws);
    // each run waits at a gate the test opens: how many run at once does not depend on time
    const gate = join(ws, "gate-open");
    svc.defs = { ...svc.defs, extensions: [{ id: "busy", kind: "hook", on: ["card_created"], run: sh("gate.sh", gate), env: { RECORD_DIR: rec } }] };
    for (let i = 0; i < 6; i++) await createCard(svc, { type_id: "task", title: `c${i}` }, ctx);
    await waitFor(() => records(rec).length === 2, "two at once", 5000);
    await Bun.sleep(300); // the gate is shut: no third starts
    expect(records(rec).length).toBe(2);
    writeFileSync(gate, "");
    await waitFor(() => records(rec).length === 4, "the queued two", 5000);
    await Bun.sleep(300);
    expect(records(rec).length).toBe(4);
    const left = logs.filter((l) => l.includes("not taken"));
    expect(left.length).toBe(2);
    expect(left[0]).toMatch(/^hook busy: 1 run\(s\) not taken \(event \d+\): 2 running and 2 queued here; another server on this workspace may run them$/);
  });

  test("a hook with no room leaves the event to another server, which runs it (before: the writing server claimed every event and dropped what it had no room for)", async () => {
    const { svc, gate, here, there, other } = await gatedPair({ maxConcurrent: 1, maxQueue: 1 });
    const otherHooks = startHooks(other, { url: URL, log: () => {}, maxConcurrent: 1, maxQueue: 1 });
    cleanup.push(() => other.close(), () => otherHooks.stop());
    for (let i = 0; i < 4; i++) await createCard(svc, { type_id: "task", title: `c${i}` }, ctx);
    // each server runs one and queues one: the writer took two, the other server the rest
    await waitFor(() => records(here).length === 1 && records(there).length === 1, "one run on each server", 5000);
    writeFileSync(gate, "");
    await waitFor(() => records(here).length + records(there).length === 4, "all four runs", 5000);
    await Bun.sleep(400);
    expect([records(here).length, records(there).length]).toEqual([2, 2]);
  });
});

describe("lifecycle", () => {
  test("consumers() lists the declared `on` types; a hook without `on` consumes every type", async () => {
    const { svc, hooks } = await setup([{ id: "a", kind: "hook", on: ["status_timeout", "card_created"], run: ["true"] }]);
    expect([...hooks.consumers()].sort()).toEqual(["card_created", "status_timeout"]);
    await Bun.sleep(0);
    expect(svc.hasConsumer("status_timeout")).toBe(true); // declared to the service: timers arm
    expect(svc.hasConsumer("card_idle")).toBe(false);
    svc.defs = { ...svc.defs, extensions: [{ id: "all", kind: "hook", run: ["true"] }] };
    hooks.reconcile();
    await Bun.sleep(0);
    expect(hooks.consumers().size).toBe(26);
    expect(svc.hasConsumer("card_idle")).toBe(true);
  });

  test("reconcile after a reload: removed hooks stop running, new ones start", async () => {
    const { ws, svc, hooks } = await setup([]);
    const rec = recordDir(ws);
    const hook = (id: string) => ({ id, kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: id } });
    svc.defs = { ...svc.defs, extensions: [hook("old")] };
    hooks.reconcile();
    await createCard(svc, { type_id: "task", title: "one" }, ctx);
    await waitFor(() => records(rec).length === 1, "first");
    svc.defs = { ...svc.defs, extensions: [hook("new")] };
    hooks.reconcile();
    await createCard(svc, { type_id: "task", title: "two" }, ctx);
    await waitFor(() => records(rec).length === 2, "second");
    await Bun.sleep(200);
    expect(records(rec).map((r) => r.env.EXTRA).sort()).toEqual(["new", "old"]);
  });

  test("edited in another process: the write after the new set is matched against it (a hook added runs for it, a removed one does not)", async () => {
    const rec = (ws: string) => recordDir(ws);
    const hook = (id: string, dir: string) => ({ id, kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: dir, EXTRA: id } });
    const ws = workspaceWith([]);
    const dir = rec(ws);
    const write = (hooks: unknown[]) => writeFileSync(join(ws, "definitions/extensions.yaml"), JSON.stringify(hooks, null, 2));
    write([hook("first", dir)]);
    // the server: follows other processes' reloads, and its hooks follow its reloads (as cards serve)
    const svc = await openTestService(ws, "serve");
    const logs: string[] = [];
    const hooks = startHooks(svc, { url: URL, log: (m) => logs.push(m) });
    const unfollow = followReloads(svc, (m) => logs.push(m));
    const offReload = onReload(svc, () => hooks.reconcile());
    cleanup.push(() => svc.close(), () => hooks.stop(), unfollow, offReload);
    // a one-shot CLI call in another process: it opens the edited files (announcing them), then writes
    const oneShot = async (title: string) => {
      const cli = await openTestService(ws, "embedded");
      try {
        return (await createCard(cli, { type_id: "task", title }, ctx)).id;
      } finally {
        cli.close();
      }
    };
    const seen = () => records(dir).map((r) => `${r.env.EXTRA}:${r.stdin.card_id}`).sort();
    const a = await oneShot("a");
    await waitFor(() => seen().length === 1, "first runs for a");
    write([hook("first", dir), hook("second", dir)]);
    const b = await oneShot("b");
    await waitFor(() => seen().length === 3, "first and second run for b");
    write([hook("second", dir)]);
    const c = await oneShot("c");
    await waitFor(() => seen().length === 4, "second runs for c");
    await Bun.sleep(300);
    expect(seen()).toEqual([`first:${a}`, `first:${b}`, `second:${b}`, `second:${c}`].sort());
  });

  describe("writes held after another process announced a set", () => {
    /** A server on a workspace with hook "first"; `announce()` has a one-shot process open an edited set (hook "second" added), then puts the file back. */
    async function announcedThenReverted(wireFollowed: boolean) {
      const ws = workspaceWith([]);
      const dir = recordDir(ws);
      const hook = (id: string) => ({ id, kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: dir, EXTRA: id } });
      const file = join(ws, "definitions/extensions.yaml");
      writeFileSync(file, JSON.stringify([hook("first")]));
      const svc = await openTestService(ws, "serve");
      const logs: string[] = [];
      const hooks = startHooks(svc, { url: URL, log: (m) => logs.push(m) });
      const unfollow = followReloads(svc, (m) => logs.push(m), (m) => logs.push(m), wireFollowed ? (fp) => hooks.followed(fp) : undefined);
      const offReload = onReload(svc, () => hooks.reconcile());
      cleanup.push(() => svc.close(), () => hooks.stop(), unfollow, offReload);
      writeFileSync(file, JSON.stringify([hook("first"), hook("second")]));
      (await openTestService(ws, "embedded")).close(); // opens the edited files: announces them
      writeFileSync(file, JSON.stringify([hook("first")])); // an editor's undo, a git checkout
      await Bun.sleep(400); // the server's feed (200 ms) brings the announcement; its reload finds the files unchanged
      return { svc, hooks, logs, seen: () => records(dir).map((r) => r.env.EXTRA) };
    }

    test("the server finds the announced set gone from disk: its writes' hooks run at once, not after the 3 s hold", async () => {
      const { svc, logs, seen } = await announcedThenReverted(true);
      await createCard(svc, { type_id: "task", title: "after the revert" }, ctx);
      await waitFor(() => seen().length === 1, "the hook for the write", 1_500);
      expect(seen()).toEqual(["first"]);
      expect(logs.filter((l) => l.includes("were not loaded within"))).toEqual([]);
    });

    test("a second set announced while the first is loaded: the writes after it wait for the second (before: matched against the first)", async () => {
      const { ws, svc, hooks, logs } = await setup([]);
      const rec = recordDir(ws);
      const hook = (id: string) => ({ id, kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: id } });
      const announce = (fingerprint: string) => svc.bus.publish({ id: undefined, type: "definition_reloaded", at: new Date().toISOString(), actor: "cards", card_id: null, diff: { fingerprint } } as never);
      const load = (fingerprint: string, id: string) => {
        svc.defs = { ...svc.defs, fingerprint, extensions: [hook(id)] };
        hooks.reconcile();
      };
      announce("set-a");
      announce("set-b"); // another edit, announced before this server loaded the first
      const card = await createCard(svc, { type_id: "task", title: "written under set b" }, ctx);
      load("set-a", "a");
      hooks.followed("set-a"); // as followReloads does after every reload it follows
      await Bun.sleep(300);
      expect(records(rec)).toEqual([]); // still held: set b is announced and not loaded
      expect(hooks.busy()).toBeGreaterThan(0);
      load("set-b", "b");
      await waitFor(() => records(rec).length === 1, "the hook of set b", 2_000);
      await Bun.sleep(200);
      expect(records(rec).map((r) => `${r.env.EXTRA}:${r.stdin.card_id}`)).toEqual([`b:${card.id}`]);
      expect(logs.filter((l) => l.includes("were not loaded within"))).toEqual([]);
    });

    test("a newer set announced between the swap and the reconcile (the poll after the swap brings it) holds the writes after it", async () => {
      const { ws, svc, hooks, logs } = await setup([]);
      const rec = recordDir(ws);
      const hook = (id: string) => ({ id, kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: rec, EXTRA: id } });
      const announce = (fingerprint: string) => svc.bus.publish({ id: undefined, type: "definition_reloaded", at: new Date().toISOString(), actor: "cards", card_id: null, diff: { fingerprint } } as never);
      announce("set-a");
      svc.defs = { ...svc.defs, fingerprint: "set-a", extensions: [hook("a")] }; // the swap
      announce("set-b"); // published by the poll that follows the swap, before reconcile runs
      const card = await createCard(svc, { type_id: "task", title: "written under set b" }, ctx);
      hooks.reconcile();
      hooks.followed("set-a");
      await Bun.sleep(300);
      expect(records(rec)).toEqual([]); // before: a:<card>, set a's hook for a write made under set b
      svc.defs = { ...svc.defs, fingerprint: "set-b", extensions: [hook("b")] };
      hooks.reconcile();
      await waitFor(() => records(rec).length === 1, "the hook of set b", 2_000);
      await Bun.sleep(200);
      expect(records(rec).map((r) => `${r.env.EXTRA}:${r.stdin.card_id}`)).toEqual([`b:${card.id}`]);
      expect(logs.filter((l) => l.includes("were not loaded within"))).toEqual([]);
    });

    test("a hold given up after 3 s does not start again for the same announcement", async () => {
      const { ws, svc, hooks, logs } = await setup([]);
      const rec = recordDir(ws);
      svc.defs = { ...svc.defs, extensions: [{ id: "now", kind: "hook", on: ["card_created"], run: sh("record.sh"), env: { RECORD_DIR: rec } }] };
      hooks.reconcile();
      await Bun.sleep(0);
      svc.bus.publish({ id: undefined, type: "definition_reloaded", at: new Date().toISOString(), actor: "cards", card_id: null, diff: { fingerprint: "never-loaded" } } as never);
      await createCard(svc, { type_id: "task", title: "held until the hold is given up" }, ctx);
      await waitFor(() => records(rec).length === 1, "the hook after the hold", 5_000);
      await createCard(svc, { type_id: "task", title: "after it" }, ctx);
      await waitFor(() => records(rec).length === 2, "the next write's hook at once", 1_000);
      expect(logs.filter((l) => l.includes("were not loaded within"))).toHaveLength(1);
    });

    test("a shutdown while writes are held runs their hooks (before: dropped without a word)", async () => {
      const { svc, hooks, seen } = await announcedThenReverted(false); // held until the 3 s timer
      await createCard(svc, { type_id: "task", title: "answered, then the server stops" }, ctx);
      expect(hooks.busy()).toBeGreaterThan(0); // held
      await hooks.quiesce();
      expect(seen()).toEqual(["first"]);
    });
  });

  test("a hook a reload removes: its queued runs are dropped and logged, the running one finishes (before: all ran, with the old definition)", async () => {
    const { ws, svc, hooks, logs } = await setup([], { maxConcurrent: 1 });
    const gate = join(ws, "gate-open");
    const rec = recordDir(ws);
    svc.defs = { ...svc.defs, extensions: [{ id: "gone", kind: "hook", on: ["card_created"], run: sh("gate.sh", gate), env: { RECORD_DIR: rec } }] };
    for (let i = 0; i < 3; i++) await createCard(svc, { type_id: "task", title: `c${i}` }, ctx);
    await waitFor(() => records(rec).length === 1, "one running");
    await Bun.sleep(300); // the other two claimed and queued
    expect(hooks.busy()).toBe(3);
    svc.defs = { ...svc.defs, extensions: [] };
    hooks.reconcile();
    expect(logs.some((l) => /^hook gone: removed by a reload, 2 queued run\(s\) dropped \(events \d+ to \d+\)$/.test(l))).toBe(true);
    writeFileSync(gate, "");
    await waitFor(() => hooks.busy() === 0, "the running one done");
    await Bun.sleep(200);
    expect(records(rec).length).toBe(1);
  });

  test("two servers on one workspace run each hook once per event", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    const exts = [{ id: "once", kind: "hook" as const, on: ["card_created" as const], run: sh("record.sh"), env: { RECORD_DIR: rec } }];
    svc.defs = { ...svc.defs, extensions: exts };
    const other = await openTestService(ws, "serve");
    other.defs = { ...other.defs, extensions: exts };
    const otherHooks = startHooks(other, { url: URL, log: () => {} });
    cleanup.push(() => other.close(), () => otherHooks.stop());
    for (let i = 0; i < 5; i++) await createCard(i % 2 ? svc : other, { type_id: "task", title: `c${i}` }, ctx);
    await waitFor(() => records(rec).length >= 5, "five records");
    await Bun.sleep(600); // the other process's feed polls every 200 ms
    expect(records(rec).length).toBe(5);
  });

  test("two servers on one workspace run a hook once per condition signal (signals have no id)", async () => {
    const { ws, svc } = await setup([]);
    const rec = recordDir(ws);
    const exts = [{ id: "drained", kind: "hook" as const, on: ["lane_drained" as const, "lane_refilled" as const], filter: { board_id: "main" }, run: sh("record.sh"), env: { RECORD_DIR: rec } }];
    svc.defs = { ...svc.defs, extensions: exts };
    const other = await openTestService(ws, "serve");
    other.defs = { ...other.defs, extensions: exts };
    const otherHooks = startHooks(other, { url: URL, log: () => {} });
    cleanup.push(() => other.close(), () => otherHooks.stop());
    await moveTask(svc); // todo refills, then drains: two signals written by svc
    await waitFor(() => records(rec).length >= 2, "two records");
    await Bun.sleep(700); // the other process's feed polls every 200 ms and publishes both again
    expect(records(rec).map((r) => r.env.CARDS_EVENT_TYPE).sort()).toEqual(["lane_drained", "lane_refilled"]);
  });

  test("quiesce(): no new event is taken (another server claims it); the runs taken finish, then it resolves", async () => {
    const { svc, hooks, gate, here, there, other } = await gatedPair({ maxConcurrent: 1 });
    await createCard(svc, { type_id: "task", title: "a" }, ctx);
    await createCard(svc, { type_id: "task", title: "b" }, ctx);
    await waitFor(() => records(here).length === 1, "the first run", 5000);
    let quiet = false;
    const done = hooks.quiesce().then(() => { quiet = true; });
    expect(hooks.busy()).toBe(2); // one running, one queued
    // written after the quiesce: left to the other server
    const otherHooks = startHooks(other, { url: URL, log: () => {} });
    cleanup.push(() => other.close(), () => otherHooks.stop());
    await createCard(svc, { type_id: "task", title: "c" }, ctx);
    await waitFor(() => records(there).length === 1, "the other server's run", 5000);
    await Bun.sleep(100);
    expect(quiet).toBe(false);
    writeFileSync(gate, "");
    await done;
    expect([records(here).length, records(there).length, hooks.busy()]).toEqual([2, 1, 0]);
  });

  test("stop() terminates running hooks and drops the queue", async () => {
    const { svc, hooks, logs } = await setup([{ id: "slow", kind: "hook", on: ["card_created"], run: sh("sleep.sh", "30") }], { maxConcurrent: 1, killGraceMs: 300 });
    await createCard(svc, { type_id: "task", title: "a" }, ctx);
    await createCard(svc, { type_id: "task", title: "b" }, ctx);
    await Bun.sleep(100);
    const t = Date.now();
    await hooks.stop();
    expect(Date.now() - t).toBeLessThan(1000);
    await Bun.sleep(50);
    expect(logs.some((l) => /^hooks: shutting down, 1 queued hook run\(s\) dropped \(event \d+\)$/.test(l))).toBe(true);
    expect(logs.some((l) => /^hook slow: event \d+ card_created: terminated at shutdown$/.test(l))).toBe(true);
  });
});

test("a failure's log line carries the last 2 KiB of stderr, as docs/extensions.md says (it cut at 300 characters)", () => {
  const note = stderrNote("x".repeat(5000) + "the end");
  expect(note).toBe(`; stderr: ${JSON.stringify(`...${("x".repeat(5000) + "the end").slice(-2048)}`)}`);
  expect(stderrNote("short")).toBe('; stderr: "short"');
});
