/** Service extensions with real child processes: restart policies, backoff, reconcile, shutdown. */
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionDef } from "../../src/domain/types.ts";
import { OUTPUT_LINES_PER_SECOND, startServices, type ServiceOptions, type Services } from "../../src/extensions/services.ts";
import { liveSnapshots, readSnapshot, stateFile, writeSnapshot } from "../../src/extensions/state.ts";
import { selfId, stillRuns } from "../../src/extensions/orphans.ts";
import { alive, sh, waitFor } from "./util.ts";

let running: Services[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.stop()));
  running = [];
});

function supervise(extensions: ExtensionDef[], opts: Partial<ServiceOptions> = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "cards-svc-")));
  const host = { root, defs: { extensions } };
  const logs: string[] = [];
  const lines: string[] = [];
  const services = startServices(host, {
    url: "http://127.0.0.1:4777",
    log: (m) => logs.push(m),
    output: (id, stream, line) => lines.push(`${id} ${stream}: ${line}`),
    backoff: { initialMs: 100, maxMs: 400, resetAfterMs: 60_000 },
    stopGraceMs: 300,
    ...opts,
  });
  running.push(services);
  const one = (id: string) => services.list().find((s) => s.id === id);
  return { root, host, logs, lines, services, one };
}

const svc = (id: string, run: string[], extra: Partial<ExtensionDef> = {}): ExtensionDef => ({ id, kind: "service", run, ...extra });

