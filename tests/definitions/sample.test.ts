import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FIELD_TYPES } from "../../src/domain/types.ts";
import { definitionsFingerprint, loadDefinitions, parseDefinitions } from "../../src/definitions/load.ts";
import { sampleFiles } from "../../src/definitions/sample.ts";
import { BUGS, EXT, MAIN, problems, problemsAt, sample, TRIAGE, W, writeWorkspace } from "./helpers.ts";

const REPO = join(import.meta.dir, "../..");

describe("the sample workspace", () => {
  test("the repository's definitions/ load with no problems", async () => {
    expect(await problemsAt(REPO)).toEqual([]);
  });

  test("sampleFiles() written into a fresh directory (cards init) loads", async () => {
    const dir = writeWorkspace(sampleFiles());
    const defs = await loadDefinitions(dir);
    expect(defs.workspace.id).toBe("agent-queue");
    expect([...defs.cardTypes.keys()]).toEqual(["bug", "review", "task"]);
    expect([...defs.boards.keys()]).toEqual(["bugs", "main"]);
    expect([...defs.views.keys()]).toEqual(["triage"]);
    expect(defs.extensions.map((e) => e.id)).toEqual(["done-example"]);
    expect(defs.extensions[0]?.run).toEqual(["cat"]);
    expect(defs.defaultBoardId).toBe("main");
  });

  test("sampleFiles() are the repository files byte for byte", async () => {
    const { readFileSync } = await import("node:fs");
    for (const [rel, text] of Object.entries(sampleFiles())) expect(readFileSync(join(REPO, rel), "utf8")).toBe(text);
  });

  test("between them the sample card types use all ten field types, both artifact policies and multiple enum and user", async () => {
    const defs = await loadDefinitions(REPO);
    const all = [...defs.cardTypes.values()].flatMap((t) => t.fields.flatMap((f) => [f, ...(f.item_fields ?? [])]));
    expect(new Set(all.map((f) => f.type))).toEqual(new Set(FIELD_TYPES));
    expect(new Set(all.filter((f) => f.type === "artifact").map((f) => f.artifact_policy))).toEqual(new Set(["local", "uri"]));
    expect(all.some((f) => f.type === "enum" && f.multiple)).toBe(true);
    expect(all.some((f) => f.type === "user" && f.multiple)).toBe(true);
    expect(defs.cardTypes.get("task")?.schema_version).toBe(2);
    expect(defs.cardTypes.get("task")?.migrations?.["2"]?.from).toBe(1);
  });
});

describe("Definitions result", () => {
  test("settings defaults are applied when settings are left out", async () => {
    const f = sample();
    delete f[W].settings;
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.workspace.settings).toEqual({ enforce_transitions: false, strict_fields: true, tag_policy: "locked" });
  });

  test("partial settings get the remaining defaults", async () => {
    const f = sample();
    f[W].settings = { strict_fields: false };
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.workspace.settings).toEqual({ enforce_transitions: false, strict_fields: false, tag_policy: "locked" });
  });

  test("tag_set and link_types default to empty lists", async () => {
    const f = sample();
    delete f[W].tag_set;
    delete f[W].link_types;
    for (const t of Object.keys(f).filter((k) => k.includes("card-types/"))) {
      f[t].fields = f[t].fields.filter((x: any) => x.type !== "card_link" && x.type !== "tags");
    }
    f[MAIN].presentation.card_preview.bug = ["severity"];
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.workspace.tag_set).toEqual([]);
    expect(defs.workspace.link_types).toEqual([]);
  });

  test("view methods default to [GET]", async () => {
    const f = sample();
    delete f[TRIAGE].methods;
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.views.get("triage")?.methods).toEqual(["GET"]);
  });

  test("schema_version defaults to 1", async () => {
    const f = sample();
    delete f["definitions/card-types/bug.json"].schema_version;
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.cardTypes.get("bug")?.schema_version).toBe(1);
  });

  test("defaultBoardId: settings.default_board, else the alphabetically first board, else undefined", async () => {
    const f = sample();
    expect((await loadDefinitions(writeWorkspace(f))).defaultBoardId).toBe("main");
    delete f[W].settings.default_board;
    expect((await loadDefinitions(writeWorkspace(f))).defaultBoardId).toBe("bugs");
    f[BUGS] = undefined;
    f[MAIN] = undefined;
    f[TRIAGE] = undefined;
    const none = await loadDefinitions(writeWorkspace(f));
    expect(none.boards.size).toBe(0);
    expect(none.defaultBoardId).toBeUndefined();
    expect("defaultBoardId" in none).toBe(false);
  });

  test("no extensions file means no extensions; an all-comment YAML file too", async () => {
    const f = sample();
    f[EXT] = undefined;
    expect((await loadDefinitions(writeWorkspace(f))).extensions).toEqual([]);
    f[EXT] = "# nothing here yet\n";
    expect((await loadDefinitions(writeWorkspace(f))).extensions).toEqual([]);
  });

  test("extensions.json is accepted instead of extensions.yaml", async () => {
    const f = sample();
    f[EXT] = undefined;
    f["definitions/extensions.json"] = [{ id: "svc", kind: "service", run: ["./svc"], autostart: true, restart_policy: "always" }];
    const defs = await loadDefinitions(writeWorkspace(f));
    expect(defs.extensions).toEqual([{ id: "svc", kind: "service", run: ["./svc"], autostart: true, restart_policy: "always" }]);
  });

  test("fingerprint: 128-bit hex, stable for the same files, different when any file changes", async () => {
    const a = await loadDefinitions(writeWorkspace(sample()));
    const b = await loadDefinitions(writeWorkspace(sample()));
    expect(a.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(b.fingerprint).toBe(a.fingerprint);
    const f = sample();
    f[BUGS].name = "Bugs!";
    const dir = writeWorkspace(f);
    const c = await loadDefinitions(dir);
    expect(c.fingerprint).not.toBe(a.fingerprint);
    expect(await definitionsFingerprint(dir)).toBe(c.fingerprint);
  });

  test("files other than *.json in the definition folders are ignored", async () => {
    const f = sample();
    f["definitions/boards/README.md"] = "# boards\n";
    f["definitions/boards/.draft.json"] = "{ not json";
    expect(await problems((x) => Object.assign(x, f))).toEqual([]);
  });

  test("parseDefinitions validates an in-memory file set", () => {
    const defs = parseDefinitions(sampleFiles());
    expect(defs.boards.get("main")?.wip_limits).toEqual({ doing: 3, review: 2 });
  });
});
