import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CardsError, toEnvelope } from "../../src/domain/errors.ts";
import { formatProblems, loadDefinitions } from "../../src/definitions/load.ts";
import { MAX_DEFINITION_FILE_BYTES } from "../../src/definitions/read.ts";
import { BUG, BUGS, EXT, expectOnly, expectProblem, MAIN, problems, problemsAt, sample, TASK, TRIAGE, W, writeWorkspace } from "./helpers.ts";

describe("missing files", () => {
  test("no definitions directory: one problem naming the path and cards init", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-empty-"));
    const p = expectOnly(await problemsAt(dir), { file: "definitions", path: "", message: "no definitions directory" });
    expect(p.message).toContain(join(dir, "definitions"));
    expect(p.message).toContain("cards init");
  });

  test("no workspace.json: a problem suggesting cards init", async () => {
    const list = await problems((f) => { f[W] = undefined; });
    expectProblem(list, { file: W, path: "", message: /workspace\.json is missing.*cards init/ });
  });

  test("no workspace.json does not flood column errors for every board and type", async () => {
    const list = await problems((f) => { f[W] = undefined; });
    expect(list.filter((p) => /column/.test(p.message))).toEqual([]);
  });
});

describe("syntax errors", () => {
  test("malformed JSON names the file, line:col and the parser message", async () => {
    const list = await problems((f) => { f[MAIN] = '{\n  "id": "main",\n  "name": "Main",\n}\n'; });
    const p = expectOnly(list, { file: MAIN, path: "", message: "invalid JSON at 4:1" });
    expect(p.message).toContain("trailing comma");
  });

  test("a broken card type file is reported once; references to it are not", async () => {
    const list = await problems((f) => { f[BUG] = "{ nope"; });
    expectOnly(list, { file: BUG, path: "", message: "invalid JSON at 1:3" });
  });

  test("YAML syntax errors carry line:col", async () => {
    const list = await problems((f) => { f[EXT] = "- id: x\n  kind: hook\n  run: [cat\n- b: : c\n"; });
    expectProblem(list, { file: EXT, path: "", message: /^invalid YAML at 4:\d+: / });
    expect(list.every((p) => p.file === EXT && /^invalid YAML at \d+:\d+: /.test(p.message))).toBe(true);
  });

  test("a YAML alias bomb is a problem of the file, not a crash", async () => {
    const levels = Array.from({ length: 10 }, (_, i) => (i === 0 ? 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]' : `a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(",")}]`));
    const list = await problems((f) => { f[EXT] = `${levels.join("\n")}\n`; });
    expectOnly(list, { file: EXT, path: "", message: /^invalid YAML: .*aliases may expand at most 100 times/ });
  });

  test("values nested past 64 levels are a problem of the file, not a stack overflow", async () => {
    const deep = (n: number): string => "[".repeat(n) + "]".repeat(n);
    const json = await problems((f) => { f[TASK] = `{"id":"task","name":"T","schema_version":1,"fields":[{"id":"x","type":"text","default":${deep(200_000)}}]}`; });
    expectOnly(json, { file: TASK, path: "", message: "invalid JSON: values are nested more than 64 levels deep" });
    const broken = await problems((f) => { f[TASK] = `{"a":${"[".repeat(200_000)}`; });
    expectOnly(broken, { file: TASK, path: "", message: "nested more than 64 levels deep" });
    const yaml = await problems((f) => { f[EXT] = `- ${"[".repeat(100)}${"]".repeat(100)}\n`; });
    expectOnly(yaml, { file: EXT, path: "", message: "invalid YAML: values are nested more than 64 levels deep" });
  });

  test("duplicate YAML keys are an error with line:col", async () => {
    const list = await problems((f) => { f[EXT] = "- id: x\n  kind: hook\n  kind: run\n  run: [cat]\n"; });
    expectOnly(list, { file: EXT, path: "", message: /^invalid YAML at 3:3: Map keys must be unique/ });
  });

  test("a key repeated in one JSON object is an error with line:col (JSON.parse would keep the last silently)", async () => {
    const list = await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS], null, 2).replace(/\n}$/, ',\n  "wip_limits": {}\n}'); });
    const p = expectOnly(list, { file: BUGS, path: "", message: 'duplicate key "wip_limits"' });
    expect(p.message).toMatch(/^invalid JSON at \d+:3: /);
    // the same key in two objects is fine
    expect(await problems((f) => { f[BUGS].presentation.filters = { a: { status: "todo" }, b: { status: "doing" } }; })).toEqual([]);
  });

  test("an unpaired UTF-16 surrogate escape is an error, in JSON and YAML; a pair is fine", async () => {
    const json = await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS]).replace('"Bug triage"', '"Bug \\ud800 triage"'); });
    expectOnly(json, { file: BUGS, path: "", message: "unpaired UTF-16 surrogate \\ud800" });
    const low = await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS]).replace('"Bug triage"', '"Bug \\udc00 triage"'); });
    expectOnly(low, { file: BUGS, path: "", message: "unpaired UTF-16 surrogate \\udc00" });
    expect(await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS]).replace('"Bug triage"', '"Bug \\ud83d\\ude80 triage"'); })).toEqual([]);
    const yaml = await problems((f) => { f[EXT] = '- id: x\n  kind: hook\n  on: ["card_created"]\n  run: ["echo", "\\ud800"]\n'; });
    expectOnly(yaml, { file: EXT, path: "", message: "unpaired UTF-16 surrogate at [0].run[1]" });
  });

  test("control characters in a string (escape, NUL, C1) are an error with line:col, in JSON and YAML; tab and line breaks are fine", async () => {
    for (const bad of ["\\u001b]0;pwned\\u0007", "\\u0000", "\\b", "\u009b2J"]) {
      const json = await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS]).replace('"Bug triage"', `"Bug ${bad} triage"`); });
      const p = expectOnly(json, { file: BUGS, path: "", message: /^invalid JSON at 1:\d+: control character U\+00[0-9A-F]{2} inside a string/ });
      expect(p.message).toContain("tab and line breaks aside");
    }
    expect(await problems((f) => { f[BUGS] = JSON.stringify(f[BUGS]).replace('"Bug triage"', '"Bug\\ttriage\\nboard"'); })).toEqual([]);
    const yaml = await problems((f) => { f[EXT] = '- id: x\n  kind: hook\n  on: ["card_created"]\n  run: ["echo", "\\e[2J"]\n'; });
    expectOnly(yaml, { file: EXT, path: "", message: "invalid YAML: control character U+001B inside a string: definitions are text people read in terminals and on the board (tab and line breaks aside) at [0].run[1]" });
  });

  test("a number past the largest (1e309, YAML's .inf) is an error, not a bound of null that refuses every value", async () => {
    const json = await problems((f) => { f[TASK] = JSON.stringify(f[TASK]).replace(/"max":\s*\d+/, '"max":1e309'); });
    expectOnly(json, { file: TASK, path: "", message: /^invalid JSON at 1:\d+: 1e309 is past the largest number/ });
    const yaml = await problems((f) => { f[EXT] = "- id: x\n  kind: hook\n  on: [card_created]\n  run: [cat]\n  timeout: .inf\n"; });
    expectOnly(yaml, { file: EXT, path: "", message: "invalid YAML: Infinity is not a finite number at [0].timeout" });
  });

  test("a file that is not UTF-8 (Latin-1) is not read, naming the line, instead of loading U+FFFD in place of its letters", async () => {
    const dir = writeWorkspace(sample());
    const text = readFileSync(join(dir, TASK), "utf8").replace('"name": "Task"', '"name": "T\u00e2che"');
    expect(text).toContain("T\u00e2che");
    writeFileSync(join(dir, TASK), Buffer.from(text, "latin1"));
    const list = await problemsAt(dir);
    const p = expectProblem(list, { file: TASK, path: "", message: /^not read: not UTF-8 text \(first bad byte on line \d+\); save the file as UTF-8$/ });
    expect(p.message).toContain(`line ${text.slice(0, text.indexOf("T\u00e2che")).split("\n").length}`);
  });

  test("a file name holding an escape sequence is printed escaped by cards check", async () => {
    const list = await problems((f) => { f["definitions/card-types/\u001b[7mrev.json"] = { ...f[BUG], id: "rev" }; });
    const text = formatProblems(list);
    expect(text).toContain("\\u001b[7mrev.json");
    expect(text).not.toContain("\u001b");
  });

  test("an empty JSON file says it is empty; a tab in YAML indentation is named once, not as a cascade of parser errors", async () => {
    const list = await problems((f) => {
      f[TRIAGE] = "";
      f[EXT] = "- id: notify\n\tkind: hook\n  on: [card_created]\n  run: [\"true\"]\n";
    });
    expectProblem(list, { file: TRIAGE, path: "", message: "the file is empty: a definition file holds one JSON object" });
    const yaml = list.filter((p) => p.file === EXT);
    expect(yaml[0]!.message).toBe("invalid YAML at 2:1: line 2 is indented with a tab; YAML indents with spaces only");
    expect(yaml.length).toBeLessThanOrEqual(2);
  });

  test("a tab inside a block scalar's text is not blamed for an error elsewhere in the file", async () => {
    const list = await problems((f) => {
      f[EXT] = "- id: notify\n  kind: hook\n  description: |\n    a\n    \tindented by a tab in the text\n  on: [card_created]\n  run: [\"true\"]\n  run: [\"again\"]\n";
    });
    const yaml = list.filter((p) => p.file === EXT).map((p) => p.message);
    expect(yaml.length).toBeGreaterThan(0);
    expect(yaml.some((m) => m.includes("indented with a tab"))).toBe(false);
  });

  test("a blank line holding only a tab is not blamed: the parser's own error is shown", async () => {
    const list = await problems((f) => { f[EXT] = "- id: a\n  kind: hook\n  \t\n  kind: run\n"; });
    const yaml = list.filter((p) => p.file === EXT).map((p) => p.message);
    expect(yaml.some((m) => m.includes("unique"))).toBe(true);
    expect(yaml.some((m) => m.includes("indented with a tab"))).toBe(false);
  });

  test("extensions must be a list", async () => {
    const list = await problems((f) => { f[EXT] = "id: x\nkind: hook\n"; });
    expectOnly(list, { file: EXT, path: "", message: "must be a list ([...]), got an object" });
  });

  test("extensions.yaml and extensions.json together are an error", async () => {
    const list = await problems((f) => { f["definitions/extensions.json"] = []; });
    expectOnly(list, { file: "definitions/extensions.json", path: "", message: "both extensions.yaml and extensions.json exist" });
  });
});