describe("supervision", () => {
  test("starts at once with the workspace as cwd and CARDS_URL / CARDS_WORKSPACE set; hooks and runs are not started", async () => {
    const { root, lines, one, services } = supervise([
      svc("web", sh("sleep.sh", "30"), { env: { MODE: "m1" } }),
      { id: "h", kind: "hook", run: ["true"] },
      { id: "r", kind: "run", run: ["true"] },
    ]);
    await waitFor(() => lines.length > 0, "output");
    expect(lines[0]).toBe(`web stdout: up in ${root} for ${root} MODE=m1 URL=http://127.0.0.1:4777`);
    expect(services.list().map((s) => s.id)).toEqual(["web"]);
    expect(one("web")).toMatchObject({ kind: "service", state: "running", restarts: 0 });
    expect(alive(one("web")!.pid!)).toBe(true);
  });

  test("a service that crashes repeatedly restarts with a growing, capped backoff, visible in list()", async () => {
    const { logs, one } = supervise([svc("crashy", sh("crash.sh", "2"))]);
    await waitFor(() => one("crashy")!.restarts >= 4, "four restarts", 4000);
    const delays = logs.filter((l) => l.includes("restarting in")).map((l) => l.match(/restarting in ([\d.]+) s/)![1]);
    expect(delays.slice(0, 4)).toEqual(["0.1", "0.2", "0.4", "0.4"]);
    expect(logs.find((l) => l.includes("restarting in"))).toMatch(/^service crashy: exited with code 2 after [\d.]+ s; stderr: "crashing"; restarting in 0.1 s \(restart 1\)$/);
    const s = one("crashy")!;
    expect(["running", "backoff"]).toContain(s.state);
    expect(s.last_exit).toMatchObject({ code: 2, signal: null });
  });

  test("the backoff resets after a run that lasted resetAfterMs", async () => {
    const { logs, one } = supervise([svc("steady", sh("sleep.sh", "0.3"), { restart_policy: "always" })], { backoff: { initialMs: 100, maxMs: 400, resetAfterMs: 200 } });
    await waitFor(() => one("steady")!.restarts >= 3, "three restarts", 4000);
    const delays = logs.filter((l) => l.includes("restarting in")).map((l) => l.match(/restarting in ([\d.]+) s/)![1]);
    expect(delays.slice(0, 3)).toEqual(["0.1", "0.1", "0.1"]);
  });

  test("how long a run lasted follows the monotonic clock: with the wall clock held (or stepped back), a long run still resets the backoff", async () => {
    setSystemTime(Date.now() - 60_000); // held there while the service runs
    try {
      const { logs, one } = supervise([svc("steady", sh("sleep.sh", "0.3"), { restart_policy: "always" })], { backoff: { initialMs: 100, maxMs: 400, resetAfterMs: 200 } });
      await waitFor(() => one("steady")!.restarts >= 3, "three restarts", 4000);
      const restarts = logs.filter((l) => l.includes("restarting in"));
      expect(restarts.slice(0, 3).map((l) => l.match(/restarting in ([\d.]+) s/)![1])).toEqual(["0.1", "0.1", "0.1"]);
      expect(restarts[0]).toMatch(/ after 0\.[3-9]\d* s; /);
    } finally {
      setSystemTime();
    }
  });

  test("restart_policy never: a failure is final (state failed), a clean exit is state stopped", async () => {
    const { logs, one } = supervise([
      svc("once-bad", sh("crash.sh", "1"), { restart_policy: "never" }),
      svc("once-ok", sh("crash.sh", "0"), { restart_policy: "never" }),
    ]);
    await waitFor(() => one("once-bad")!.state === "failed" && one("once-ok")!.state === "stopped", "both ended");
    await Bun.sleep(300);
    expect(one("once-bad")).toMatchObject({ state: "failed", restarts: 0, last_exit: { code: 1 } });
    expect(one("once-ok")).toMatchObject({ state: "stopped", restarts: 0, last_exit: { code: 0 } });
    expect(logs.some((l) => /^service once-bad: exited with code 1 after .*; not restarting \(restart_policy never\)$/.test(l))).toBe(true);
  });

  test("on-failure leaves a clean exit alone; always restarts it", async () => {
    const { one } = supervise([
      svc("clean", sh("crash.sh", "0")),
      svc("again", sh("crash.sh", "0"), { restart_policy: "always" }),
    ]);
    await waitFor(() => one("again")!.restarts >= 2, "two restarts of `always`");
    expect(one("clean")).toMatchObject({ state: "stopped", restarts: 0 });
  });

  test("a missing executable is retried like a crash", async () => {
    const { logs, one } = supervise([svc("ghost", ["/no/such/daemon"])]);
    await waitFor(() => one("ghost")!.restarts >= 1, "a restart");
    expect(logs[0]).toMatch(/^service ghost: could not start "\/no\/such\/daemon": .*ENOENT.*; restarting in 0.1 s \(restart 1\)$/);
    expect(one("ghost")!.last_exit!.error).toContain("ENOENT");
  });

  test("autostart false: declared, not started", async () => {
    const { one, logs } = supervise([svc("lazy", sh("sleep.sh", "30"), { autostart: false })]);
    expect(one("lazy")).toEqual({ id: "lazy", kind: "service", state: "stopped", restarts: 0 });
    expect(logs).toEqual(["service lazy: not started (autostart false)"]);
  });
});

