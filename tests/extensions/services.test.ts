/** Service extensions with real child processes: restart policies, backoff, reconcile, shutdown. */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionDef } from "../../src/domain/types.ts";
import { startServices, type ServiceOptions, type Services } from "../../src/extensions/services.ts";
import { liveSnapshot } from "../../src/extensions/state.ts";
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

describe("state file", () => {
  test("mirrors list() to .cards/services.json for `cards ext list`", async () => {
    const { root, services, one } = supervise([svc("web", sh("sleep.sh", "30"))]);
    await waitFor(() => one("web")?.state === "running", "running");
    const snap = liveSnapshot(root)!;
    expect(snap.pid).toBe(process.pid);
    expect(snap.services).toEqual(services.list());
    await services.stop();
    expect(liveSnapshot(root)!.services[0]!.state).toBe("stopped");
  });
});