describe("files the loader would skip", () => {
  test("extensions.yml, an upper-case .JSON, a YAML board and a folder named *.json are problems, beside the others", async () => {
    const list = await problems((f) => {
      f["definitions/extensions.yml"] = f[EXT];
      f["definitions/boards/BUGS.JSON"] = f[MAIN];
      f["definitions/boards/extra.yaml"] = "id: extra\n";
      f["definitions/card-types/epic.json/notes.txt"] = "x";
      f["definitions/README.md"] = "notes"; // not a near miss: ignored
      f[TASK].icon = "zz";
    });
    expectProblem(list, { file: "definitions/extensions.yml", path: "", message: "not read: the extensions file is extensions.yaml" });
    expectProblem(list, { file: "definitions/boards/BUGS.JSON", path: "", message: "rename it to BUGS.json" });
    expectProblem(list, { file: "definitions/boards/extra.yaml", path: "", message: "boards files are JSON" });
    expectProblem(list, { file: "definitions/card-types/epic.json", path: "", message: "a folder, not a JSON file" });
    expectProblem(list, { file: TASK, path: "icon", message: "zz" });
    expect(list).toHaveLength(5);
  });

  test("a folder misnamed or misplaced (card_types/, board/, a sub-folder) is a problem, with the folder meant; before, its types and boards vanished with ok", async () => {
    const list = await problems((f) => {
      f["definitions/card_types/spike.json"] = { ...f[TASK], id: "spike" };
      f["definitions/Boards/extra.json"] = { ...f[MAIN], id: "extra" };
      f["definitions/templates/x.json"] = {};
      f["definitions/views/old/triage.json"] = f[TRIAGE];
      f["definitions/board.json"] = f[MAIN];
      f["definitions/notes.txt"] = "kept beside the definitions: ignored";
    });
    expectProblem(list, { file: "definitions/card_types", path: "", message: "not read: a folder definitions/ does not read (did you mean card-types/?)" });
    expectProblem(list, { file: "definitions/Boards", path: "", message: "(did you mean boards/?)" });
    expectProblem(list, { file: "definitions/templates", path: "", message: "its folders are card-types, boards, views" });
    expect(list.find((p) => p.file === "definitions/templates")!.message).not.toContain("did you mean");
    expectProblem(list, { file: "definitions/views/old", path: "", message: "not read from sub-folders; move its files up into views/" });
    expectProblem(list, { file: "definitions/board.json", path: "", message: "a board in boards/<id>.json" });
    expect(list).toHaveLength(5);
  });

  test("a file where a folder belongs, and a folder where workspace.json belongs, are named as such", async () => {
    const dir = writeWorkspace(sample());
    const { rmSync, mkdirSync } = await import("node:fs");
    rmSync(join(dir, "definitions/views"), { recursive: true });
    writeFileSync(join(dir, "definitions/views"), "{}");
    rmSync(join(dir, "definitions/workspace.json"));
    mkdirSync(join(dir, "definitions/workspace.json"));
    const list = await problemsAt(dir);
    expectProblem(list, { file: "definitions/views", path: "", message: "not read: a file; views is the folder its definitions go in" });
    expectProblem(list, { file: "definitions/workspace.json", path: "", message: "not read: a folder, not a file" });
  });

  test("an unknown key says which allowed key it nearly is", async () => {
    const list = await problems((f) => {
      f[W].settings.tag_polcy = "open";
      f[TASK].searchable_field = ["title"];
      f[TASK].colour = "red";
    });
    expectProblem(list, { file: W, path: "settings.tag_polcy", message: 'unknown key "tag_polcy" (did you mean tag_policy?); allowed keys:' });
    expectProblem(list, { file: TASK, path: "searchable_field", message: 'unknown key "searchable_field" (did you mean searchable_fields?)' });
    // nothing near: no guess
    expectProblem(list, { file: TASK, path: "colour", message: 'unknown key "colour"; allowed keys:' });
  });

  test("a symbolic link to nothing is a problem, not a board or hook silently not loaded", async () => {
    const dir = writeWorkspace(sample());
    symlinkSync("/nonexistent/ghost.json", join(dir, "definitions/boards/ghost.json"));
    symlinkSync(join(dir, "definitions/boards/main.json"), join(dir, "definitions/boards/alias.json"));
    const list = await problemsAt(dir);
    expectProblem(list, { file: "definitions/boards/ghost.json", path: "", message: "a symbolic link to a file that does not exist" });
    // a link that resolves is read like a file (here: a second board with main's id)
    expect(list.some((p) => p.file === "definitions/boards/alias.json")).toBe(true);
  });

  test("a named pipe, a link to a device and an oversized file are problems, not read (before: a pipe blocked the thread for good, /dev/zero ran out of memory)", async () => {
    const dir = writeWorkspace(sample());
    Bun.spawnSync(["mkfifo", join(dir, "definitions/boards/pipe.json")]);
    symlinkSync("/dev/zero", join(dir, "definitions/card-types/zero.json"));
    writeFileSync(join(dir, "definitions/boards/huge.json"), Buffer.alloc(MAX_DEFINITION_FILE_BYTES + 1, 32));
    const list = await problemsAt(dir);
    expectProblem(list, { file: "definitions/boards/pipe.json", path: "", message: "not read: not a regular file" });
    expectProblem(list, { file: "definitions/card-types/zero.json", path: "", message: "not read: not a regular file" });
    expectProblem(list, { file: "definitions/boards/huge.json", path: "", message: "a definition file holds at most" });
    expect(list).toHaveLength(3);
  });

  test("the cached path reports them too (cards check and an open agree)", async () => {
    const f = sample();
    f["definitions/extensions.yml"] = f[EXT];
    const dir = writeWorkspace(f);
    const { openService } = await import("../../src/platform/open.ts");
    const err = await openService({ dir, cwd: dir, env: {}, mode: "embedded" }).then(() => undefined, (e) => toEnvelope(e));
    expect(err?.error).toBe("invalid_definitions");
    expect(JSON.stringify(err)).toContain("extensions.yml");
  });
});

