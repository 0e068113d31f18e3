/** The definitions cache: used only while the files are unchanged; never hides a new problem. */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadDefinitionsCached, RACY_MS, type DefinitionsCacheIo } from "../../src/definitions/cache.ts";
import { hash128 } from "../../src/domain/hash.ts";
import { fileStamp, pathExists } from "../../src/platform/files.ts";
import { makeWorkspace, openTestService } from "../helpers/workspace.ts";

/** A cache row kept in memory; `later` pretends the files were written long ago. */
function memoryIo(later = true): DefinitionsCacheIo & { row?: string; writes: number } {
  const io = {
    row: undefined as string | undefined,
    writes: 0,
    stamp: fileStamp,
    read: () => io.row,
    write: (t: string) => { io.row = t; io.writes++; },
    now: () => Date.now() + (later ? 10 * RACY_MS : 0),
  };
  return io;
}

/** Puts a marker into the cached set, so a load that used the row is visible. */
function mark(io: { row?: string }, name: string): void {
  const row = JSON.parse(io.row!);
  row.defs.workspace.name = name;
  io.row = JSON.stringify(row);
}

describe("definitions cache", () => {
  test("the first load validates and stores the set; the next one uses it without reading a file", async () => {
    const dir = makeWorkspace();
    const io = memoryIo();
    const a = await loadDefinitionsCached(dir, io);
    expect(io.writes).toBe(1);
    expect(JSON.parse(io.row!).stamps).toBeDefined();
    mark(io, "from the cache");
    const b = await loadDefinitionsCached(dir, io);
    expect(b.workspace.name).toBe("from the cache");
    expect(b.cardTypes.get("task")).toEqual(a.cardTypes.get("task")!);
    expect([...b.boards.keys()]).toEqual([...a.boards.keys()]);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(io.writes).toBe(1);
  });

  test("a cached set parses its card types, boards, views and extensions only when first used", async () => {
    const dir = makeWorkspace();
    const io = memoryIo();
    const a = await loadDefinitionsCached(dir, io);
    const row = JSON.parse(io.row!);
    row.rest = "{not json}"; // a load that parsed it now would throw
    io.row = JSON.stringify(row);
    const b = await loadDefinitionsCached(dir, io);
    expect(b.workspace.id).toBe(a.workspace.id);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(() => b.cardTypes).toThrow(expect.objectContaining({ code: "unavailable" }));
    row.rest = '{"cardTypes":[["task"'; // cut short: refused, the files are read again
    io.row = JSON.stringify(row);
    expect((await loadDefinitionsCached(dir, io)).cardTypes.get("task")).toEqual(a.cardTypes.get("task")!);
    row.rest = JSON.stringify({ cardTypes: [...a.cardTypes], boards: [], views: [], extensions: [] });
    io.row = JSON.stringify(row);
    const c = await loadDefinitionsCached(dir, io);
    expect(c.cardTypes.get("task")).toEqual(a.cardTypes.get("task")!);
    expect(c.boards.size).toBe(0); // from the row, not the files
  });

  test("a changed definition file is validated again, and its problems are reported", async () => {
    const dir = makeWorkspace();
    const io = memoryIo();
    await loadDefinitionsCached(dir, io);
    const file = join(dir, "definitions/boards/main.json");
    const board = JSON.parse(readFileSync(file, "utf8"));
    board.columns.push("nowhere");
    writeFileSync(file, JSON.stringify(board));
    await expect(loadDefinitionsCached(dir, io)).rejects.toMatchObject({ code: "invalid_definitions" });
  });

  test("a file added to a definitions folder is seen (the folder's stamp changes)", async () => {
    const dir = makeWorkspace();
    const io = memoryIo();
    await loadDefinitionsCached(dir, io);
    const task = JSON.parse(readFileSync(join(dir, "definitions/card-types/task.json"), "utf8"));
    writeFileSync(join(dir, "definitions/card-types/chore.json"), JSON.stringify({ ...task, id: "chore", name: "Chore" }));
    // the folder must look changed even if the clock did not move: back-date its old stamp
    const row = JSON.parse(io.row!);
    row.stamps["definitions/card-types"] = "0:0";
    io.row = JSON.stringify(row);
    const defs = await loadDefinitionsCached(dir, io);
    expect(defs.cardTypes.has("chore")).toBe(true);
  });

  test("stamps of freshly written files are not trusted: an edit with the same size and mtime is still seen", async () => {
    const dir = makeWorkspace();
    const io = memoryIo(false);
    await loadDefinitionsCached(dir, io);
    expect(JSON.parse(io.row!).stamps).toBeUndefined();
    const file = join(dir, "definitions/workspace.json");
    const before = statSync(file);
    const text = readFileSync(file, "utf8");
    const edited = text.replace(/"name": "([^"]*)"/, (_m, n: string) => `"name": "${n.slice(0, -1)}X"`);
    expect(edited.length).toBe(text.length);
    writeFileSync(file, edited);
    utimesSync(file, before.atime, before.mtime);
    const defs = await loadDefinitionsCached(dir, io);
    expect(defs.workspace.name.endsWith("X")).toBe(true);
  });

  test("an unreadable or foreign row is ignored", async () => {
    const dir = makeWorkspace();
    const io = memoryIo();
    io.row = "{garbage";
    expect((await loadDefinitionsCached(dir, io)).workspace.id).toBe("agent-queue");
    io.row = JSON.stringify({ key: "0:old", fingerprint: "x", defs: {} });
    expect((await loadDefinitionsCached(dir, io)).workspace.id).toBe("agent-queue");
  });

  test("a read-only store (the row cannot be written) still loads", async () => {
    const dir = makeWorkspace();
    const io = { ...memoryIo(), write: () => { throw new Error("readonly"); } };
    expect((await loadDefinitionsCached(dir, io)).workspace.id).toBe("agent-queue");
  });

  test("opening a workspace keeps the row in its database, and a root without definitions creates no file", async () => {
    const dir = makeWorkspace();
    const svc = await openTestService(dir, "embedded");
    expect(svc.store.readMeta("definitions_cache")).toContain("agent-queue");
    svc.close();
    const empty = makeWorkspace((files) => { for (const k of Object.keys(files)) delete files[k]; });
    await expect(openTestService(empty, "embedded")).rejects.toMatchObject({ code: "invalid_definitions" });
    expect(pathExists(join(empty, ".cards"))).toBe(false);
  });
});

describe("hash128", () => {
  test("32 hex chars, stable, sensitive to every character", () => {
    expect(hash128("abc")).toMatch(/^[0-9a-f]{32}$/);
    expect(hash128("abc")).toBe(hash128("abc"));
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) seen.add(hash128(`{"title":"card ${i}"}`));
    expect(seen.size).toBe(5000);
    expect(hash128("ab")).not.toBe(hash128("ba"));
    expect(hash128("")).not.toBe(hash128("\0"));
  });
});

describe("definitions cache writes", () => {
  test("while files are racy, an unchanged set is not written again on every call", async () => {
    const dir = makeWorkspace();
    const io = memoryIo(false);
    await loadDefinitionsCached(dir, io);
    await loadDefinitionsCached(dir, io);
    await loadDefinitionsCached(dir, io);
    expect(io.writes).toBe(1);
  });
});
