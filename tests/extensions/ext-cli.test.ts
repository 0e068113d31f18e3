/** `cards ext run` and `cards ext list` through the compiled binary. */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startServices, type Services } from "../../src/extensions/services.ts";
import { stateFile, writeSnapshot } from "../../src/extensions/state.ts";
import { assertBinary, run } from "../helpers/binary.ts";
import { sh, waitFor, workspaceWith } from "./util.ts";

let ws: string;
let real: string;
beforeAll(() => {
  assertBinary();
  ws = workspaceWith([
    { id: "echo", kind: "run", description: "prints its arguments", run: sh("exit-with.sh"), env: { EXTRA: "from-decl" } },
    { id: "elsewhere", kind: "run", cwd: "sub/dir", run: sh("exit-with.sh", "0") },
    { id: "suicide", kind: "run", run: ["/bin/sh", "-c", "kill -TERM $$"] },
    { id: "ghost", kind: "run", run: ["/no/such/tool"] },
    { id: "noexec", kind: "run", run: ["./noexec.sh"] },
    { id: "nocwd", kind: "run", cwd: "no-such-dir", run: sh("exit-with.sh", "0") },
    { id: "notify", kind: "hook", on: ["card_created"], run: ["true"] },
    { id: "web", kind: "service", run: sh("sleep.sh", "30"), env: { SECRET: "hunter2" } },
  ]);
  mkdirSync(join(ws, "sub/dir"), { recursive: true });
  writeFileSync(join(ws, "noexec.sh"), "#!/bin/sh\necho hi\n", { mode: 0o644 });
  real = realpathSync(ws);
});

const lines = (out: string) => out.trim().split("\n");

