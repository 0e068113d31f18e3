/**
 * A server killed with SIGKILL cannot stop its services (they run in process groups of
 * their own). The next server on the workspace stops what it left running before it
 * starts services, so no service runs twice; a live server's processes are left alone.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
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

test.skipIf(process.platform !== "linux")("a running server stops what a server beside it left when it was killed, without waiting for a new server to start", async () => {
  assertBinary();
  const ws = workspaceWith([{ id: "sleeper", kind: "service", run: sh("sleep.sh", "60") }]);
  const rec = recordDir(ws);
  const env = { RECORD_DIR: rec };
  const keeper = await serve(ws, env);
  servers.push(keeper);
  await waitFor(() => runs(rec).length === 1, "the keeper's run", 10_000);
  const [keepers] = runs(rec); // the only one yet (a directory lists in no set order)
  const doomed = await serve(ws, env);
  servers.push(doomed);
  await waitFor(() => runs(rec).length === 2, "the second server's run", 10_000);
  const orphan = runs(rec).find((p) => p !== keepers)!;
  doomed.proc.kill("SIGKILL");
  await doomed.stop();
  // before: it ran beside the keeper's copy until some server started on the workspace
  await waitFor(() => !alive(orphan), "the orphan stopped by the keeper's sweep", 20_000);
  expect(alive(keepers!)).toBe(true);
  await keeper.stop();
}, 40_000);

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

/** The start time (clock ticks since boot) /proc gives a pid: what a mark records. */
const startOf = (pid: number): string => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
};

test.skipIf(process.platform !== "linux")("a server that is a zombie (exited, not yet reaped) is gone: its processes are orphans", async () => {
  const ws = realpathSync(makeWorkspace());
  const space = /^\d+-\d+-([^:]+):/.exec(supervisorToken(ws)!)![1]!;
  // `sleep 0.1` is left a zombie: its parent became `sleep 30`, which never reaps it
  const parent = spawn(["sh", "-c", "sleep 0.1 & echo $!; exec sleep 30"], { stdout: "pipe" });
  const reader = parent.stdout.getReader();
  const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
  const id = `${zombie}-${startOf(zombie)}-${space}`;
  await waitFor(() => /\) Z /.test(readFileSync(`/proc/${zombie}/stat`, "utf8")), "the zombie", 3_000);
  mkdirSync(join(ws, ".cards", "supervisors"), { recursive: true });
  writeFileSync(join(ws, ".cards", "supervisors", id), "");
  const orphan = spawn(["sleep", "30"], { env: { ...process.env, CARDS_SUPERVISOR: `${id}:${ws}` } });
  try {
    await Bun.sleep(100);
    expect(findOrphans(ws)).toEqual([orphan.pid]); // before: a zombie's pid and start time matched, so it looked alive
  } finally {
    orphan.kill();
    parent.kill();
  }
});

test.skipIf(process.platform !== "linux")("a process that inherited a killed server's token never stops itself or its ancestors", async () => {
  const ws = realpathSync(makeWorkspace());
  const space = /^\d+-\d+-([^:]+):/.exec(supervisorToken(ws)!)![1]!;
  const dead = `999999997-1-${space}`;
  mkdirSync(join(ws, ".cards", "supervisors"), { recursive: true });
  writeFileSync(join(ws, ".cards", "supervisors", dead), "");
  const env = { ...process.env, CARDS_SUPERVISOR: `${dead}:${ws}` };
  // a sibling left by the killed server, and a launcher (sh) running a process that scans:
  // both sh and the scanner carry the token, as a server started by a killed server's hook would
  const sibling = spawn(["sleep", "30"], { env });
  const script = join(ws, "scan.ts");
  writeFileSync(script, `import { findOrphans } from ${JSON.stringify(join(import.meta.dir, "../../src/extensions/orphans.ts"))};\nconsole.log(JSON.stringify({ me: process.pid, parent: process.ppid, found: findOrphans(${JSON.stringify(ws)}) }));\n`);
  try {
    await Bun.sleep(100);
    // two launchers deep (`; true` keeps each sh from exec'ing what it runs)
    const p = spawn(["sh", "-c", `sh -c '${JSON.stringify(process.execPath)} ${JSON.stringify(script)}; true'; true`], { env, stdout: "pipe" });
    const out = JSON.parse(await new Response(p.stdout).text()) as { me: number; parent: number; found: number[] };
    expect(out.found).toContain(sibling.pid);
    expect(out.found).not.toContain(out.me);
    expect(out.found).not.toContain(out.parent); // the sh that launched it
    expect(out.found).not.toContain(p.pid); // and the sh that launched that one
    expect(out.found).toEqual([sibling.pid]);
  } finally {
    sibling.kill();
  }
});