describe("output", () => {
  test("the budget's window follows the monotonic clock: a wall clock stepped back (or stopped) does not mute a quiet service (before: silent for as long as the step)", async () => {
    setSystemTime(Date.now() - 60_000); // held there: the wall clock does not move while the lines come
    try {
      // 3 x 150 lines, 1.1 s apart: each in a window of its own, all of them logged
      const { lines, logs } = supervise([svc("steady", ["/bin/sh", "-c", "for b in 1 2 3; do i=0; while [ $i -lt 150 ]; do echo tick $b $i; i=$((i+1)); done; sleep 1.1; done; sleep 30"])]);
      const end = performance.now() + 6000;
      while (lines.length < 450 && !logs.some((l) => l.includes("not logged")) && performance.now() < end) await Bun.sleep(20);
      expect(logs.filter((l) => l.includes("not logged"))).toEqual([]);
      expect(lines.length).toBe(450);
    } finally {
      setSystemTime();
    }
  });

  test("a flood of output reaches the log at most OUTPUT_LINES_PER_SECOND a second, counted, and never stalls the event loop", async () => {
    const { lines, logs } = supervise([svc("flood", ["/usr/bin/yes", "flood"])]);
    let worst = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    await Bun.sleep(2500);
    clearInterval(probe);
    // windows of one second: at most three of them in 2.5 s
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(3 * OUTPUT_LINES_PER_SECOND);
    expect(logs.some((l) => /^service flood: \d+ more output line\(s\) not logged \(over 200 a second\)$/.test(l))).toBe(true);
    expect(worst).toBeLessThan(250);
  });

  test("past FLOOD_LINES_PER_SECOND the pipe is paused for the rest of that second, on the monotonic clock: with the wall clock held, a flood still drains and its service exits", async () => {
    setSystemTime(Date.now() - 60_000); // held there while the lines come
    try {
      // more lines than the pipe and the reader's buffers hold: some wait for the pauses to end
      const { one } = supervise([svc("burst", ["/bin/sh", "-c", "seq 1 250000"], { restart_policy: "never" })]);
      const t0 = performance.now();
      while (one("burst")?.state !== "stopped" && performance.now() - t0 < 8000) await Bun.sleep(20);
      const took = performance.now() - t0;
      expect(one("burst")?.state).toBe("stopped");
      expect(took).toBeGreaterThan(1500); // paused twice, up to a second each
    } finally {
      setSystemTime();
    }
  }, 15_000);

  test("what a service leaves running in its process group is terminated when it exits", async () => {
    const { root, one } = supervise([svc("leaver", ["/bin/sh", "-c", "sleep 4343 & echo $! > leftover.pid; exit 1"], { restart_policy: "never" })]);
    await waitFor(() => one("leaver")?.state === "failed", "the service exited");
    const pid = Number(await Bun.file(join(root, "leftover.pid")).text());
    await waitFor(() => !alive(pid), "the background sleep is gone", 3000);
  });
});

describe("stopping", () => {
  test("stop() terminates a service, and kills one that ignores SIGTERM after the grace", async () => {
    const { services, lines, logs, one } = supervise([svc("polite", sh("sleep.sh", "30")), svc("stubborn", sh("hang.sh"))]);
    await waitFor(() => lines.some((l) => l === "stubborn stdout: ready") && lines.some((l) => l.startsWith("polite")), "both up");
    const pids = [one("polite")!.pid!, one("stubborn")!.pid!];
    const t = Date.now();
    await services.stop();
    expect(Date.now() - t).toBeGreaterThanOrEqual(250);
    expect(logs).toContain("service polite: stopped (shutdown): terminated (SIGTERM)");
    expect(logs).toContain("service stubborn: stopped (shutdown): killed (SIGKILL) after ignoring SIGTERM for 300 ms");
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(services.list().map((s) => s.state)).toEqual(["stopped", "stopped"]);
  });

  test("stop() cancels a pending restart", async () => {
    const { services, one } = supervise([svc("crashy", sh("crash.sh"))], { backoff: { initialMs: 300 } });
    await waitFor(() => one("crashy")!.state === "backoff", "backoff");
    await services.stop();
    await Bun.sleep(400);
    expect(one("crashy")).toMatchObject({ state: "stopped", restarts: 0 });
  });
});

describe("reconcile after a reload", () => {
  test("starts new declarations, restarts changed ones, stops removed ones, leaves the rest running", async () => {
    const { host, services, one, logs } = supervise([svc("keep", sh("sleep.sh", "30")), svc("change", sh("sleep.sh", "30")), svc("drop", sh("sleep.sh", "30"))]);
    await waitFor(() => services.list().every((s) => s.state === "running" && s.pid), "all running");
    const before = Object.fromEntries(services.list().map((s) => [s.id, s.pid!]));
    host.defs = { extensions: [svc("keep", sh("sleep.sh", "30")), svc("change", sh("sleep.sh", "30"), { env: { MODE: "2" } }), svc("fresh", sh("sleep.sh", "30"))] };
    services.reconcile();
    await waitFor(() => one("change")?.state === "running" && one("fresh")?.state === "running" && !alive(before.drop!), "reconciled");
    expect(services.list().map((s) => s.id).sort()).toEqual(["change", "fresh", "keep"]);
    expect(one("keep")!.pid).toBe(before.keep!);
    expect(one("change")!.pid).not.toBe(before.change!);
    expect(alive(before.change!)).toBe(false);
    expect(logs).toContain("service drop: stopped (no longer declared): terminated (SIGTERM)");
    expect(logs).toContain("service change: declaration changed; restarting");
  });
});

