/**
 * Faults around the service: graceful shutdown, online backup, a corrupt or foreign
 * database, a read-only workspace, a missing definitions directory, a full disk, and
 * binding beyond loopback. Disk faults use a small tmpfs (root only; CI runs as root).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Database } from "bun:sqlite";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";
import { assertBinary, cleanEnv, run, serve } from "../helpers/binary.ts";

assertBinary();

const mounts: string[] = [];
afterAll(() => { for (const m of mounts) spawnSync("umount", ["-l", m]); });

/** A tmpfs of `size` holding a fresh workspace, or null where mounting is not allowed. */
function tmpfsWorkspace(size: string): string | null {
  const dir = mkdtempSync(join(tmpdir(), "cards-tmpfs-"));
  if (spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]).status !== 0) return null;
  mounts.push(dir);
  cpSync(join(makeWorkspace(), "definitions"), join(dir, "definitions"), { recursive: true });
  return dir;
}
const canMount = (() => {
  const d = mkdtempSync(join(tmpdir(), "cards-probe-"));
  const ok = spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", d]).status === 0;
  if (ok) spawnSync("umount", [d]);
  return ok;
})();

describe("graceful shutdown", () => {
  test("SIGTERM: SSE streams close, in-flight work finishes, the WAL is checkpointed, exit 0", async () => {
    const dir = makeWorkspace();
    const srv = await serve(dir);
    await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "before stop" }) });
    const stream = await fetch(`${srv.url}/v1/events/stream`);
    const reader = stream.body!.getReader();
    await reader.read();
    const exited = new Promise<number | null>((r) => srv.proc.once("exit", (code) => r(code)));
    srv.proc.kill("SIGTERM");
    let ended = false;
    for (;;) {
      const { done } = await reader.read();
      if (done) { ended = true; break; }
    }
    expect(ended).toBe(true);
    expect(await exited).toBe(0);
    const wal = join(dir, ".cards/cards.db-wal");
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    expect(run(["cards", "list"], { cwd: dir }).json.items[0].title).toBe("before stop");
  });
});

describe("artifact uploads", () => {
  test("a chunked upload over 64 MiB (no Content-Length) is 413 and the server keeps serving", async () => {
    const dir = makeWorkspace();
    const srv = await serve(dir);
    try {
      const card = (await (await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "big" }) })).json()) as any;
      const chunk = new Uint8Array(1024 * 1024);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({ pull(c) { if (sent++ >= 65) return c.close(); c.enqueue(chunk); } });
      const r = await fetch(`${srv.url}/v1/cards/${card.id}/artifacts/output`, { method: "POST", body, headers: { "content-type": "application/octet-stream" } });
      expect(r.status).toBe(413);
      await Bun.sleep(300);
      expect(srv.proc.exitCode).toBeNull();
      expect((await fetch(`${srv.url}/v1/health`)).status).toBe(200);
    } finally {
      await srv.stop();
    }
  });

  test("a body over 128 MiB gets the error envelope (before: Bun's empty 413, which the CLI took for another server)", async () => {
    const dir = makeWorkspace();
    const srv = await serve(dir);
    try {
      const huge = new Uint8Array(128 * 1024 * 1024 + 1);
      for (const path of ["/v1/cards", "/v1/cards/card_0000000000000000/artifacts/output"]) {
        const r = await fetch(`${srv.url}${path}`, { method: "POST", body: huge, headers: { "content-type": "application/json" } });
        expect([path, r.status, r.headers.get("content-type")]).toEqual([path, 413, "application/json; charset=utf-8"]);
        expect(((await r.json()) as any).error).toBe("payload_too_large");
      }
    } finally {
      await srv.stop();
    }
  }, 30_000); // two bodies of 128 MiB: ~1-2 s alone, past the 5 s default under CI's load
});

test("the temp files of uploads a killed process left are removed at the next upload; a running one's are kept", () => {
  const dir = makeWorkspace();
  const card = run(["cards", "create", "--type", "task", "--title", "with output"], { cwd: dir }).json;
  const tmp = join(dir, ".cards", "artifacts", "tmp");
  mkdirSync(tmp, { recursive: true });
  const left = `4194400-${Date.now()}-abc`; // a pid above any pid_max: that process is gone
  const live = `${process.pid}-${Date.now()}-def`;
  for (const n of [left, live]) writeFileSync(join(tmp, n), "half an upload");
  const file = join(mkdtempSync(join(tmpdir(), "cards-up-")), "out.txt");
  writeFileSync(file, "the output");
  expect(run(["cards", "artifacts", "put", card.id, "output", file], { cwd: dir }).code).toBe(0);
  expect(readdirSync(tmp)).toEqual([live]); // before: kept for good
});

