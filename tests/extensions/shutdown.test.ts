/**
 * A server's shutdown and its hooks: the runs taken before the signal finish within the
 * grace (before, they were killed or dropped at once); a second signal stops them now.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { recordDir, waitFor, workspaceWith } from "./util.ts";

const servers: Server[] = [];
afterAll(async () => { await Promise.all(servers.map((s) => s.stop())); }, 20_000);

/** a hook that marks its start, runs for `seconds`, then marks its end, per event */
const timedHook = (seconds: number) => ({
  id: "timed", kind: "hook" as const, on: ["card_created" as const],
  run: ["/bin/sh", "-c", `: > "$RECORD_DIR/start-$CARDS_EVENT_ID"; sleep ${seconds}; : > "$RECORD_DIR/end-$CARDS_EVENT_ID"`],
});

async function startWith(seconds: number) {
  assertBinary();
  const ws = workspaceWith([timedHook(seconds)]);
  const rec = recordDir(ws);
  const srv = await serve(ws, { RECORD_DIR: rec });
  servers.push(srv);
  let stderr = "";
  srv.proc.stderr!.on("data", (c: string) => { stderr += c; });
  const res = await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "hooked" }), headers: { "content-type": "application/json" } });
  expect(res.status).toBe(201);
  const id = (await (await fetch(`${srv.url}/v1/events?types=card_created`)).json()).items[0].id as string;
  await waitFor(() => existsSync(join(rec, `start-${id}`)), "the hook's start", 10_000);
  const exited = new Promise<number | null>((r) => srv.proc.once("exit", (code) => r(code)));
  return { srv, rec, id, exited, stderr: () => stderr };
}

test("SIGTERM lets a hook run taken before it finish, then exits 0", async () => {
  const { srv, rec, id, exited, stderr } = await startWith(1);
  srv.proc.kill("SIGTERM");
  expect(await exited).toBe(0);
  // before: the run was terminated at once and its end never came
  expect(existsSync(join(rec, `end-${id}`))).toBe(true);
  expect(stderr()).toContain("waiting up to 10 s for 1 hook run(s)");
}, 20_000);

test("a second signal while waiting stops the hook runs now", async () => {
  const { srv, rec, id, exited, stderr } = await startWith(30);
  const t = Date.now();
  srv.proc.kill("SIGTERM");
  await waitFor(() => stderr().includes("signal again"), "the waiting note", 5000);
  srv.proc.kill("SIGINT");
  expect(await exited).toBe(0);
  expect(Date.now() - t).toBeLessThan(8000); // not the 10 s grace, nor the hook's 30 s
  expect(existsSync(join(rec, `end-${id}`))).toBe(false);
  expect(stderr()).toMatch(/hook timed: event \d+ card_created: terminated at shutdown/);
}, 20_000);

test("the server's log to a file or pipe is one line per entry (consola's badges wrapped warnings in blank lines)", async () => {
  assertBinary();
  const ws = workspaceWith([{ id: "failing", kind: "hook", on: ["card_created"], run: ["/bin/sh", "-c", "exit 3"] }]);
  const srv = await serve(ws);
  servers.push(srv);
  let stderr = "";
  srv.proc.stderr!.on("data", (c: string) => { stderr += c; });
  await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "x" }), headers: { "content-type": "application/json" } });
  await waitFor(() => stderr.includes("hook failing"), "the hook's failure logged", 5000);
  const exited = new Promise((r) => srv.proc.once("exit", r));
  srv.proc.kill("SIGTERM");
  await exited;
  expect(stderr).not.toMatch(/\n\n/);
  const lines = stderr.split("\n");
  expect(lines.some((l) => /^\[warn\] hook failing: event \d+ card_created: exit/.test(l))).toBe(true);
  expect(lines).toContain("[info] SIGTERM: shutting down");
}, 20_000);