describe("one process per service", () => {
  const runs = (root: string) => readdirSync(root).filter((n) => n.startsWith("run-"));
  const living = (root: string) => runs(root).map((n) => Number(n.slice(4, -4))).filter(alive);

  const stubborn = (root: string) => ["/bin/sh", "-c", `trap '' TERM; : > "${root}/run-$$.txt"; while :; do sleep 1; done`];
  const watch = async (root: string, ms: number): Promise<number> => {
    let most = 0;
    for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(20)) most = Math.max(most, living(root).length);
    return most;
  };

  test("two changes in a row while the old process takes its grace: the new one starts only after the old is gone", async () => {
    const { root, host, services, one } = supervise([], { stopGraceMs: 800 });
    host.defs = { extensions: [svc("single", stubborn(root), { env: { V: "1" } })] };
    services.reconcile();
    await waitFor(() => living(root).length === 1 && one("single")?.state === "running", "first instance");
    for (const v of ["2", "3"]) {
      host.defs = { extensions: [svc("single", stubborn(root), { env: { V: v } })] };
      services.reconcile();
      await Bun.sleep(100);
    }
    expect(await watch(root, 2500)).toBe(1);
    expect(one("single")!.state).toBe("running");
  });

  test("removed, then declared again within the old process's grace: no overlap", async () => {
    const { root, host, services, one } = supervise([], { stopGraceMs: 800 });
    host.defs = { extensions: [svc("again", stubborn(root))] };
    services.reconcile();
    await waitFor(() => living(root).length === 1, "first instance");
    host.defs = { extensions: [] };
    services.reconcile();
    await Bun.sleep(100);
    host.defs = { extensions: [svc("again", stubborn(root))] };
    services.reconcile();
    expect(await watch(root, 2000)).toBe(1);
    expect(runs(root).length).toBe(2);
    expect(one("again")!.state).toBe("running");
  });
});

describe("state file", () => {
  test("mirrors list() to .cards/services/<pid>.json for `cards ext list`", async () => {
    const { root, services, one } = supervise([svc("web", sh("sleep.sh", "30"))]);
    await waitFor(() => one("web")?.state === "running", "running");
    expect(stateFile(root)).toBe(join(root, ".cards/services", `${process.pid}.json`));
    const [snap, ...more] = liveSnapshots(root);
    expect(more).toEqual([]);
    expect(snap!.pid).toBe(process.pid);
    expect(snap!.services).toEqual(services.list());
    await services.stop();
    // a stopped supervisor leaves no file behind (its services have all exited)
    expect(existsSync(stateFile(root))).toBe(false);
    expect(liveSnapshots(root)).toEqual([]);
  });

  test("a supervisor removes the files of supervisors that are gone; files of live ones stay", async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "cards-svc-")));
    const dead = Bun.spawnSync(["true"]).pid;
    const live = Bun.spawn(["sleep", "30"]);
    try {
      for (const pid of [dead, live.pid]) writeSnapshot(stateFile(root, pid), { pid, updated_at: new Date().toISOString(), services: [] });
      running.push(startServices({ root, defs: { extensions: [svc("web", sh("sleep.sh", "30"))] } }, { log: () => {}, output: () => {} }));
      expect(existsSync(stateFile(root, dead))).toBe(false);
      expect(existsSync(stateFile(root, live.pid))).toBe(true);
      expect(liveSnapshots(root).map((s) => s.pid).sort()).toEqual([process.pid, live.pid].sort());
    } finally {
      live.kill();
    }
  });
});

