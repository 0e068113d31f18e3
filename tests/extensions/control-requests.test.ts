/**
 * `cards ext start|stop|restart` hands a request file to every live supervisor
 * (src/extensions/control.ts): all or none, and the supervisor's side carries out each
 * valid request once, in the order they came, and keeps the folders of live servers.
 */
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pruneRequestDirs, requestService, watchServiceRequests, type ServiceRequest } from "../../src/extensions/control.ts";
import { stateFile, writeSnapshot } from "../../src/extensions/state.ts";
import { selfId } from "../../src/extensions/orphans.ts";
import { makeWorkspace } from "../helpers/workspace.ts";
import { waitFor } from "./util.ts";

const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterEach(() => { for (const p of procs.splice(0)) p.kill(); });
/** A live process standing for a server (its pid is what the state files name). */
const liveServer = () => { const p = Bun.spawn(["sleep", "30"]); procs.push(p); return p.pid; };
const services = (ws: string) => join(ws, ".cards", "services");
const snapshot = (pid: number) => ({ pid, updated_at: new Date().toISOString(), services: [] });

test("all or none: a server that cannot take the request leaves none with the others, and the error says so", async () => {
  const ws = makeWorkspace();
  const a = liveServer();
  const b = liveServer();
  writeSnapshot(stateFile(ws, a), snapshot(a));
  mkdirSync(join(services(ws), `${a}.requests`), { recursive: true });
  // b, an older server's single state file (read after the others), whose request folder is a file
  writeFileSync(join(ws, ".cards", "services.json"), JSON.stringify(snapshot(b)));
  writeFileSync(join(services(ws), `${b}.requests`), "");
  const err = await requestService(ws, { action: "stop", id: "web" }, 1000).then(() => null, (e) => e);
  // before: a raw ENOTDIR from removing the half-written file, and a's request left behind
  expect([err?.code, err?.message]).toEqual(["unavailable", expect.stringContaining(`cannot hand the request to the server (pid ${b})`)]);
  expect(readdirSync(join(services(ws), `${a}.requests`))).toEqual([]);
});

test("a server that does not take the request in time is reported late once the timeout passed, and its request is taken back", async () => {
  const ws = makeWorkspace();
  const a = liveServer();
  writeSnapshot(stateFile(ws, a), snapshot(a));
  const dir = join(services(ws), `${a}.requests`);
  mkdirSync(dir, { recursive: true }); // a server that takes requests, but no one watches the folder
  const t0 = Date.now();
  const r = await requestService(ws, { action: "start", id: "web" }, 300);
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(r).toEqual({ asked: [a], late: [a], old: [] });
  // not carried out later, unasked, should that server look again
  expect(readdirSync(dir)).toEqual([]);
}, 10_000);

test("a server that dies while asked is not waited for, nor reported late", async () => {
  const ws = makeWorkspace();
  const p = Bun.spawn(["sleep", "30"]);
  procs.push(p);
  writeSnapshot(stateFile(ws, p.pid), snapshot(p.pid));
  mkdirSync(join(services(ws), `${p.pid}.requests`), { recursive: true });
  const t0 = Date.now();
  const asked = requestService(ws, { action: "stop", id: "web" }, 5000); // the request is handed before it returns
  expect(readdirSync(join(services(ws), `${p.pid}.requests`))).toHaveLength(1);
  p.kill("SIGKILL");
  await p.exited;
  const r = await asked;
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(r).toEqual({ asked: [p.pid], late: [], old: [] });
}, 10_000);

