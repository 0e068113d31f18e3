/**
 * A server killed with SIGKILL cannot stop its services (they run in process groups of
 * their own). The next server on the workspace stops what it left running before it
 * starts services, so no service runs twice; a live server's processes are left alone.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { spawn } from "bun";
import { join } from "node:path";
import { assertBinary, serve, type Server } from "../helpers/binary.ts";
import { recordDir, sh, waitFor, workspaceWith } from "./util.ts";
import { findOrphans, stopOrphans, supervisorToken } from "../../src/extensions/orphans.ts";
import { makeWorkspace } from "../helpers/workspace.ts";

const servers: Server[] = [];
afterAll(async () => { await Promise.all(servers.map((s) => s.stop())); }, 20_000); // hang.sh takes the 5 s grace

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};
/** pids of the service runs recorded so far (tests/fixtures/sleep.sh writes run-<pid>.txt) */
const runs = (dir: string): number[] => readdirSync(dir).map((n) => Number(/^run-(\d+)\.txt$/.exec(n)?.[1])).filter(Boolean);

test.skipIf(process.platform !== "linux")("services a SIGKILLed server left running are stopped by the next server before it starts its own", async () => {
  assertBinary();
  const ws = workspaceWith([
    { id: "sleeper", kind: "service", run: sh("sleep.sh", "60") },
    { id: "stubborn", kind: "service", run: sh("hang.sh") },
  ]);
  const rec = recordDir(ws);
  const env = { RECORD_DIR: rec };
  const first = await serve(ws, env);
  servers.push(first);
  await waitFor(() => runs(rec).length === 1, "the first run", 10_000);
  const [old] = runs(rec);
  first.proc.kill("SIGKILL");
  await first.stop();
  await Bun.sleep(200);
  // before: orphaned for good, and the next server started a second copy beside it
  expect(alive(old!)).toBe(true);
  expect(findOrphans(ws).length).toBeGreaterThanOrEqual(2); // both services (and what they started)

  const second = await serve(ws, env);
  servers.push(second);
  await waitFor(() => !alive(old!) && runs(rec).length === 2, "the orphan stopped and one new run", 15_000);
  // hang.sh ignored SIGTERM: killed after the grace (the `sleep 1` it was running ends within a second)
  await waitFor(() => findOrphans(ws).length === 0, "no orphan left", 3_000);
  const fresh = runs(rec).find((p) => p !== old)!;
  expect(alive(fresh)).toBe(true);

  // a server that is alive is no one's orphan: a third server on the workspace leaves its services alone
  const third = await serve(ws, env);
  servers.push(third);
  await waitFor(() => runs(rec).length === 3, "the third server's run", 10_000);
  await Bun.sleep(300);
  expect(alive(fresh)).toBe(true);
  // servers that stop cleanly unmark themselves: what they leave on purpose is no orphan
  await Promise.all([second.stop(), third.stop()]);
  expect(readdirSync(join(ws, ".cards", "supervisors"))).toEqual([]);
}, 60_000);

test.skipIf(process.platform !== "linux")("only marks of this boot and pid namespace are judged; a root reached through a symlink is the same workspace", async () => {
  const ws = realpathSync(makeWorkspace());
  const link = `${ws}-link`;
  symlinkSync(ws, link);
  const own = supervisorToken(ws)!;
  const space = /^\d+-\d+-([^:]+):/.exec(own)![1]!;
  const dead = `999999999-1-${space}`; // a server of this pid space that is gone
  const elsewhere = "999999998-1-another-boot.4026531836"; // a server in a container, or before a reboot: not judged here
  mkdirSync(join(ws, ".cards", "supervisors"), { recursive: true });
  for (const id of [dead, elsewhere]) writeFileSync(join(ws, ".cards", "supervisors", id), "");
  const child = (id: string) => spawn(["sleep", "30"], { env: { ...process.env, CARDS_SUPERVISOR: `${id}:${ws}` } });
  const orphan = child(dead);
  const foreign = child(elsewhere);
  try {
    await Bun.sleep(100);
    // the token names the real path; the scan is asked through the symlink
    expect(findOrphans(link)).toEqual([orphan.pid]);
    const logs: string[] = [];
    await stopOrphans(link, (m) => logs.push(m), 500);
    await orphan.exited;
    expect(alive(foreign.pid)).toBe(true);
    expect(readdirSync(join(ws, ".cards", "supervisors"))).toEqual([elsewhere]);
    expect(logs[0]).toStartWith("stopping 1 extension process(es)");
  } finally {
    orphan.kill();
    foreign.kill();
  }
});
