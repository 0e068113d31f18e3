/** The definitions cache: used only while the files are unchanged; never hides a new problem. */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cachePath, loadDefinitionsCached } from "../../src/definitions/cache.ts";
import { hash128 } from "../../src/domain/hash.ts";
import { makeWorkspace } from "../helpers/workspace.ts";

describe("definitions cache", () => {
  test("the first load validates and writes the cache; the next one reads it", async () => {
    const dir = makeWorkspace();
    const a = await loadDefinitionsCached(dir);
    expect(existsSync(cachePath(dir))).toBe(true);
    const b = await loadDefinitionsCached(dir);
    expect(b.cardTypes.get("task")).toEqual(a.cardTypes.get("task")!);
    expect([...b.boards.keys()]).toEqual([...a.boards.keys()]);
    expect(b.fingerprint).toBe(a.fingerprint);
  });

  test("a changed definition file is validated again, and its problems are reported", async () => {
    const dir = makeWorkspace();
    await loadDefinitionsCached(dir);
    const file = join(dir, "definitions/boards/main.json");
    const board = JSON.parse(readFileSync(file, "utf8"));
    board.columns.push("nowhere");
    writeFileSync(file, JSON.stringify(board));
    await expect(loadDefinitionsCached(dir)).rejects.toMatchObject({ code: "invalid_definitions" });
  });

  test("a corrupt cache file is ignored", async () => {
    const dir = makeWorkspace();
    await loadDefinitionsCached(dir);
    writeFileSync(cachePath(dir), "{garbage");
    expect((await loadDefinitionsCached(dir)).workspace.id).toBe("agent-queue");
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