describe("file name and id", () => {
  test("a card type's id must match its file name", async () => {
    const list = await problems((f) => { f[TASK].id = "chore"; });
    expectProblem(list, { file: TASK, path: "id", message: 'id "chore" does not match the file name "task.json"' });
  });

  test("a board's id must match its file name", async () => {
    const list = await problems((f) => { f[MAIN].id = "primary"; });
    expectProblem(list, { file: MAIN, path: "id", message: 'does not match the file name "main.json"' });
  });

  test("a view's id must match its file name", async () => {
    const list = await problems((f) => { f[TRIAGE].id = "inbox"; });
    expectOnly(list, { file: TRIAGE, path: "id", message: 'does not match the file name "triage.json"' });
  });

  test("a missing id is reported as a missing key", async () => {
    const list = await problems((f) => { delete f[TRIAGE].id; });
    expectOnly(list, { file: TRIAGE, path: "id", message: 'required key "id" is missing' });
  });
});

describe("the invalid_definitions error", () => {
  test("one CardsError with code, count, first problem and every problem", async () => {
    const f = sample();
    f[W].settings.tag_policy = "propose";
    f[MAIN].wip_limits.nowhere = 1;
    const dir = writeWorkspace(f);
    const err = await loadDefinitions(dir).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(CardsError);
    const e = err as CardsError;
    expect(e.code).toBe("invalid_definitions");
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/^2 problems in definitions: definitions\/workspace\.json: settings\.tag_policy: tag_policy "propose" was removed/);
    expect(e.message).toContain("(and 1 more)");
    expect(e.extra.problems).toHaveLength(2);
    expect(toEnvelope(e).problems).toHaveLength(2);
  });

  test("problems are grouped by file", async () => {
    const list = await problems((f) => {
      f[MAIN].wip_limits.nowhere = 1;
      f[W].colour = "blue";
      f[MAIN].colour = "blue";
    });
    expect(list.map((p) => p.file)).toEqual([W, MAIN, MAIN]);
  });

  test("formatProblems: one line per problem with file, path, message and valid options", () => {
    const text = formatProblems([
      { file: W, path: "settings.tag_policy", message: "bad", valid_options: ["open", "locked"] },
      { file: MAIN, path: "", message: "invalid JSON at 1:1: x" },
    ]);
    expect(text).toBe([
      "2 problems in definitions:",
      "  definitions/workspace.json: settings.tag_policy: bad (valid options: open, locked)",
      "  definitions/boards/main.json: invalid JSON at 1:1: x",
    ].join("\n"));
    expect(formatProblems([])).toBe("definitions are valid");
  });
});