test("artifacts gc removes the bytes of refused uploads; what cards and history refer to stays", () => {
  const dir = makeWorkspace();
  const card = run(["cards", "create", "--type", "task", "--title", "with output"], { cwd: dir }).json;
  const files = mkdtempSync(join(tmpdir(), "cards-gc-"));
  const file = (name: string, text: string) => { writeFileSync(join(files, name), text); return join(files, name); };
  const put = (f: string, key?: string) => run([...(key ? ["--idempotency-key", key] : []), "cards", "artifacts", "put", card.id, "output", f], { cwd: dir });
  expect(put(file("old.txt", "the first output")).code).toBe(0);
  expect(put(file("new.txt", "the second output")).code).toBe(0); // replaces it: the old stays in the history
  expect(put(file("a1.txt", "a1"), "up1").code).toBe(0);
  expect(put(file("a2.txt", "a2, refused"), "up1").error.error).toBe("idempotency_key_reused"); // its bytes were stored first
  const blobs = () => readdirSync(join(dir, ".cards", "artifacts", "sha256"), { recursive: true }).filter((n) => /[0-9a-f]{64}$/.test(String(n))).length;
  expect(blobs()).toBe(4);
  expect(run(["artifacts", "gc"], { cwd: dir }).json).toEqual({ removed: 0, removed_bytes: 0, kept: 4, dry_run: false }); // all within the hour's grace
  expect(run(["artifacts", "gc", "--grace", "0", "--dry-run"], { cwd: dir }).json).toEqual({ removed: 1, removed_bytes: 11, kept: 3, dry_run: true });
  expect(blobs()).toBe(4);
  expect(run(["artifacts", "gc", "--grace", "0"], { cwd: dir }).json).toEqual({ removed: 1, removed_bytes: 11, kept: 3, dry_run: false });
  expect(blobs()).toBe(3);
  const now = run(["cards", "get", card.id], { cwd: dir }).json;
  expect(run(["artifacts", "get", now.fields.output.uri], { cwd: dir }).stdout).toBe("a1");
});

describe("the database file replaced or deleted under a running server", () => {
  test("writes are refused as unavailable instead of going to the file no one will read again", async () => {
    for (const how of ["replace", "delete"] as const) {
      const dir = makeWorkspace();
      const srv = await serve(dir);
      try {
        const post = (title: string) => fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title }) });
        expect((await post("before")).status).toBe(201);
        const db = join(dir, ".cards/cards.db");
        if (how === "replace") {
          const other = join(dir, "other.db");
          expect(run(["backup", "--out", other], { cwd: dir }).code).toBe(0);
          renameSync(other, db);
        } else {
          rmSync(db);
        }
        const r = await post("after");
        expect(r.status).toBe(503);
        const body = (await r.json()) as any;
        expect(body.error).toBe("unavailable");
        expect(body.message).toContain("was replaced or deleted");
        // and a monitor polling /health sees it (before: 200 while every write failed)
        const health = await fetch(`${srv.url}/v1/health`);
        expect(health.status).toBe(503);
        expect(((await health.json()) as any).message).toContain("was replaced or deleted");
      } finally {
        await srv.stop();
      }
    }
  });
});

describe("GET /health while the disk refuses writes", () => {
  test.skipIf(!canMount)("503 naming the cause once a write failed for a full disk; 200 again once one commits", async () => {
    const dir = tmpfsWorkspace("3m")!;
    const srv = await serve(dir);
    try {
      const post = (title: string) => fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title }) });
      expect((await post("before")).status).toBe(201);
      expect((await fetch(`${srv.url}/v1/health`)).status).toBe(200);
      spawnSync("sh", ["-c", `dd if=/dev/zero of=${join(dir, "filler")} bs=4k 2>/dev/null; sync`]);
      // the WAL reuses the room it has: write until a write needs more
      let refused: Response | undefined;
      for (let i = 0; i < 200 && !refused; i++) {
        const r = await post(`t${i} ${"x".repeat(150)}`);
        if (r.status !== 201) refused = r;
      }
      expect(refused?.status).toBe(503);
      const health = await fetch(`${srv.url}/v1/health`);
      expect(health.status).toBe(503);
      const body = (await health.json()) as any;
      expect(body.error).toBe("unavailable");
      // what is free there now, then what failed
      expect(body.message).toMatch(/^the disk holding .* has \d+ KiB free, less than the 1 MiB GET \/health asks for after a full disk; the last write, \d+ s ago, failed: the disk is full/);
      expect(body.hint).toContain("free disk space");
      // reads still answer meanwhile
      expect((await fetch(`${srv.url}/v1/cards`)).status).toBe(200);
      rmSync(join(dir, "filler"));
      expect((await post("after")).status).toBe(201);
      expect((await fetch(`${srv.url}/v1/health`)).status).toBe(200);
    } finally {
      await srv.stop();
    }
  }, 60_000);
});