describe("state file: a pid given to another process", () => {
  /** `<pid>-<start>-<pid space>` of a process as the supervisors record themselves (Linux: /proc) */
  const idOf = (pid: number, start?: string): string => {
    const space = /^\d+-\d+-(.+)$/.exec(selfId()!)![1];
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return `${pid}-${start ?? stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}-${space}`;
  };

  test.skipIf(selfId() === undefined)("a supervisor records who it is; a file whose pid now names another process is gone, with its request folder (before: listed as live, a false warning)", async () => {
    const { root, services } = supervise([svc("web", sh("sleep.sh", "30"))]);
    expect(readSnapshot(stateFile(root))?.supervisor).toBe(selfId());
    await services.stop();
    const reused = Bun.spawn(["sleep", "30"]); // the pid a killed server had, now another process's
    const same = Bun.spawn(["sleep", "30"]); // a server still running
    try {
      writeSnapshot(stateFile(root, reused.pid), { pid: reused.pid, supervisor: idOf(reused.pid, "1"), updated_at: new Date().toISOString(), services: [] });
      mkdirSync(join(root, ".cards/services", `${reused.pid}.requests`));
      writeSnapshot(stateFile(root, same.pid), { pid: same.pid, supervisor: idOf(same.pid), updated_at: new Date().toISOString(), services: [] });
      expect(liveSnapshots(root).map((s) => s.pid)).toEqual([same.pid]);
      const warned: string[] = [];
      running.push(startServices({ root, defs: { extensions: [svc("web", sh("sleep.sh", "30"))] } }, { log: () => {}, warn: (m) => warned.push(m), output: () => {} }));
      expect(warned).toEqual([`another cards serve on this workspace (pid ${same.pid}) supervises services too: each server runs its own copy of web (docs/extensions.md)`]);
      expect(existsSync(stateFile(root, reused.pid))).toBe(false);
      expect(existsSync(join(root, ".cards/services", `${reused.pid}.requests`))).toBe(false);
      expect(existsSync(stateFile(root, same.pid))).toBe(true);
    } finally {
      reused.kill();
      same.kill();
    }
  });

  test.skipIf(selfId() === undefined)("an id from another pid space, or naming another pid, says nothing of the process: whether its pid runs is all that is told", () => {
    const p = Bun.spawn(["sleep", "30"]);
    try {
      expect(stillRuns(p.pid, idOf(p.pid))).toBe(true);
      expect(stillRuns(p.pid, idOf(p.pid, "1"))).toBe(false); // its pid given to another process
      expect(stillRuns(p.pid, `${p.pid}-1-another-space`)).toBe(true); // its start time is another space's
      expect(stillRuns(p.pid, idOf(process.pid))).toBe(true); // the id of another pid
    } finally {
      p.kill();
    }
  });

  test.skipIf(selfId() === undefined)("a supervisor that exited but was not reaped yet (a zombie: its pid still answers signals) is gone", async () => {
    // `sleep 30` takes over the shell and never waits for its child: the child stays a zombie once it exits
    const parent = Bun.spawn(["sh", "-c", "sleep 0.1 & echo $!; exec sleep 30"], { stdout: "pipe" });
    try {
      const reader = parent.stdout.getReader();
      const zombie = Number(new TextDecoder().decode((await reader.read()).value).trim());
      const id = idOf(zombie);
      await waitFor(() => readFileSync(`/proc/${zombie}/stat`, "utf8").includes(") Z "), "a zombie", 3000);
      expect(alive(zombie)).toBe(true);
      expect(stillRuns(zombie, id)).toBe(false);
    } finally {
      parent.kill();
    }
  });

  test("a supervisor writes its own file before it looks for others: of two starting at once, each finds the other", () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "cards-svc-")));
    const other = Bun.spawn(["sleep", "30"]);
    try {
      writeSnapshot(stateFile(root, other.pid), { pid: other.pid, updated_at: new Date().toISOString(), services: [] });
      writeFileSync(join(root, "not-a-folder"), "");
      const said: string[] = [];
      const tell = (m: string) => said.push(m);
      running.push(startServices({ root, defs: { extensions: [svc("web", sh("sleep.sh", "30"))] } }, { log: tell, warn: tell, output: () => {}, stateFile: join(root, "not-a-folder", "me.json") }));
      // its own file is tried first (here it cannot be written, which says so), then the others are looked at
      expect(said[0]).toStartWith(`services: could not write ${join(root, "not-a-folder", "me.json")}`);
      expect(said[1]).toStartWith(`another cards serve on this workspace (pid ${other.pid})`);
    } finally {
      other.kill();
    }
  });
});