describe("cards ext run", () => {
  test("appends the arguments, passes the exit code through, shares stdout; cwd and env follow the conventions", () => {
    const r = run(["ext", "run", "echo", "7", "a", "b c"], { cwd: ws });
    expect(r.code).toBe(7);
    expect(lines(r.stdout)).toEqual(["arg=7", "arg=a", "arg=b c", `cwd=${real}`, `CARDS_WORKSPACE=${ws}`, "CARDS_URL=<unset>", "EXTRA=from-decl", "CARDS_ACTOR=<unset>"]);
    expect(r.stderr).toBe("");
  });

  test("arguments starting with a dash go after --; CARDS_URL is passed on when set", () => {
    const r = run(["ext", "run", "echo", "--", "0", "--force", "-x"], { cwd: ws, env: { CARDS_URL: "http://127.0.0.1:9" } });
    expect(r.code).toBe(0);
    expect(lines(r.stdout).slice(0, 3)).toEqual(["arg=0", "arg=--force", "arg=-x"]);
    expect(r.stdout).toContain("CARDS_URL=http://127.0.0.1:9\n");
  });

  test("after --, cards' own flags (--help, -h, --url, --actor, --dir) go to the extension untouched", () => {
    const r = run(["ext", "run", "echo", "--", "0", "--help", "-h", "--url", "http://x", "--actor", "bob", "--dir", "/nonexistent"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(lines(r.stdout).slice(0, 10)).toEqual(["arg=0", "arg=--help", "arg=-h", "arg=--url", "arg=http://x", "arg=--actor", "arg=bob", "arg=--dir", "arg=/nonexistent", `cwd=${real}`]);
    expect(r.stdout).toContain("CARDS_URL=<unset>\n");
  });

  test("cwd is resolved against the workspace root; --dir finds the workspace", () => {
    const r = run(["ext", "run", "elsewhere", "--dir", ws], { cwd: "/" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`cwd=${join(real, "sub/dir")}\n`);
  });

  test("death by signal N exits 128 + N", () => {
    expect(run(["ext", "run", "suicide"], { cwd: ws }).code).toBe(143);
  });

  test("an unknown id is not_found (exit 3) listing the run extensions", () => {
    const r = run(["ext", "run", "nope"], { cwd: ws });
    expect(r.code).toBe(3);
    expect(r.error).toMatchObject({ error: "not_found", value: "nope", valid_options: ["echo", "elsewhere", "suicide", "ghost", "noexec", "nocwd"] });
  });

  test("a hook or service id is a usage error (exit 2), each hint saying what runs it", () => {
    const r = run(["ext", "run", "notify"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.error.error).toBe("usage");
    expect(r.error.message).toContain("is a hook, not a run extension");
    expect(r.error.hint).toBe("hooks run on matching events while `cards serve` runs");
    // a service is not started by hand either (it would run unsupervised)
    const svc = run(["ext", "run", "web"], { cwd: ws });
    expect([svc.code, svc.error.error, svc.error.hint]).toEqual([2, "usage", "services are started and supervised by `cards serve`"]);
    expect(svc.error.message).toContain("is a service, not a run extension");
  });

  test("--url wins over the caller's CARDS_URL in what the extension sees", () => {
    const r = run(["--url", "http://127.0.0.1:1", "ext", "run", "echo", "0"], { cwd: ws, env: { CARDS_URL: "http://127.0.0.1:2" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("CARDS_URL=http://127.0.0.1:1\n");
  });

  test("the caller's CARDS_URL replaces a CARDS_URL the extension declares; the declared one is the default without it", () => {
    const dir = workspaceWith([{ id: "echo", kind: "run", run: sh("exit-with.sh", "0"), env: { CARDS_URL: "http://127.0.0.1:3" } }]);
    expect(run(["ext", "run", "echo"], { cwd: dir, env: { CARDS_URL: "http://127.0.0.1:2" } }).stdout).toContain("CARDS_URL=http://127.0.0.1:2\n");
    expect(run(["ext", "run", "echo"], { cwd: dir }).stdout).toContain("CARDS_URL=http://127.0.0.1:3\n");
  });

  test("an executable text file with no #! line is bad_request (exit 2) saying how to name its interpreter", () => {
    const dir = workspaceWith([{ id: "plain", kind: "run", run: ["./plain.txt"] }]);
    writeFileSync(join(dir, "plain.txt"), "echo hi\n", { mode: 0o755 });
    const r = run(["ext", "run", "plain"], { cwd: dir });
    expect([r.code, r.error.error, r.error.field]).toEqual([2, "bad_request", "run"]);
    expect(r.error.hint).toContain("name its interpreter first");
  });

  test("--actor reaches the extension as CARDS_ACTOR (over the caller's own), as --url reaches it as CARDS_URL", () => {
    const r = run(["--actor", "bob", "ext", "run", "echo", "0"], { cwd: ws, env: { CARDS_ACTOR: "carol" } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("CARDS_ACTOR=bob\n");
    expect(run(["ext", "run", "echo", "0"], { cwd: ws, env: { CARDS_ACTOR: "carol" } }).stdout).toContain("CARDS_ACTOR=carol\n");
  });

  test("a flag meant for the extension, without --, says to put -- before it", () => {
    const r = run(["ext", "run", "echo", "--dry-run"], { cwd: ws });
    expect([r.code, r.error.error]).toEqual([2, "usage"]);
    expect(r.error.hint).toBe("to pass --dry-run on, put -- before it: `cards ext run echo -- --dry-run`");
  });

  test("a run[0] that cannot run (not executable) is bad_request (exit 2) saying chmod +x, not unavailable (exit 7, retried by scripts)", () => {
    const r = run(["ext", "run", "noexec"], { cwd: ws });
    expect([r.code, r.error.error, r.error.field, r.error.value]).toEqual([2, "bad_request", "run", "./noexec.sh"]);
    expect(r.error.hint).toContain("chmod +x");
  });

  test("a missing executable is not_found naming it", () => {
    const r = run(["ext", "run", "ghost"], { cwd: ws });
    expect(r.code).toBe(3);
    expect(r.error).toMatchObject({ error: "not_found", field: "run", value: "/no/such/tool" });
  });

  test("a missing working directory is not_found naming `cwd`, not the executable", () => {
    const r = run(["ext", "run", "nocwd"], { cwd: ws });
    expect(r.code).toBe(3);
    expect(r.error).toMatchObject({ error: "not_found", field: "cwd", value: "no-such-dir" });
    expect(r.error.message).toContain("no-such-dir does not exist");
  });
});

describe("cards ext list", () => {
  test("lists the declarations without env; services are `not running` when no server supervises them", () => {
    const r = run(["ext", "list"], { cwd: ws });
    expect(r.code).toBe(0);
    const byId = Object.fromEntries(r.json.extensions.map((e: any) => [e.id, e]));
    expect(Object.keys(byId)).toEqual(["echo", "elsewhere", "suicide", "ghost", "noexec", "nocwd", "notify", "web"]);
    expect(byId.echo).toEqual({ id: "echo", kind: "run", description: "prints its arguments", run: expect.any(Array) });
    expect(byId.notify).toMatchObject({ kind: "hook", on: ["card_created"] });
    expect(byId.web).toMatchObject({ kind: "service", state: "not running" });
    expect(r.stdout).not.toContain("hunter2");
  });

  test("shows the live state of a supervisor running on the workspace", async () => {
    let services: Services | undefined;
    try {
      services = startServices({ root: ws, defs: { extensions: [{ id: "web", kind: "service", run: sh("sleep.sh", "30") }] } }, { log: () => {}, output: () => {} });
      await waitFor(() => services!.list()[0]?.state === "running", "running");
      const web = run(["ext", "list"], { cwd: ws }).json.extensions.find((e: any) => e.id === "web");
      expect(web).toMatchObject({ state: "running", pid: services.list()[0]!.pid, restarts: 0, supervisor_pid: process.pid });
      // a second server running its own copy: both show
      const other = Bun.spawn(["sleep", "30"]);
      try {
        writeSnapshot(stateFile(ws, other.pid), { pid: other.pid, updated_at: new Date().toISOString(), services: [{ id: "web", kind: "service", state: "backoff", restarts: 2 }] });
        const both = run(["ext", "list"], { cwd: ws }).json.extensions.find((e: any) => e.id === "web");
        expect(both).toMatchObject({ state: "running", supervisor_pid: process.pid });
        expect(both.instances.map((i: any) => [i.supervisor_pid, i.state]).sort()).toEqual([[process.pid, "running"], [other.pid, "backoff"]].sort());
      } finally {
        other.kill();
        await other.exited;
      }
    } finally {
      await services?.stop();
    }
  });

  test("a supervisor starting beside a live one warns that each runs its own copy of the services", async () => {
    const other = Bun.spawn(["sleep", "30"]); // stands for a second server: a live pid with its own state file
    let services: Services | undefined;
    const warned: string[] = [];
    try {
      writeSnapshot(stateFile(ws, other.pid), { pid: other.pid, updated_at: new Date().toISOString(), services: [] });
      services = startServices({ root: ws, defs: { extensions: [{ id: "web", kind: "service", run: sh("sleep.sh", "30") }] } }, { log: () => {}, warn: (m) => warned.push(m), output: () => {} });
      expect(warned).toEqual([`another cards serve on this workspace (pid ${other.pid}) supervises services too: each server runs its own copy of web (docs/extensions.md)`]);
    } finally {
      await services?.stop();
      other.kill();
      await other.exited;
    }
    // alone on the workspace, or with no service declared: nothing to say
    const quiet: string[] = [];
    const alone = startServices({ root: ws, defs: { extensions: [{ id: "web", kind: "service", run: sh("sleep.sh", "30") }] } }, { log: () => {}, warn: (m) => quiet.push(m), output: () => {} });
    await alone.stop();
    const other2 = Bun.spawn(["sleep", "30"]);
    try {
      writeSnapshot(stateFile(ws, other2.pid), { pid: other2.pid, updated_at: new Date().toISOString(), services: [] });
      await startServices({ root: ws, defs: { extensions: [] } }, { log: () => {}, warn: (m) => quiet.push(m), output: () => {} }).stop();
    } finally {
      other2.kill();
      await other2.exited;
    }
    expect(quiet).toEqual([]);
  });

  test("no warning from a state file of its own pid (a container's server restarted as the same pid), nor for hooks alone", async () => {
    const quiet: string[] = [];
    // a killed server's file that names this process's pid: this process, not another server
    writeSnapshot(stateFile(ws, process.pid), { pid: process.pid, updated_at: new Date().toISOString(), services: [] });
    await startServices({ root: ws, defs: { extensions: [{ id: "web", kind: "service", run: sh("sleep.sh", "30") }] } }, { log: () => {}, warn: (m) => quiet.push(m), output: () => {} }).stop();
    // beside a live server, a workspace that declares hooks and commands but no service: each server running its own hooks is no copy of a service
    const other = Bun.spawn(["sleep", "30"]);
    try {
      writeSnapshot(stateFile(ws, other.pid), { pid: other.pid, updated_at: new Date().toISOString(), services: [] });
      const exts = [
        { id: "on-create", kind: "hook", on: ["card_created"], run: sh("sleep.sh", "0") },
        { id: "tool", kind: "command", run: sh("sleep.sh", "0") },
      ] as never;
      await startServices({ root: ws, defs: { extensions: exts } }, { log: () => {}, warn: (m) => quiet.push(m), output: () => {} }).stop();
    } finally {
      other.kill();
      await other.exited;
    }
    expect(quiet).toEqual([]);
  });

  test("two supervisors on one workspace: one that stopped does not hide the other's running service", async () => {
    const other = Bun.spawn(["sleep", "30"]); // stands for a second server: a live pid with its own state file
    let services: Services | undefined;
    try {
      writeSnapshot(stateFile(ws, other.pid), { pid: other.pid, updated_at: new Date().toISOString(), services: [{ id: "web", kind: "service", state: "running", pid: 424242, restarts: 0 }] });
      services = startServices({ root: ws, defs: { extensions: [{ id: "web", kind: "service", run: sh("sleep.sh", "30") }] } }, { log: () => {}, output: () => {} });
      await waitFor(() => services!.list()[0]?.state === "running", "running");
      await services.stop();
      const web = run(["ext", "list"], { cwd: ws }).json.extensions.find((e: any) => e.id === "web");
      expect(web).toMatchObject({ state: "running", pid: 424242, supervisor_pid: other.pid });
      // every live supervisor's copy is listed (before: one, the most alive)
      expect(web.instances).toEqual([{ state: "running", pid: 424242, restarts: 0, supervisor_pid: other.pid }]);
      other.kill();
      await other.exited;
      // the other is gone, and this one removed its file when it stopped: nothing supervises it
      const left = run(["ext", "list"], { cwd: ws }).json.extensions.find((e: any) => e.id === "web");
      expect(left).toMatchObject({ state: "not running" });
      expect(left.supervisor_pid).toBeUndefined();
    } finally {
      other.kill();
      await services?.stop();
    }
  });

  describe("several supervisors' state files", () => {
    const fakes: Array<ReturnType<typeof Bun.spawn>> = [];
    afterEach(async () => {
      for (const p of fakes.splice(0)) {
        p.kill();
        await p.exited;
      }
    });
    /** A live pid standing for a server: what a state file names. */
    const fakeServer = (): number => {
      const p = Bun.spawn(["sleep", "30"]);
      fakes.push(p);
      return p.pid;
    };
    const report = (pid: number, services: Array<[string, string]>) => ({
      pid, updated_at: new Date().toISOString(),
      services: services.map(([id, state]) => ({ id, kind: "service" as const, state: state as never, restarts: 0 })),
    });
    /** The older versions' single state file: read after the per-server ones. */
    const legacy = (dir: string) => join(dir, ".cards", "services.json");
    const listed = (dir: string) => {
      const r = run(["ext", "list"], { cwd: dir });
      expect([r.code, r.stderr]).toEqual([0, ""]);
      return Object.fromEntries(r.json.extensions.map((e: any) => [e.id, e]));
    };
    const instancesOf = (e: any) => e.instances.map((i: any) => [i.supervisor_pid, i.state]).sort((a: any, b: any) => a[0] - b[0]);

    test("a live server's file without a services list (half-edited, null) is skipped, not a crash", () => {
      const dir = workspaceWith([{ id: "web", kind: "service", run: sh("sleep.sh", "30") }]);
      const pid = fakeServer();
      writeSnapshot(stateFile(dir, pid), { pid, updated_at: new Date().toISOString(), services: null as never });
      expect(listed(dir).web).toMatchObject({ state: "not running" });
    });

    test("an older server's single services.json is read: its copy is listed too, though less alive and read last", () => {
      const dir = workspaceWith([{ id: "web", kind: "service", run: sh("sleep.sh", "30") }]);
      const a = fakeServer();
      const b = fakeServer();
      writeSnapshot(stateFile(dir, a), report(a, [["web", "running"]]));
      writeSnapshot(legacy(dir), report(b, [["web", "backoff"]]));
      const web = listed(dir).web;
      expect([web.state, web.supervisor_pid]).toEqual(["running", a]);
      expect(instancesOf(web)).toEqual([[a, "running"], [b, "backoff"]].sort((x: any, y: any) => x[0] - y[0]));
    });

    test("a server named by both its own file and services.json is one instance", () => {
      const dir = workspaceWith([{ id: "web", kind: "service", run: sh("sleep.sh", "30") }]);
      const a = fakeServer();
      writeSnapshot(stateFile(dir, a), report(a, [["web", "running"]]));
      writeSnapshot(legacy(dir), report(a, [["web", "running"]]));
      expect(instancesOf(listed(dir).web)).toEqual([[a, "running"]]);
    });

    test("the state shown is the most alive one reported: starting over stopping, backoff over stopped, failed over stopped", () => {
      const dir = workspaceWith([
        { id: "web", kind: "service", run: sh("sleep.sh", "30") },
        { id: "api", kind: "service", run: sh("sleep.sh", "30") },
        { id: "worker", kind: "service", run: sh("sleep.sh", "30") },
      ]);
      const a = fakeServer();
      const b = fakeServer();
      writeSnapshot(stateFile(dir, a), report(a, [["web", "stopped"], ["api", "failed"], ["worker", "stopping"]]));
      writeSnapshot(stateFile(dir, b), report(b, [["web", "backoff"], ["api", "stopped"], ["worker", "starting"]]));
      const byId = listed(dir);
      expect([byId.web.state, byId.api.state, byId.worker.state]).toEqual(["backoff", "failed", "starting"]);
      expect([byId.web.supervisor_pid, byId.api.supervisor_pid, byId.worker.supervisor_pid]).toEqual([b, a, b]);
    });
  });
});