describe("a database deleted or emptied between calls", () => {
  test("is refused, not started afresh as an empty workspace (before: {\"items\": []} and new writes into a new file)", async () => {
    const dir = makeWorkspace();
    expect(run(["cards", "create", "--type", "task", "--title", "kept"], { cwd: dir }).code).toBe(0);
    expect(run(["cards", "list", "--q", "kept"], { cwd: dir }).code).toBe(0); // the search index exists now
    const db = join(dir, ".cards/cards.db");
    const saved = readFileSync(db);
    for (const how of ["delete", "empty"] as const) {
      if (how === "delete") rmSync(db);
      else writeFileSync(db, "");
      const r = run(["cards", "list"], { cwd: dir });
      expect([how, r.code, r.error.error]).toEqual([how, 7, "unavailable"]);
      expect(r.error.message).toContain("is missing or empty");
      expect(r.error.hint).toContain("backup");
      expect(run(["cards", "create", "--type", "task", "--title", "lost"], { cwd: dir }).code).toBe(7);
    }
    writeFileSync(db, saved); // put back: everything is there
    expect(run(["cards", "list"], { cwd: dir }).json.items.map((c: any) => c.title)).toEqual(["kept"]);

    // a server killed with its last commits still in the WAL, then the file deleted
    const crashed = makeWorkspace();
    const srv = await serve(crashed);
    expect((await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: "in the WAL" }) })).status).toBe(201);
    srv.proc.kill("SIGKILL");
    await new Promise((r) => srv.proc.once("exit", r));
    const wal = join(crashed, ".cards/cards.db-wal");
    expect(statSync(wal).size).toBeGreaterThan(0);
    rmSync(join(crashed, ".cards/cards.db"));
    const r = run(["cards", "list"], { cwd: crashed });
    expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
    expect(r.error.message).toContain(wal);
    expect(r.error.hint).toContain(`move ${wal} and`); // before the copy: SQLite would apply it over the backup
    // starting over on purpose: move the state away
    renameSync(join(crashed, ".cards"), join(crashed, "old-state"));
    expect(run(["cards", "list"], { cwd: crashed }).json.items).toEqual([]);
  });
});

describe("idle connections", () => {
  test("a client that never finishes its request is cut after the idle timeout; others are served meanwhile", async () => {
    const srv = await serve(makeWorkspace(), { CARDS_IDLE_TIMEOUT_S: "2" });
    try {
      const { port, hostname } = new URL(srv.url);
      let closed = false;
      const sock = await Bun.connect({ hostname, port: Number(port), socket: { data() {}, close() { closed = true; } } });
      sock.write("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); // never ends
      expect((await fetch(`${srv.url}/v1/health`)).status).toBe(200);
      // Bun checks idle sockets every few seconds, and a request still in its headers gets ~10 s
      for (let i = 0; i < 180 && !closed; i++) await Bun.sleep(100);
      expect(closed).toBe(true);
    } finally {
      await srv.stop();
    }
  }, 30_000);

  test("a bad CARDS_IDLE_TIMEOUT_S is a usage error before anything starts", () => {
    const r = run(["serve", "--port", "0"], { cwd: makeWorkspace(), env: { CARDS_IDLE_TIMEOUT_S: "999" } });
    expect(r.code).toBe(2);
    expect(r.error).toMatchObject({ error: "usage", field: "CARDS_IDLE_TIMEOUT_S", value: "999" });
  });
});

describe("event stream limit", () => {
  test("past CARDS_MAX_STREAMS open streams the next is refused with 503 and the envelope; one closing makes room", async () => {
    const srv = await serve(makeWorkspace(), { CARDS_MAX_STREAMS: "3" });
    const streams: AbortController[] = [];
    try {
      const openStream = async () => {
        const ac = new AbortController();
        const res = await fetch(`${srv.url}/v1/events/stream`, { signal: ac.signal });
        if (res.status === 200) {
          streams.push(ac);
          // the first frame: the stream is registered by then
          const reader = res.body!.getReader();
          await reader.read();
        }
        return res;
      };
      for (let i = 0; i < 3; i++) expect((await openStream()).status).toBe(200);
      const refused = await openStream();
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ error: "unavailable", message: expect.stringContaining("at most 3"), hint: expect.stringContaining("CARDS_MAX_STREAMS") });
      // the rest of the API is still served
      expect((await fetch(`${srv.url}/v1/health`)).status).toBe(200);
      streams.shift()!.abort();
      let again = 503;
      for (let i = 0; i < 50 && again !== 200; i++) {
        await Bun.sleep(50);
        const r = await openStream();
        again = r.status;
        if (r.status !== 200) await r.body?.cancel();
      }
      expect(again).toBe(200);
    } finally {
      for (const ac of streams) ac.abort();
      await srv.stop();
    }
  });

  test("a bad CARDS_MAX_STREAMS is a usage error before anything starts", () => {
    for (const bad of ["0", "2.5", "lots", "-1"]) {
      const r = run(["serve", "--port", "0"], { cwd: makeWorkspace(), env: { CARDS_MAX_STREAMS: bad } });
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.error).toMatchObject({ error: "usage", field: "CARDS_MAX_STREAMS", value: bad });
    }
  });
});