/** The pid space part of this process's marks (`<pid>-<start>-<space>`). */
const spaceOf = (ws: string): string => /^\d+-\d+-([^:]+):/.exec(supervisorToken(ws)!)![1]!;
/** Leaves the mark of a server that is gone without unmarking. */
const mark = (ws: string, id: string): void => {
  mkdirSync(join(ws, ".cards", "supervisors"), { recursive: true });
  writeFileSync(join(ws, ".cards", "supervisors", id), "");
};
/** Waits until `pid` runs with `token` in its environment (after its exec). */
const carries = (pid: number, token: string) =>
  waitFor(() => { try { return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`CARDS_SUPERVISOR=${token}`); } catch { return false; } }, `pid ${pid}'s environment`, 5_000);

test.skipIf(process.platform !== "linux")("a mark whose pid now belongs to another process (another start time) names a killed server", async () => {
  const ws = realpathSync(makeWorkspace());
  const other = spawn(["sleep", "30"]); // took the killed server's pid since
  const id = `${other.pid}-${Number(startOf(other.pid)) + 1}-${spaceOf(ws)}`;
  mark(ws, id);
  const orphan = spawn(["sleep", "30"], { env: { ...process.env, CARDS_SUPERVISOR: `${id}:${ws}` } });
  try {
    await carries(orphan.pid, `${id}:${ws}`);
    expect(findOrphans(ws)).toEqual([orphan.pid]); // before: the pid was alive, so the server looked alive
  } finally {
    other.kill();
    orphan.kill();
  }
});

test.skipIf(process.platform !== "linux")("a token that is the first variable of the environment is found (an extension that re-execs with env -i)", async () => {
  const ws = realpathSync(makeWorkspace());
  const id = `999999994-1-${spaceOf(ws)}`;
  mark(ws, id);
  const orphan = spawn(["/usr/bin/env", "-i", `CARDS_SUPERVISOR=${id}:${ws}`, "PATH=/usr/bin:/bin", "sleep", "30"]);
  try {
    await carries(orphan.pid, `${id}:${ws}`);
    expect(readFileSync(`/proc/${orphan.pid}/environ`, "latin1")).toStartWith("CARDS_SUPERVISOR=");
    expect(findOrphans(ws)).toEqual([orphan.pid]);
  } finally {
    orphan.kill();
  }
});

test.skipIf(process.platform !== "linux")("the mark of a killed server that left nothing running is dropped too", async () => {
  const ws = realpathSync(makeWorkspace());
  mark(ws, `999999996-1-${spaceOf(ws)}`);
  const logs: string[] = [];
  await stopOrphans(ws, (m) => logs.push(m), 100);
  expect(readdirSync(join(ws, ".cards", "supervisors"))).toEqual([]);
  expect(logs).toEqual([]);
});

test.skipIf(process.platform !== "linux")("an orphan gets the grace to end on SIGTERM (its cleanup runs); one that ignores SIGTERM is killed after it", async () => {
  const ws = realpathSync(makeWorkspace());
  const id = `999999995-1-${spaceOf(ws)}`;
  mark(ws, id);
  const env = { ...process.env, CARDS_SUPERVISOR: `${id}:${ws}` };
  const cleaned = join(ws, "cleaned");
  // each says it is ready once its trap is set (a SIGTERM before would end it at once)
  const polite = spawn(["sh", "-c", `trap 'sleep 0.3; : > "$0/cleaned"; exit 0' TERM; : > "$0/polite-ready"; while :; do sleep 0.1; done`, ws], { env, stderr: "ignore" });
  const stubborn = spawn(["sh", "-c", `trap '' TERM; : > "$0/stubborn-ready"; while :; do sleep 0.1; done`, ws], { env, stderr: "ignore" });
  try {
    await waitFor(() => existsSync(join(ws, "polite-ready")) && existsSync(join(ws, "stubborn-ready")), "both traps set", 5_000);
    const logs: string[] = [];
    await stopOrphans(ws, (m) => logs.push(m), 1_500);
    expect(existsSync(cleaned)).toBe(true); // before: SIGKILL right after SIGTERM, the cleanup never ran
    expect(await polite.exited).toBe(0);
    // the stubborn one was SIGKILLed (it is reaped shortly after)
    await Promise.race([stubborn.exited, Bun.sleep(3_000)]);
    expect(stubborn.signalCode).toBe("SIGKILL");
    expect(logs[1]).toStartWith("killed (SIGKILL) ");
    expect(logs[1]).toContain(String(stubborn.pid));
  } finally {
    polite.kill("SIGKILL");
    stubborn.kill("SIGKILL");
  }
}, 15_000);