test("the supervisor carries out each valid request once, oldest first; a half-written or unknown request is not carried out", async () => {
  const ws = makeWorkspace();
  const seen: string[] = [];
  const logs: string[] = [];
  const dir = join(services(ws), `${process.pid}.requests`);
  const stop = watchServiceRequests(ws, async (req: ServiceRequest) => { seen.push(`${req.action}:${req.id}`); await Bun.sleep(350); }, (m) => logs.push(m));
  try {
    writeFileSync(join(dir, "2-b.json"), JSON.stringify({ action: "stop", id: "b" }));
    writeFileSync(join(dir, "1-a.json"), JSON.stringify({ action: "start", id: "a" }));
    writeFileSync(join(dir, "3-c.json"), JSON.stringify({ action: "explode", id: "c" }));
    writeFileSync(join(dir, "4-d.json.tmp"), JSON.stringify({ action: "start", id: "d" }));
    for (const end = Date.now() + 3000; readdirSync(dir).length > 1 && Date.now() < end;) await Bun.sleep(50);
    await Bun.sleep(500); // polls that come while a slow request runs take nothing again
    expect(seen).toEqual(["start:a", "stop:b"]);
    expect(readdirSync(dir)).toEqual(["4-d.json.tmp"]);
  } finally {
    stop();
  }
  expect(existsSync(dir)).toBe(false); // stop removes the folder
});

test("a supervisor whose request folder was removed makes it again, and is reached through it", async () => {
  const ws = makeWorkspace();
  const seen: string[] = [];
  const dir = join(services(ws), `${process.pid}.requests`);
  const stop = watchServiceRequests(ws, async (req: ServiceRequest) => { seen.push(`${req.action}:${req.id}`); }, () => {});
  try {
    rmSync(dir, { recursive: true }); // by hand, or by a server that took this one for gone
    await waitFor(() => existsSync(dir), "the request folder made again", 5_000);
    writeFileSync(join(dir, "1-a.json"), JSON.stringify({ action: "restart", id: "a" }));
    await waitFor(() => seen.length === 1, "the request carried out", 5_000);
    expect(seen).toEqual(["restart:a"]);
  } finally {
    stop();
  }
});

test("pruning keeps the request folders of live servers and removes those of dead ones", () => {
  const ws = makeWorkspace();
  const live = liveServer();
  mkdirSync(join(services(ws), `${live}.requests`), { recursive: true });
  mkdirSync(join(services(ws), "999999999.requests"), { recursive: true });
  pruneRequestDirs(ws);
  expect(readdirSync(services(ws)).sort()).toEqual([`${live}.requests`]);
});

/** `<pid>-<start>-<pid space>` of a process as the supervisors record themselves (Linux: /proc); `start` given: a process that had its pid before. */
const idOf = (pid: number, start?: string): string => {
  const space = /^\d+-\d+-(.+)$/.exec(selfId()!)![1];
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return `${pid}-${start ?? stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]}-${space}`;
};

test.skipIf(selfId() === undefined)("a server that exits while asked, left a zombie (its pid still answers signals), is not waited for: its state file's id tells", async () => {
  const ws = makeWorkspace();
  // `sleep 30` takes over the shell and never waits for its child: the child stays a zombie once it exits
  const parent = Bun.spawn(["sh", "-c", "sleep 0.5 & echo $!; exec sleep 30"], { stdout: "pipe" });
  procs.push(parent);
  const server = Number(new TextDecoder().decode((await parent.stdout.getReader().read()).value).trim());
  writeSnapshot(stateFile(ws, server), { ...snapshot(server), supervisor: idOf(server) });
  mkdirSync(join(services(ws), `${server}.requests`), { recursive: true });
  const t0 = Date.now();
  const r = await requestService(ws, { action: "stop", id: "web" }, 5000);
  expect(Date.now() - t0).toBeLessThan(2500);
  expect(r).toEqual({ asked: [server], late: [], old: [] });
}, 10_000);

test.skipIf(selfId() === undefined)("pruning removes the request folder of a server whose pid is now another process's (its state file's id tells)", () => {
  const ws = makeWorkspace();
  const reused = liveServer();
  writeSnapshot(stateFile(ws, reused), { ...snapshot(reused), supervisor: idOf(reused, "1") });
  mkdirSync(join(services(ws), `${reused}.requests`), { recursive: true });
  const live = liveServer();
  writeSnapshot(stateFile(ws, live), { ...snapshot(live), supervisor: idOf(live) });
  mkdirSync(join(services(ws), `${live}.requests`), { recursive: true });
  pruneRequestDirs(ws);
  expect(readdirSync(services(ws)).filter((n) => n.endsWith(".requests"))).toEqual([`${live}.requests`]);
});