describe("SIGHUP", () => {
  test("stops the server like SIGTERM, and its services with it (they run in their own process groups)", async () => {
    const dir = makeWorkspace((f) => {
      f["definitions/extensions.yaml"] = JSON.stringify([{ id: "keeper", kind: "service", run: ["/bin/sh", "-c", "echo $$ > keeper.pid; exec sleep 4242"] }]);
    });
    const srv = await serve(dir);
    const pidFile = join(dir, "keeper.pid");
    for (let i = 0; i < 100 && !existsSync(pidFile); i++) await Bun.sleep(50);
    const pid = Number(readFileSync(pidFile, "utf8"));
    const alive = (p: number) => { try { process.kill(p, 0); return true; } catch { return false; } };
    expect(alive(pid)).toBe(true);
    const exited = new Promise<number | null>((r) => srv.proc.once("exit", (code) => r(code)));
    srv.proc.kill("SIGHUP");
    expect(await exited).toBe(0);
    for (let i = 0; i < 40 && alive(pid); i++) await Bun.sleep(50);
    expect(alive(pid)).toBe(false);
  });
});

describe("cards backup", () => {
  test("an online copy while a writer runs restores into a working workspace", async () => {
    const dir = makeWorkspace();
    const srv = await serve(dir);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const r = await fetch(`${srv.url}/v1/cards`, { method: "POST", body: JSON.stringify({ type_id: "task", title: `w${written}` }) });
        if (r.status === 201) written++;
      }
    })();
    await Bun.sleep(300);
    const out = join(mkdtempSync(join(tmpdir(), "cards-bk-")), "backup.db");
    const b = run(["backup", "--out", out], { cwd: dir });
    expect(b.code).toBe(0);
    expect(b.json.out).toBe(out);
    const atBackup = b.json.cards;
    // a WAL file like the original (bytes 18-19 of the header are 2 for WAL), with no WAL files beside it
    expect([...readFileSync(out).subarray(18, 20)]).toEqual([2, 2]);
    expect(existsSync(`${out}-wal`) || existsSync(`${out}-shm`)).toBe(false);
    writing = false;
    await writer;
    await srv.stop();
    expect(run(["backup", "--out", out], { cwd: dir }).code).toBe(2); // never overwrites
    const restored = makeWorkspace();
    mkdirSync(join(restored, ".cards"), { recursive: true });
    copyFileSync(out, join(restored, ".cards/cards.db"));
    const list = run(["cards", "list", "--limit", "200"], { cwd: restored });
    expect(list.code).toBe(0);
    expect(list.json.items.length).toBeGreaterThan(0);
    expect(atBackup).toBeGreaterThan(0);
    // nothing is left beside it, and a backup that cannot be made leaves no file behind
    expect(readdirSync(dirname(out))).toEqual(["backup.db"]);
    // the count is the copy's (it was the live database's, which writers had grown since)
    const inCopy = new Database(out, { readonly: true });
    expect((inCopy.query("SELECT count(*) AS n FROM cards").get() as { n: number }).n).toBe(atBackup);
    inCopy.close();
    const blocked = join(dirname(out), "sub");
    mkdirSync(blocked);
    const failed = run(["backup", "--out", join(blocked, "nope", "b.db")], { cwd: dir });
    // the caller's mistake, as for dump --out (before: 7, as if the disk had failed)
    expect([failed.code, failed.error.field]).toEqual([2, "--out"]);
    expect(readdirSync(blocked)).toEqual([]);
    const ck = spawnSync("sqlite3", [out, "PRAGMA integrity_check"], { encoding: "utf8" });
    if (ck.status === 0) expect(ck.stdout.trim()).toBe("ok");
  });
});

