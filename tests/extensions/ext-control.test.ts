/**
 * `cards ext start|stop|restart ID` through the compiled binary: a service declared with
 * autostart: false can be started by hand under the running server, a service stopped by
 * hand stays stopped (its restart_policy does not bring it back), and a restart gives it
 * a new process.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertBinary, run, serve, type Server } from "../helpers/binary.ts";
import { stateFile, writeSnapshot } from "../../src/extensions/state.ts";
import { alive, recordDir, records, sh, waitFor, workspaceWith } from "./util.ts";

let ws: string;
let srv: Server | undefined;
beforeAll(() => {
  assertBinary();
  ws = workspaceWith([
    { id: "manual", kind: "service", autostart: false, run: sh("sleep.sh", "60") },
    { id: "web", kind: "service", restart_policy: "always", run: sh("sleep.sh", "60") },
    { id: "echo", kind: "run", run: sh("exit-with.sh", "0") },
    { id: "missing", kind: "service", autostart: false, restart_policy: "always", run: ["/nonexistent/svc"] },
  ]);
});
afterAll(async () => { await srv?.stop(); }, 20_000);

const list = () => Object.fromEntries(run(["ext", "list"], { cwd: ws }).json.extensions.map((e: any) => [e.id, e]));

test("ext start, stop and restart a service under the running server", async () => {
  // no server: nothing supervises services, and the CLI says so instead of doing nothing
  const none = run(["ext", "start", "manual"], { cwd: ws });
  expect([none.code, none.error.error, none.error.message]).toEqual([7, "unavailable", "no `cards serve` runs on this workspace: services run under it"]);
  const unknown = run(["ext", "start", "nope"], { cwd: ws });
  expect([unknown.code, unknown.error.error, unknown.error.valid_options]).toEqual([3, "not_found", ["manual", "web", "missing"]]);
  const notService = run(["ext", "stop", "echo"], { cwd: ws });
  expect([notService.code, notService.error.error, notService.error.hint]).toEqual([2, "bad_request", "run it with `cards ext run echo`"]);

  // a live supervisor without a request folder is an older server: it is named, not waited for 15 s
  const legacy = stateFile(ws, process.pid);
  writeSnapshot(legacy, { pid: process.pid, updated_at: new Date().toISOString(), services: [] });
  const older = run(["ext", "start", "manual"], { cwd: ws });
  expect([older.code, older.error.message]).toEqual([7, `the \`cards serve\` on this workspace (pid ${process.pid}) is an older version that takes no requests`]);
  rmSync(legacy);
  // it changes what runs here: never through a URL that names another workspace
  expect(run(["ext", "stop", "web"], { cwd: ws, env: { CARDS_URL: "http://127.0.0.1:9" } }).error.error).toBe("usage");

  srv = await serve(ws);
  await waitFor(() => list().web?.state === "running", "web to run", 10_000);
  expect(list().manual.state).toBe("stopped"); // autostart: false

  // before: nothing could start it
  const started = run(["ext", "start", "manual"], { cwd: ws });
  expect([started.code, started.json.id, started.json.state]).toEqual([0, "manual", "running"]);
  const first = started.json.pid as number;
  expect(alive(first)).toBe(true);

  const web = list().web.pid as number;
  const stopped = run(["ext", "stop", "web"], { cwd: ws });
  expect([stopped.code, stopped.json.state]).toEqual([0, "stopped"]);
  expect(alive(web)).toBe(false);
  await Bun.sleep(1500); // restart_policy always would have brought it back by now
  expect(list().web.state).toBe("stopped");

  const restarted = run(["ext", "restart", "manual"], { cwd: ws });
  expect([restarted.code, restarted.json.state]).toEqual([0, "running"]);
  expect(restarted.json.pid).not.toBe(first);
  expect(alive(first)).toBe(false);

  const again = run(["ext", "start", "web"], { cwd: ws });
  expect([again.code, again.json.state]).toEqual([0, "running"]);
  // starting what runs changes nothing
  expect(run(["ext", "start", "web"], { cwd: ws }).json.pid).toBe(again.json.pid);

  // one that cannot be spawned waits in backoff: it does not run, so exit 7 (before: 0 with "state": "backoff")
  for (const action of ["start", "restart"]) {
    const failed = run(["ext", action, "missing"], { cwd: ws });
    expect([action, failed.code, failed.error.error]).toEqual([action, 7, "unavailable"]);
    expect(failed.error.message).toContain("service missing does not run after " + action + ": backoff (last exit: ");
  }
}, 60_000);

test("edited while the server runs: `ext start` starts a service declared since (no service at its start), and `cards check` makes a new hook run for the next write", async () => {
  const late = workspaceWith([{ id: "echo", kind: "run", run: sh("exit-with.sh", "0") }]);
  const rec = recordDir(late);
  const server = await serve(late);
  try {
    const declare = (exts: unknown[]) => writeFileSync(join(late, "definitions/extensions.yaml"), JSON.stringify(exts, null, 2));
    declare([
      { id: "echo", kind: "run", run: sh("exit-with.sh", "0") },
      { id: "later", kind: "service", autostart: false, run: sh("sleep.sh", "60") },
    ]);
    // before: "no `cards serve` runs on this workspace" (a server with no service wrote no state), then "not known to the server"
    const started = run(["ext", "start", "later"], { cwd: late });
    expect([started.code, started.json?.id, started.json?.state]).toEqual([0, "later", "running"]);
    expect(alive(started.json.pid)).toBe(true);

    declare([{ id: "rec", kind: "hook", on: ["card_created"], run: sh("record.sh"), env: { RECORD_DIR: rec } }]);
    const followed = () => server.log().split("definitions reloaded, as another process announced").length - 1;
    await waitFor(() => followed() === 1, "the log line for the set `ext start` announced", 3_000);
    expect(run(["check"], { cwd: late }).code).toBe(0);
    // the server follows the set check announced (within a second, docs/cli.md), and says so
    await waitFor(() => followed() === 2, "the server to follow", 3_000);
    // a write through the server (it opens no files): before, the hook never ran until some other one-shot call
    const made = await fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ type_id: "task", title: "after check" }) });
    const card = await made.json() as { id: string };
    await waitFor(() => records(rec).some((r) => r.stdin.card_id === card.id), "the new hook to run", 5_000);
  } finally {
    await server.stop();
  }
}, 40_000);