test("what a killed backup or dump left beside its file is removed by the next one; a running one's is kept", () => {
  const dir = makeWorkspace();
  run(["cards", "create", "--type", "task", "--title", "kept"], { cwd: dir });
  const into = mkdtempSync(join(tmpdir(), "cards-left-"));
  // a pid that is gone (the kernel's pid_max is below it) and one that runs (this process)
  const gone = 4_194_400;
  const left = [`b.db.${gone}.partial`, `b.db.${gone}.partial-journal`, `d.jsonl.${gone}.partial`, `b.db.${process.pid}.partial`, "b.db.notes"];
  for (const n of left) writeFileSync(join(into, n), "x");
  expect(run(["backup", "--out", join(into, "b.db")], { cwd: dir }).code).toBe(0);
  expect(run(["dump", "--out", join(into, "d.jsonl")], { cwd: dir }).code).toBe(0);
  // before: every killed run left a full-size file that nothing removed
  expect(readdirSync(into).sort()).toEqual(["b.db", `b.db.${process.pid}.partial`, "b.db.notes", "d.jsonl"]);
});

/** A small tmpfs to fill, when this process may mount one (root on Linux); else undefined. */
function smallDisk(mb: number): { dir: string; release(): void } | undefined {
  if (process.platform !== "linux" || process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "cards-full-"));
  if (spawnSync("mount", ["-t", "tmpfs", "-o", `size=${mb}m`, "tmpfs", dir]).status !== 0) return undefined;
  return { dir, release: () => { spawnSync("umount", [dir]); rmSync(dir, { recursive: true, force: true }); } };
}

describe("a full disk", () => {
  test("a restore that fills the disk leaves the WAL empty and the workspace writable once it fails", () => {
    const disk = smallDisk(12);
    if (!disk) return; // needs a tmpfs (root on Linux): CI runs as root
    try {
      const ws = join(disk.dir, "ws");
      expect(run(["init", ws]).code).toBe(0);
      // a dump of ~20 MB: more than the disk holds
      const one = run(["cards", "create", "--type", "task", "--title", "seed"], { cwd: ws }).json;
      const lines = run(["dump"], { cwd: ws }).stdout.trim().split("\n");
      const header = lines[0]!;
      const user = lines.filter((l) => l.includes('"record":"user"'));
      const card = JSON.parse(lines.find((l) => l.includes('"record":"card"'))!);
      const big = join(tmpdir(), `cards-big-${process.pid}.jsonl`);
      const out: string[] = [header, ...user];
      for (let i = 0; i < 8000; i++) {
        out.push(JSON.stringify({ record: "card", card: { ...card.card, id: `card_${i.toString(16).padStart(16, "0")}`, title: `t${i} ${"x".repeat(2000)}` } }));
      }
      writeFileSync(big, out.join("\n") + "\n");
      const fresh = join(disk.dir, "fresh");
      expect(run(["init", fresh]).code).toBe(0);
      const r = run(["restore", "--in", big], { cwd: fresh });
      rmSync(big, { force: true });
      expect([r.code, r.error.error]).toEqual([7, "unavailable"]);
      // before: 10 MB of rolled-back frames stayed behind committed ones, and no close could
      // copy those into the database (that needed the space the frames held): full for good
      expect(statSync(join(fresh, ".cards", "cards.db-wal")).size).toBe(0);
      expect(run(["cards", "create", "--type", "task", "--title", "after"], { cwd: fresh }).code).toBe(0);
      expect(one.id).toBeDefined();
    } finally {
      disk.release();
    }
  }, 60_000);
});

describe("bad workspace states give a clear error naming the path", () => {
  test("a corrupt or foreign database file: unavailable, the file left untouched", () => {
    const dir = makeWorkspace();
    mkdirSync(join(dir, ".cards"), { recursive: true });
    const db = join(dir, ".cards/cards.db");
    const junk = "this is not a database, it is a shopping list\n".repeat(200);
    writeFileSync(db, junk);
    const r = run(["cards", "list"], { cwd: dir });
    expect(r.code).toBe(7);
    expect(r.error.error).toBe("unavailable");
    expect(r.error.message).toContain(db);
    expect(r.error.hint).toContain("restore");
    expect(readFileSync(db, "utf8")).toBe(junk);
  });

  test("damage inside the database file: reads say so (before: a stack trace and `internal`), check finds it (before: ok)", () => {
    const dir = makeWorkspace();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(run(["cards", "create", "--type", "task", "--title", `card ${i} with a few words to fill pages`], { cwd: dir }).json.id);
    const pristine = mkdtempSync(join(tmpdir(), "cards-pristine-"));
    cpSync(dir, pristine, { recursive: true });
    // one stored value whose bytes changed: SQLite's own checks pass, its JSON does not parse
    const db = new Database(join(dir, ".cards/cards.db"));
    db.run(`UPDATE cards SET fields = '{"priority":"nor' WHERE id = ?`, [ids[3]!]);
    db.close();
    const get = run(["cards", "get", ids[3]!], { cwd: dir });
    expect([get.code, get.error.error]).toEqual([7, "unavailable"]);
    expect(get.error.message).toBe(`stored card ${ids[3]} is damaged: JSON Parse error: Unterminated string`);
    expect(get.error.hint).toContain("restore from a backup");
    expect(get.stderr).not.toContain("    at "); // no stack
    expect(run(["cards", "get", ids[4]!], { cwd: dir }).code).toBe(0); // the rest reads
    const check = run(["check"], { cwd: dir });
    expect([check.code, check.error.error]).toEqual([7, "unavailable"]);
    expect(check.stderr).toContain(`damaged: card ${ids[3]}: its stored fields or tags do not parse`);
    expect(run(["check"], { cwd: pristine }).code).toBe(0);

    // a page of the file overwritten: every command answers with the envelope
    const file = join(pristine, ".cards/cards.db");
    const bytes = readFileSync(file);
    bytes.fill(0x5a, 12288, 12288 + 64);
    writeFileSync(file, bytes);
    for (const args of [["cards", "list", "--limit", "100"], ["check"]]) {
      const r = run(args, { cwd: pristine });
      expect([args.join(" "), r.code, r.error?.error]).toEqual([args.join(" "), 7, "unavailable"]);
      expect(r.error.message).toContain("damaged");
      expect(r.stderr).not.toContain("    at ");
    }
  });

  test.each(["cards_fts_data", "docs"])("a damaged full-text index (%s) is named as the index, with the remedy (delete it, it is made again), never as the workspace database", async (table) => {
    const dir = makeWorkspace();
    for (let i = 0; i < 40; i++) run(["cards", "create", "--type", "task", "--title", `needle haystack ${i} lorem ipsum dolor sit amet`], { cwd: dir });
    expect(run(["cards", "list", "--q", "needle", "--limit", "5"], { cwd: dir }).json.items).toHaveLength(5);
    // the terms' pages, which a search with nothing new to index reads but does not write
    const index = join(dir, ".cards/search.db");
    const probe = new Database(index, { readonly: true });
    const pages = (probe.query("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'").all(table) as Array<{ pageno: number }>).map((p) => p.pageno);
    expect(pages.length).toBeGreaterThan(0);
    const pageSize = Number((probe.query("PRAGMA page_size").get() as { page_size: number }).page_size);
    probe.close();
    const bytes = readFileSync(index);
    for (const p of pages) bytes.fill(0xff, (p - 1) * pageSize, p * pageSize);
    writeFileSync(index, bytes);

    const search = run(["cards", "list", "--q", "needle"], { cwd: dir });
    expect([search.code, search.error.error]).toEqual([7, "unavailable"]);
    expect(search.error.message).toStartWith("the full-text index .cards/search.db is damaged (");
    expect(search.error.message).toEndWith("cards and events are not affected");
    expect(search.error.hint).toContain("delete .cards/search.db");
    const srv = await serve(dir);
    try {
      const res = await fetch(`${srv.url}/v1/cards?q=needle`); // the server's read thread
      expect(res.status).toBe(503);
      expect(((await res.json()) as { message: string }).message).toStartWith("the full-text index .cards/search.db is damaged (");
      expect((await fetch(`${srv.url}/v1/cards?limit=3`)).status).toBe(200);
    } finally {
      await srv.stop();
    }
    const check = run(["check"], { cwd: dir });
    expect([check.code, check.error.message]).toEqual([7, "the full-text index is damaged (above); cards and events are not affected"]);
    expect(check.stderr).toContain(`damaged: the full-text index ${index}: `);
    expect(check.error.hint).toContain("delete .cards/search.db");
    // the remedy works: deleted, the next search makes the index again and finds every card
    for (const s of ["", "-wal", "-shm"]) rmSync(index + s, { force: true });
    expect(run(["cards", "list", "--q", "needle", "--limit", "100"], { cwd: dir }).json.items).toHaveLength(40);
    expect(run(["check"], { cwd: dir }).code).toBe(0);
  });

  test("no file descriptors left: unavailable, saying to raise ulimit -n (before: EMFILE as an internal error with a stack)", () => {
    const dir = makeWorkspace();
    const seen = new Set<string>();
    for (let n = 6; n <= 14; n++) {
      const r = spawnSync("sh", ["-c", `ulimit -n ${n}; exec "$0" cards create --type task --title x`, BIN], { cwd: dir, env: cleanEnv({ CARDS_ACTOR: "ada" }), encoding: "utf8" });
      if (r.status === 0) continue;
      const err = JSON.parse(r.stderr.trim().split("\n").at(-1)!);
      expect([n, r.status, err.error]).toEqual([n, 7, "unavailable"]);
      expect(r.stderr).not.toContain("    at ");
      seen.add(err.hint.includes("ulimit -n") ? "ulimit" : err.message);
    }
    expect([...seen]).toEqual(["ulimit"]);
  });

  test("a one-shot write leaves its commit in the database file and an empty WAL kept for the next call", () => {
    const dir = makeWorkspace();
    const card = run(["cards", "create", "--type", "task", "--title", "checkpointed"], { cwd: dir }).json;
    const db = join(dir, ".cards", "cards.db");
    // kept (not deleted and re-created by every call) and empty: the commit was copied
    // into the database file when the call closed it
    expect(existsSync(`${db}-wal`)).toBe(true);
    expect(statSync(`${db}-wal`).size).toBe(0);
    expect(readFileSync(db).includes(Buffer.from(card.id))).toBe(true);
  });

  test("a missing definitions directory names the path and suggests init", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-nodefs-"));
    const r = run(["--dir", dir, "cards", "list"]);
    expect(r.code).toBe(5);
    expect(r.error.error).toBe("invalid_definitions");
    expect(JSON.stringify(r.error.problems)).toContain(join(dir, "definitions"));
    expect(JSON.stringify(r.error.problems)).toContain("cards init");
  });

  test.skipIf(!canMount)("a read-only workspace refuses writes clearly and keeps what is stored", () => {
    const dir = tmpfsWorkspace("4m")!;
    const card = run(["cards", "create", "--type", "task", "--title", "kept"], { cwd: dir }).json;
    expect(card.id).toBeString();
    expect(run(["cards", "list", "--q", "kept"], { cwd: dir }).json.items).toHaveLength(1); // builds the search index
    const later = run(["cards", "create", "--type", "task", "--title", "later"], { cwd: dir }).json; // not indexed yet
    // definitions raised before the disk turned read-only: the open that meets them cannot
    // record them, and still reads (the record is best effort)
    const reviewFile = join(dir, "definitions/card-types/review.json");
    writeFileSync(reviewFile, JSON.stringify({ ...JSON.parse(readFileSync(reviewFile, "utf8")), schema_version: 2 }, null, 2));
    expect(spawnSync("mount", ["-o", "remount,ro", dir]).status).toBe(0);
    try {
      const w = run(["cards", "create", "--type", "task", "--title", "refused"], { cwd: dir });
      expect(w.code).toBe(7);
      expect(w.error.error).toBe("unavailable");
      expect(w.error.message).toContain(dir);
      // reads still work: the WAL and its index stay beside the database between calls
      expect(run(["cards", "list"], { cwd: dir }).json.items.map((c: any) => c.title)).toEqual(["later", "kept"]);
      // and so does search, from the index file as it stands
      const found = run(["cards", "list", "--q", "kept"], { cwd: dir });
      expect(found.code).toBe(0);
      expect(found.json.items.map((c: any) => c.id)).toEqual([card.id]);
      // an index left behind cannot catch up on a read-only disk: it answers as it stands
      expect(run(["cards", "list", "--q", "later"], { cwd: dir }).code).toBe(0);
      // a dump or backup onto the read-only disk: the machine's refusal (7) naming the
      // cause, as for a full disk (before: dump said usage, exit 2; backup named a failed rm)
      for (const args of [["dump", "--out", join(dir, "d.jsonl")], ["backup", "--out", join(dir, "b.db")]]) {
        const r = run(args, { cwd: dir });
        expect([args[0], r.code, r.error.error]).toEqual([args[0], 7, "unavailable"]);
        expect(r.error.message).not.toContain(" rm ");
      }
      expect(run(["dump", "--out", join(dir, "d.jsonl")], { cwd: dir }).error.message).toContain("EROFS");
    } finally {
      spawnSync("mount", ["-o", "remount,rw", dir]);
    }
    const list = run(["cards", "list"], { cwd: dir });
    expect(list.json.items.map((c: any) => c.title)).toEqual(["later", "kept"]);
    expect(run(["cards", "list", "--q", "later"], { cwd: dir }).json.items.map((c: any) => c.id)).toEqual([later.id]);
  });

  test.skipIf(!canMount)("a workspace copied onto a read-only disk without its -shm files reads, searches and serves (before: every command, reads too, failed to open)", async () => {
    const dir = tmpfsWorkspace("4m")!;
    const card = run(["cards", "create", "--type", "task", "--title", "snapshot"], { cwd: dir }).json;
    expect(run(["cards", "list", "--q", "snapshot"], { cwd: dir }).json.items).toHaveLength(1); // builds the index
    // as a copy without them would be (the last close left both WALs empty)
    for (const f of ["cards.db-wal", "cards.db-shm", "search.db-wal", "search.db-shm"]) rmSync(join(dir, ".cards", f), { force: true });
    expect(spawnSync("mount", ["-o", "remount,ro", dir]).status).toBe(0);
    try {
      expect(run(["cards", "get", card.id], { cwd: dir }).json.title).toBe("snapshot");
      expect(run(["cards", "list", "--q", "snapshot"], { cwd: dir }).json.items.map((c: any) => c.id)).toEqual([card.id]);
      expect(run(["check"], { cwd: dir }).code).toBe(0);
      const w = run(["cards", "create", "--type", "task", "--title", "refused"], { cwd: dir });
      expect([w.code, w.error.error]).toEqual([7, "unavailable"]);
      expect(w.error.message).toContain("read-only");
      const srv = await serve(dir);
      try {
        // the server's own read thread too (a sort other than by update, and a search)
        for (const q of ["sort=title", "q=snapshot"]) {
          const res = await fetch(`${srv.url}/v1/cards?${q}`);
          expect([q, res.status]).toEqual([q, 200]);
          expect(((await res.json()) as { items: Array<{ id: string }> }).items.map((c) => c.id)).toEqual([card.id]);
        }
        // and a monitor is told it takes no writes, and why
        const health = await fetch(`${srv.url}/v1/health`);
        expect([health.status, ((await health.json()) as { message: string }).message]).toEqual([503, `${join(dir, ".cards/cards.db")} is on a read-only disk: it is read as it is, and nothing can be written`]);
      } finally {
        await srv.stop();
      }
    } finally {
      spawnSync("mount", ["-o", "remount,rw", dir]);
    }
  });

  test.skipIf(!canMount)("init on a full disk leaves nothing behind, so init works once there is space (before: an empty workspace.json that refused every command)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-tmpfs-"));
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).status).toBe(0);
    mounts.push(dir);
    spawnSync("sh", ["-c", `dd if=/dev/zero of=${join(dir, "filler")} bs=4k 2>/dev/null; sync`]);
    const ws = join(dir, "ws");
    const full = run(["init", ws]);
    expect([full.code, full.error.error, full.error.hint]).toEqual([7, "unavailable", "free disk space and run `cards init` again"]);
    expect(existsSync(ws)).toBe(false); // nor the folders it made (an empty definitions/ read as a broken workspace)
    rmSync(join(dir, "filler"));
    expect(run(["init", ws]).code).toBe(0);
    expect(run(["check"], { cwd: ws }).code).toBe(0);
  });

  test.skipIf(!canMount)("a full disk fails the write cleanly; stored cards stay intact", () => {
    const dir = tmpfsWorkspace("3m")!;
    const first = run(["cards", "create", "--type", "task", "--title", "before full"], { cwd: dir });
    expect(first.code).toBe(0);
    // fill the filesystem, leaving almost nothing
    spawnSync("sh", ["-c", `dd if=/dev/zero of=${join(dir, "filler")} bs=64k 2>/dev/null; sync`]);
    let failure: any;
    for (let i = 0; i < 40 && !failure; i++) {
      const r = run(["cards", "create", "--type", "task", "--title", `x${i}`, "--fields", JSON.stringify({ description: "d".repeat(60_000) })], { cwd: dir });
      if (r.code !== 0) failure = r;
    }
    expect(failure).toBeDefined();
    expect(failure.code).toBe(7);
    expect(failure.error.error).toBe("unavailable");
    expect(failure.error.message + failure.error.hint).toMatch(/disk|space|full/i);
    spawnSync("rm", ["-f", join(dir, "filler")]);
    const list = run(["cards", "list", "--limit", "200"], { cwd: dir });
    expect(list.code).toBe(0);
    expect(list.json.items.map((c: any) => c.title)).toContain("before full");
    expect(run(["cards", "create", "--type", "task", "--title", "after space freed"], { cwd: dir }).code).toBe(0);
  });
});

describe("binding beyond loopback", () => {
  test("needs --allow-remote, and then warns that there is no authentication", async () => {
    const dir = makeWorkspace();
    const refused = run(["serve", "--host", "0.0.0.0", "--port", "0"], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.error.message).toContain("no authentication");
    const p = spawn(BIN, ["serve", "--dir", dir, "--host", "0.0.0.0", "--port", "0", "--allow-remote"], { env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr.setEncoding("utf8").on("data", (d: string) => { err += d; });
    const end = Date.now() + 5000;
    while (!err.includes("listening on") && Date.now() < end) await Bun.sleep(50);
    p.kill("SIGTERM");
    expect(err).toContain("no authentication");
    expect(err).toContain("listening on");
  });
});
