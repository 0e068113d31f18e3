/** The compiled binary end to end: help, init/check, card commands, exit codes, stdin, remote parity. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync, readFileSync, rmSync, copyFileSync, chmodSync, existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { Database } from "bun:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertBinary, cleanEnv, run, serve, type Server } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";

let ws: string;
beforeAll(() => {
  assertBinary();
  ws = makeWorkspace();
});

describe("process interface", () => {
  test("--version prints the package version", () => {
    const r = run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(import.meta.dir, "../../package.json"), "utf8")).version);
  });

  test("--help lists every command, without colour when piped", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    for (const cmd of ["init", "check", "serve", "workspace", "boards", "users", "cards", "events", "breaches", "api"]) expect(r.stdout).toContain(cmd);
    expect(r.stdout).not.toContain("\u001b[");
    // no padding past the text: in 80 columns each padded row wrapped into a blank line
    expect(r.stdout.split("\n").filter((l) => /\s$/.test(l))).toEqual([]);
  });

  test("what scripts trip over: an empty ID, stdin as - or @-, a URL without a scheme, events --actor", () => {
    const dir = makeWorkspace();
    const empty = run(["cards", "get", ""], { cwd: dir });
    expect([empty.code, empty.error.error, empty.error.message]).toEqual([2, "usage", "ID is empty"]);
    const created = run(["cards", "create", "--data", "-"], { cwd: dir, input: '{"type_id":"task","title":"from stdin"}' });
    expect([created.code, created.json.title]).toEqual([0, "from stdin"]);
    const entry = run(["cards", "entries", "append", created.json.id, "evidence", "@-", "--version", "1"], { cwd: dir, input: '{"note":"piped"}' });
    expect([entry.code, entry.json.card.fields.evidence[0].note]).toEqual([0, "piped"]);
    const badEntry = run(["cards", "entries", "append", created.json.id, "evidence", "{nope", "--version", "2"], { cwd: dir });
    expect(badEntry.error.message).toStartWith("ENTRY is not valid JSON");
    const url = run(["cards", "list"], { cwd: dir, env: { CARDS_URL: "127.0.0.1:4777" } });
    expect([url.code, url.error.error, url.error.field, url.error.hint]).toEqual([2, "usage", "CARDS_URL", "for example CARDS_URL=http://127.0.0.1:4777"]);
    // --actor on events filters the feed (a read acts as no one)
    run(["cards", "create", "--type", "task", "--title", "by agent-1", "--actor", "agent-1"], { cwd: dir });
    const mine = run(["events", "--actor", "agent-1"], { cwd: dir });
    expect(mine.json.items.length).toBeGreaterThan(0);
    expect(new Set(mine.json.items.map((e: any) => e.actor))).toEqual(new Set(["agent-1"]));
    const board = run(["cards", "list", "--board", "nope"], { cwd: dir });
    expect([board.code, board.error.valid_options]).toEqual([3, ["bugs", "main"]]);
  });

  test("a .env or bunfig.toml in the working directory changes nothing (the runtime's autoload is off)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-dotenv-"));
    try {
      writeFileSync(join(dir, ".env"), "CARDS_ACTOR=mallory\nCARDS_URL=http://127.0.0.1:1\n");
      writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./nope.ts"]\n');
      const r = run(["--dir", ws, "cards", "create", "--type", "task", "--title", "who wrote me"], { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.json.created_by).toBe("ada"); // settings.default_user, not the .env actor; embedded, not the .env URL
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("each command has --help with its full path", () => {
    const r = run(["cards", "take-next", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("cards cards take-next");
    expect(r.stdout).toContain("--filter");
    // the global flags show under every command's help
    for (const g of ["--dir=<dir>", "--url=<url>", "--actor=<actor>", "--idempotency-key=<key>", "--timeout=<seconds>"]) expect(r.stdout).toContain(g);
    // a group that also runs on its own says both
    expect(run(["workspace", "--help"]).stdout).toContain("USAGE cards workspace | cards workspace reload");
  });

  test("commands that work on the workspace files do not offer --url in their help, say what they do with it, and do it", async () => {
    const { FILES_HERE } = await import("../../src/cli/runner.ts");
    // what each needs to get past its own arguments (serve is left out: it would keep running)
    const extra: Record<string, string[]> = {
      "cards init": [join(mkdtempSync(join(tmpdir(), "cards-init-")), "ws")], "cards ext run": ["nope"],
      "cards ext start": ["x"], "cards ext stop": ["x"], "cards ext restart": ["x"], "cards restore": ["--in", "/dev/null"], "cards backup": ["--out", join(tmpdir(), "never.db")],
    };
    for (const [path, policy] of Object.entries(FILES_HERE)) {
      const cmd = path.split(" ").slice(1);
      const r = run([...cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain("--url=<url>");
      expect(r.stdout).not.toContain("--idempotency-key=<key>");
      expect(r.stdout).toContain(`it ${policy === "refuse" ? "refuses" : "ignores"} CARDS_URL / --url`);
      if (path === "cards serve") continue;
      // and it does what its help says: a refusal is a usage error; an unreachable URL is no error for the others
      const done = run(["--url", "http://127.0.0.1:9", ...cmd, ...(extra[path] ?? [])], { cwd: ws });
      expect({ path, code: done.code === 2 ? "refused" : done.code === 7 ? "reached for the server" : "ran" }).toEqual({ path, code: policy === "refuse" ? "refused" : "ran" });
    }
    // serve's help names the variables it reads (they were only in docs/limits.md)
    const serveHelp = run(["serve", "--help"]).stdout;
    expect(serveHelp).toContain("ENVIRONMENT");
    for (const v of ["CARDS_ACTOR", "CARDS_PUBLIC_URL", "CARDS_MAX_STREAMS", "CARDS_IDLE_TIMEOUT_S"]) expect(serveHelp).toMatch(new RegExp(`^  ${v} `, "m"));
  });

  test("unknown command and unknown flag are usage errors (exit 2) listing the valid ones", () => {
    const a = run(["frobnicate"], { cwd: ws });
    expect(a.code).toBe(2);
    expect(a.error.error).toBe("usage");
    expect(a.error.valid_options).toContain("cards");
    const b = run(["cards", "list", "--colour", "red"], { cwd: ws });
    expect(b.code).toBe(2);
    expect(b.error.valid_options).toContain("--status");
  });

  test("a command group without its command is a usage error listing the commands; `cards` alone prints help", () => {
    const r = run(["cards"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.error).toMatchObject({ error: "usage", message: "cards cards needs a command" });
    expect(r.error.valid_options).toContain("take-next");
    const root = run([], { cwd: ws });
    expect(root.code).toBe(0);
    expect(root.stdout).toContain("USAGE");
  });

  test("a word past the positionals is a usage error, never dropped; a flag's value may start with a dash", () => {
    const c = run(["cards", "create", "--type", "task", "--title", "words"], { cwd: ws }).json;
    const extra = run(["cards", "comments", "add", c.id, "hello", "world"], { cwd: ws });
    expect(extra.code).toBe(2);
    expect(extra.error).toMatchObject({ error: "usage", value: "world" });
    expect(run(["cards", "get", c.id], { cwd: ws }).json.comments).toEqual([]);
    // `--dry-run false` used to run a dry run and print a card that was never stored
    const before = run(["cards", "list"], { cwd: ws }).json.items.length;
    const dry = run(["cards", "create", "--type", "task", "--title", "x", "--dry-run", "false"], { cwd: ws });
    expect(dry.code).toBe(2);
    expect(dry.error.hint).toContain("--dry-run=false");
    expect(run(["cards", "list"], { cwd: ws }).json.items.length).toBe(before);
    expect(run(["events", "stream"], { cwd: ws }).code).toBe(2);
    // a command that takes no words names its file with a flag (before: "quote a value that holds spaces")
    expect(run(["dump", "x.jsonl"], { cwd: ws }).error.hint).toBe("cards dump takes no arguments: name the file with --out x.jsonl");
    expect(run(["restore", "x.jsonl"], { cwd: ws }).error.hint).toBe("cards restore takes no arguments: name the file with --in x.jsonl");
    const sorted = run(["cards", "list", "--sort", "-title"], { cwd: ws });
    expect(sorted.code).toBe(0);
    const titles = sorted.json.items.map((x: any) => x.title);
    expect(titles).toEqual([...titles].sort().reverse());
  });

  test("a boolean flag's =value is true, false (1/0, yes/no) or a usage error: --force=off moves nothing", () => {
    const c = run(["cards", "create", "--type", "task", "--title", "guarded"], { cwd: ws }).json;
    // before: any word but false/0/no read as true, so --force=off skipped the transition check
    const off = run(["cards", "patch", c.id, "--version", "1", "--status", "done", "--force=off"], { cwd: ws });
    expect(off.code).toBe(2);
    expect(off.error).toMatchObject({ error: "usage", field: "--force", value: "off", valid_options: ["true", "false"] });
    expect(off.error.hint).toContain("--no-force");
    expect(run(["cards", "get", c.id], { cwd: ws }).json.status).toBe(c.status);
    expect(run(["cards", "create", "--type", "task", "--title", "y", "--dry-run=banana"], { cwd: ws }).code).toBe(2);
    const negated = run(["cards", "create", "--type", "task", "--title", "y", "--no-dry-run=true"], { cwd: ws });
    expect([negated.code, negated.error.message]).toEqual([2, "--no-dry-run takes no value"]);
    const before = run(["cards", "list", "--limit", "200"], { cwd: ws }).json.items.length;
    expect(run(["cards", "create", "--type", "task", "--title", "y", "--dry-run=TRUE"], { cwd: ws }).json.version).toBe(1);
    expect(run(["cards", "create", "--type", "task", "--title", "y", "--dry-run=Yes"], { cwd: ws }).code).toBe(0);
    expect(run(["cards", "list", "--limit", "200"], { cwd: ws }).json.items.length).toBe(before);
    expect(run(["cards", "create", "--type", "task", "--title", "stored", "--dry-run=0"], { cwd: ws }).code).toBe(0);
    expect(run(["cards", "list", "--limit", "200"], { cwd: ws }).json.items.length).toBe(before + 1);
  });

  test("words that are names every object inherits are plain words: a title, a comment, a filter name, a command", () => {
    // before: `constructor` read as a global flag (eating the next word), `cards constructor` as a command
    const c = run(["cards", "create", "--type", "task", "--title", "constructor", "--tags", "docs"], { cwd: ws });
    expect([c.code, c.json?.title, c.json?.tags]).toEqual([0, "constructor", ["docs"]]);
    const said = run(["cards", "comments", "add", c.json.id, "valueOf"], { cwd: ws });
    expect([said.code, said.json?.comments?.at(-1)?.body]).toEqual([0, "valueOf"]);
    expect(run(["cards", "list", "--board", "main", "--filter", "constructor"], { cwd: ws }).error).toMatchObject({ error: "validation_failed", field: "filter", value: "constructor" });
    expect(run(["constructor"], { cwd: ws }).error).toMatchObject({ error: "usage", value: "constructor" });
    expect(run(["cards", "toString"], { cwd: ws }).error).toMatchObject({ error: "usage", value: "toString" });
  });

  test("runs with neither Bun nor node_modules around (a copy in an empty dir, minimal PATH)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cards-bin-"));
    const copy = join(dir, "cards");
    copyFileSync(BIN, copy);
    chmodSync(copy, 0o755);
    const { spawnSync } = require("node:child_process");
    const r = spawnSync(copy, ["init", join(dir, "w")], { cwd: dir, env: { PATH: "/nonexistent", HOME: dir }, encoding: "utf8" });
    expect(r.status).toBe(0);
    const c = spawnSync(copy, ["cards", "create", "--type", "task", "--title", "standalone"], { cwd: join(dir, "w"), env: { PATH: "/nonexistent", HOME: dir }, encoding: "utf8" });
    expect(c.status).toBe(0);
    expect(JSON.parse(c.stdout).title).toBe("standalone");
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("init and check", () => {
  test("init writes a valid workspace; a second init refuses", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "cards-init-")), "ws");
    const r = run(["init", dir]);
    expect(r.code).toBe(0);
    expect(r.json.files).toContain("definitions/workspace.json");
    expect(run(["check", "--dir", dir]).json.ok).toBe(true);
    expect(run(["init", dir]).code).toBe(2);
  });

  test("init writes no file over another, and a path it cannot write is a usage error, not a crash", () => {
    const base = mkdtempSync(join(tmpdir(), "cards-init-"));
    const dir = join(base, "ws");
    mkdirSync(join(dir, "definitions", "card-types"), { recursive: true });
    writeFileSync(join(dir, "definitions", "card-types", "task.json"), "mine");
    const r = run(["init", dir]);
    expect([r.code, r.error?.error, r.error?.value]).toEqual([2, "usage", ["definitions/card-types/task.json"]]);
    expect(readFileSync(join(dir, "definitions", "card-types", "task.json"), "utf8")).toBe("mine");
    writeFileSync(join(base, "plain"), "x");
    for (const target of [join(base, "plain"), join(base, "plain", "ws"), "/proc/cards-init"]) {
      const bad = run(["init", target]);
      expect([target, bad.code, bad.error?.error]).toEqual([target, 2, "usage"]);
      expect(bad.stderr).not.toContain("    at ");
      expect(bad.error.message).toContain("cannot write the workspace");
    }
  });

  test("check lists every problem and exits non-zero", () => {
    const dir = makeWorkspace((f) => {
      (f["definitions/workspace.json"] as any).settings.tag_policy = "propose";
      (f["definitions/boards/main.json"] as any).columns.push("shipped");
    });
    const r = run(["check", "--dir", dir]);
    expect(r.code).toBe(5);
    expect(r.error.error).toBe("invalid_definitions");
    expect(r.error.problems.length).toBeGreaterThanOrEqual(2);
    expect(r.stderr).toContain("definitions/workspace.json");
    expect(r.stderr).toContain("definitions/boards/main.json");
    // every other command refuses to run on broken definitions, with the same envelope
    expect(run(["cards", "list", "--dir", dir]).error.error).toBe("invalid_definitions");
    // check's own hint does not send the caller back to check; with a database it says the
    // checks against the cards come once the files load (it said "run `cards check`")
    expect(r.error.hint).toBe("fix these, then run `cards check` again");
    const used = makeWorkspace();
    run(["cards", "create", "--type", "task", "--title", "x", "--dir", used]);
    const edited = JSON.parse(readFileSync(join(used, "definitions/workspace.json"), "utf8"));
    edited.settings.tag_policy = "propose";
    writeFileSync(join(used, "definitions/workspace.json"), JSON.stringify(edited));
    expect(run(["check", "--dir", used]).error.hint).toContain("the checks against the workspace's cards");
  });

  test("check names the cards a narrowed set no longer fits, as notices that do not fail it", () => {
    const dir = makeWorkspace();
    const at = (args: string[]) => run([...args, "--dir", dir]);
    expect(at(["check"]).json.notices).toEqual([]);
    const review = at(["cards", "create", "--type", "review", "--title", "r", "--fields", '{"reviewers":["ada"]}']).json;
    expect(review.status).toBe("todo");
    const a = at(["cards", "create", "--type", "task", "--title", "a"]).json;
    const b = at(["cards", "create", "--type", "task", "--title", "b"]).json;
    at(["cards", "links", "add", a.id, "sent-to", b.id]);
    const edit = (rel: string, fn: (x: any) => void) => {
      const x = JSON.parse(readFileSync(join(dir, rel), "utf8"));
      fn(x);
      writeFileSync(join(dir, rel), JSON.stringify(x));
    };
    edit("definitions/card-types/review.json", (t) => { t.allowed_columns = ["doing", "review", "done"]; });
    edit("definitions/workspace.json", (w) => { w.link_types = w.link_types.filter((l: any) => l.id !== "sent-to"); });
    edit("definitions/card-types/review.json", (t) => { for (const f of t.fields) if (f.link_type === "sent-to") delete f.link_type; });
    edit("definitions/boards/main.json", (bd) => {
      bd.columns = bd.columns.filter((c: string) => c !== "backlog");
      delete bd.transitions.backlog;
      for (const k of Object.keys(bd.transitions)) bd.transitions[k] = bd.transitions[k].filter((c: string) => c !== "backlog");
    });
    edit("definitions/card-types/task.json", (t) => { t.schema_version += 1; });
    edit("definitions/workspace.json", (w) => { w.settings.default_user = "ghost"; w.settings.event_retention_days = 30; });
    const r = at(["check"]);
    // before: {"ok": true} and nothing else; the cards left behind were found only by writing to them
    expect(r.code).toBe(0);
    const kinds = r.json.notices.map((n: any) => [n.kind, n.count]);
    expect(kinds).toEqual(expect.arrayContaining([["status_not_allowed", 1], ["status_off_board", 2], ["undeclared_link_type", 1], ["schema_behind", 2], ["default_user_unknown", 0], ["setting_not_enforced", 0]]));
    expect(r.json.notices.find((n: any) => n.kind === "status_not_allowed").list).toContain("GET /cards?type_id=review&status=todo");
    expect(r.stderr).toContain("notice: 1 review card(s) are in todo, which the type's allowed_columns leave out");
  });

  test("check gives the notices about the definitions alone before the workspace has a database (before: none until a first write)", () => {
    const dir = makeWorkspace((f) => { Object.assign((f["definitions/workspace.json"] as any).settings, { event_retention_days: 30, default_user: "ghost" }); });
    const r = run(["check", "--dir", dir]);
    expect(r.code).toBe(0);
    expect(r.json.notices.map((n: any) => n.kind).sort()).toEqual(["default_user_unknown", "setting_not_enforced"]);
    expect(r.stderr).toContain("nothing enforces it: the event log is never trimmed (SPEC); take it out, or keep it as a note\n");
    expect(existsSync(join(dir, ".cards"))).toBe(false);
  });

  test("check names extension declarations that load but cannot work: a hook on no event, env that cards replaces", () => {
    const dir = makeWorkspace((f) => {
      f["definitions/extensions.yaml"] = JSON.stringify([
        { id: "never", kind: "hook", on: [], run: ["true"] },
        { id: "as-bot", kind: "hook", on: ["card_created"], run: ["true"], env: { CARDS_ACTOR: "release-bot", OTHER: "kept" } },
        { id: "tool", kind: "run", run: ["true"], env: { CARDS_ACTOR: "fine-here" } },
        { id: "elsewhere", kind: "run", run: ["true"], env: { CARDS_WORKSPACE: "/somewhere/else", CARDS_URL: "http://127.0.0.1:1" } },
      ]);
    });
    const r = run(["check", "--dir", dir]);
    expect(r.code).toBe(0);
    const mine = r.json.notices.filter((n: any) => n.kind === "extension_ineffective").map((n: any) => n.message);
    expect(mine).toEqual([
      "hook never: on is empty, so it never runs; list the event types it runs on, or leave on out for every type",
      'hook as-bot: env.CARDS_ACTOR is replaced by the event\'s actor; to write as "release-bot", pass it in run (["cards", "--actor", "release-bot", ...])',
      // a run's CARDS_URL is a default (the caller's wins when it has one); its CARDS_WORKSPACE never holds
      "run elsewhere: env.CARDS_WORKSPACE is replaced by the value cards sets for every run; take it out",
    ]);
  });

  test("check names a card type whose fields changed while its schema_version stayed (before: nothing, and an upgrade went from 1 to 1)", () => {
    const dir = makeWorkspace();
    const at = (args: string[]) => run([...args, "--dir", dir]);
    at(["cards", "create", "--type", "bug", "--title", "b", "--fields", '{"severity":"minor","steps":"x","environment":"prod"}']);
    const edit = (rel: string, fn: (x: any) => void) => {
      const x = JSON.parse(readFileSync(join(dir, rel), "utf8"));
      fn(x);
      writeFileSync(join(dir, rel), JSON.stringify(x));
    };
    // an added field is no change to old cards: nothing to say
    edit("definitions/card-types/bug.json", (t) => { t.fields.push({ id: "notes", type: "text" }); });
    expect(at(["check"]).json.notices).toEqual([]);
    // nor is an option added, or the options put in another order (before: "severity: enum (...) -> enum (...)")
    edit("definitions/card-types/bug.json", (t) => { const sev = t.fields.find((f: any) => f.id === "severity"); sev.options = [...sev.options.reverse(), "cosmetic"]; });
    expect(at(["check"]).json.notices).toEqual([]);
    edit("definitions/card-types/bug.json", (t) => {
      t.fields = t.fields.filter((f: any) => f.id !== "environment");
      const sev = t.fields.find((f: any) => f.id === "severity");
      sev.options = sev.options.filter((o: string) => o !== "minor");
      if (sev.default === "minor") sev.default = sev.options[0];
      delete sev.option_themes?.minor;
    });
    edit("definitions/boards/bugs.json", (bd) => { bd.presentation.card_preview.bug = bd.presentation.card_preview.bug.filter((f: string) => f !== "environment"); });
    at(["cards", "list"]); // a one-shot open of the edited files first: the version's first fields stay what counts
    // a card written since the edit holds nothing the edit left behind: not counted (before: every card at the version)
    at(["cards", "create", "--type", "bug", "--title", "after the edit", "--fields", '{"severity":"major","steps":"x"}']);
    const r = at(["check"]);
    expect(r.code).toBe(0);
    const notice = r.json.notices.find((n: any) => n.kind === "fields_changed_in_place");
    expect(notice).toMatchObject({ count: 1, list: expect.stringContaining("type_id=bug") });
    expect(notice.message).toContain("bug's fields changed while it stayed at schema_version 1 (");
    expect(notice.message).toContain("environment removed");
    expect(notice.message).toContain("severity: option(s) minor removed");
    expect(notice.message).toContain("1 of its cards keep values that no longer fit");
    expect(notice.message).toContain('raise schema_version to 2 with a migration ("migrations": {"2": {"from": 1');
    // the fix: a new version; the cards are then behind it, which is the upgrade's job
    edit("definitions/card-types/bug.json", (t) => { t.schema_version = 2; t.migrations = { 2: { from: 1, summary: "environment and minor dropped" } }; });
    const kinds = at(["check"]).json.notices.map((n: any) => n.kind);
    expect(kinds).toContain("schema_behind");
    expect(kinds).not.toContain("fields_changed_in_place");
  });

  test("no workspace found: not_found with a hint to init", () => {
    const r = run(["cards", "list"], { cwd: mkdtempSync(join(tmpdir(), "cards-none-")) });
    expect(r.code).toBe(3);
    expect(r.error.hint).toContain("cards init");
    // the shared workspace first: a lost agent that inits gets a private, empty queue
    expect(r.error.hint).toStartWith("pass --dir or set CARDS_DIR");
  });
});

describe("card commands and exit codes", () => {
  test("create, get, list, patch, delete", () => {
    const c = run(["cards", "create", "--type", "task", "--title", "From CLI", "--fields", '{"priority":"high"}', "--tags", "backend,docs"], { cwd: ws });
    expect(c.code).toBe(0);
    expect(c.json).toMatchObject({ title: "From CLI", fields: { priority: "high" }, tags: ["backend", "docs"], version: 1 });
    expect(run(["cards", "get", c.json.id], { cwd: ws }).json.id).toBe(c.json.id);
    expect(run(["cards", "list", "--q", "CLI"], { cwd: ws }).json.items.map((x: any) => x.id)).toContain(c.json.id);
    const p = run(["cards", "patch", c.json.id, "--version", "1", "--status", "todo"], { cwd: ws });
    expect(p.json.status).toBe("todo");
    const d = run(["cards", "delete", c.json.id, "--version", "2"], { cwd: ws });
    expect(d.code).toBe(0);
    expect(run(["cards", "get", c.json.id], { cwd: ws }).code).toBe(3);
  });

  test("--tags takes a JSON array for a tag holding a comma; --tag lists by one tag (before: the comma split it, and no flag listed by tag)", () => {
    const dir = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).settings.tag_policy = "open"; });
    const at = (args: string[]) => run([...args, "--dir", dir]);
    const c = at(["cards", "create", "--type", "task", "--title", "labelled", "--tags", '["area,ui","p1"]']).json;
    expect(c.tags).toEqual(["area,ui", "p1"]);
    at(["cards", "create", "--type", "task", "--title", "other", "--tags", "area,ui"]);
    expect(at(["cards", "list", "--tag", "area,ui"]).json.items.map((x: any) => x.id)).toEqual([c.id]);
    const patched = at(["cards", "patch", c.id, "--version", "1", "--tags", '["area,ui","p2"]']).json;
    expect(patched.tags).toEqual(["area,ui", "p2"]);
    const bad = at(["cards", "patch", c.id, "--version", "2", "--tags", '["unclosed"']);
    expect([bad.code, bad.error.field]).toEqual([2, "--tags"]);
    // a tag in brackets is still a tag, not a list
    expect(at(["cards", "patch", c.id, "--version", "2", "--tags", "[wip],p3"]).json.tags).toEqual(["[wip]", "p3"]);
  });

  test("exit codes: not found 3, conflict 4, validation 5, actor required 6", () => {
    const c = run(["cards", "create", "--type", "task", "--title", "codes"], { cwd: ws }).json;
    expect(run(["cards", "get", "card_0000000000000000"], { cwd: ws }).code).toBe(3);
    const conflict = run(["cards", "patch", c.id, "--version", "9", "--title", "x"], { cwd: ws });
    expect(conflict.code).toBe(4);
    expect(conflict.error.card.id).toBe(c.id);
    const invalid = run(["cards", "patch", c.id, "--version", "1", "--fields", '{"priority":"asap"}'], { cwd: ws });
    expect(invalid.code).toBe(5);
    expect(invalid.error.valid_options).toEqual(["low", "normal", "high", "urgent"]);
    const anon = makeWorkspace((f) => { delete (f["definitions/workspace.json"] as any).settings.default_user; });
    const denied = run(["cards", "create", "--type", "task", "--title", "x"], { cwd: anon });
    expect(denied.code).toBe(6);
    expect(denied.error.error).toBe("actor_required");
    expect(run(["cards", "create", "--type", "task", "--title", "x"], { cwd: anon, env: { CARDS_ACTOR: "env-actor" } }).json.created_by).toBe("env-actor");
    expect(run(["cards", "create", "--type", "task", "--title", "x", "--actor", "flag-actor"], { cwd: anon }).json.created_by).toBe("flag-actor");
  });

  test("JSON input from --data, @file and stdin", () => {
    const file = join(ws, "body.json");
    writeFileSync(file, JSON.stringify({ type_id: "task", title: "from file" }));
    expect(run(["cards", "create", "--data", `@${file}`], { cwd: ws }).json.title).toBe("from file");
    expect(run(["cards", "create", "--data", "@-"], { cwd: ws, input: '{"type_id":"task","title":"from stdin"}' }).json.title).toBe("from stdin");
    expect(run(["cards", "create", "--data", '{"type_id":"task","title":"inline"}', "--title", "flag wins"], { cwd: ws }).json.title).toBe("flag wins");
    const bad = run(["cards", "create", "--data", "{nope"], { cwd: ws });
    expect(bad.code).toBe(2);
    expect(bad.error.error).toBe("bad_request");
    // JSON piped without --data @- is not read: the error says how to send it
    const piped = run(["cards", "create"], { cwd: ws, input: '{"type_id":"task","title":"lost"}' });
    expect([piped.code, piped.error?.error]).toEqual([2, "usage"]);
    expect(piped.error.hint).toContain("--data @-");
    expect(run(["cards", "patch", "card_x"], { cwd: ws }).error.hint).toContain("--data @-");
    const kv = run(["cards", "create", "--type", "task", "--title", "x", "--fields", "priority=high"], { cwd: ws });
    expect([kv.code, kv.error.field]).toEqual([2, "--fields"]);
    expect(kv.error.hint).toContain(`--fields '{"key": "value"}'`);
    // nesting past 64 levels is refused before any rule walks it (it overflowed the stack)
    const deep = `{"type_id":"task","title":${"[".repeat(60_000)}${"]".repeat(60_000)}}`;
    for (const args of [["--data", deep], ["--type", "task", "--title", "x", "--fields", `{"description":${"[".repeat(60_000)}${"]".repeat(60_000)}}`]]) {
      const r = run(["cards", "create", ...args], { cwd: ws });
      expect(r.code).toBe(2);
      expect(r.error).toMatchObject({ error: "bad_request", message: expect.stringContaining("nests deeper than 64 levels") });
    }
  });

  test("input without end is read only up to its limit (before: `yes | cards ...` and </dev/zero filled memory; exit 2 at ENOMEM)", () => {
    const id = run(["cards", "create", "--type", "task", "--title", "bounded"], { cwd: ws }).json.id;
    const sh = (cmd: string) => spawnSync("sh", ["-c", cmd, BIN], { cwd: ws, env: cleanEnv(), encoding: "utf8", timeout: 20_000 });
    for (const [cmd, limit] of [
      [`yes '{"a":1}' | "$0" cards create --data @-`, 1048576],
      [`"$0" cards comments add ${id} - </dev/zero`, 1048576],
      [`"$0" cards artifacts put ${id} output - </dev/zero`, 67108864],
    ] as const) {
      const r = sh(cmd);
      expect([cmd, r.status]).toEqual([cmd, 5]);
      expect(JSON.parse(r.stderr.trim().split("\n").at(-1)!)).toMatchObject({ error: "payload_too_large", message: `stdin holds more than ${limit} bytes, the most one ${limit > 1048576 ? "upload" : "request"} takes` });
    }
    // a file is judged by its size before it is read
    const big = join(ws, "big.json");
    writeFileSync(big, `{"type_id":"task","title":"x","fields":{"description":"${"d".repeat(1_100_000)}"}}`);
    expect(run(["cards", "create", "--data", `@${big}`], { cwd: ws }).error).toMatchObject({ error: "payload_too_large", field: "--data" });
  });

  test("users add and boards get", () => {
    expect(run(["users", "add", "cli-bot", "--kind", "agent"], { cwd: ws }).json).toMatchObject({ id: "cli-bot", kind: "agent" });
    expect(run(["boards", "get", "main"], { cwd: ws }).json.id).toBe("main");
    expect(run(["boards", "get", "nope"], { cwd: ws }).code).toBe(3);
  });

  test("boards counts: per column, narrowed by the list's flags", () => {
    const all = run(["boards", "counts", "main"], { cwd: ws }).json;
    expect(Object.keys(all.counts)).toEqual(["backlog", "todo", "doing", "review", "done"]);
    expect(all.total).toBe(Object.values(all.counts as Record<string, number>).reduce((a, b) => a + b, 0));
    const tasks = run(["boards", "counts", "main", "--type", "task"], { cwd: ws }).json;
    expect(tasks.total).toBeLessThanOrEqual(all.total);
    expect(tasks.total).toBe(run(["cards", "list", "--board", "main", "--type", "task", "--limit", "200"], { cwd: ws }).json.items.length);
    expect(run(["boards", "counts", "main", "--status", "todo"], { cwd: ws }).code).toBe(2);
  });

  test("cards api reaches any route and prints the body", () => {
    const r = run(["api", "POST", "/cards", "--data", '{"type_id":"task","title":"via api"}'], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json.title).toBe("via api");
    expect(run(["api", "GET", `/cards?q=${encodeURIComponent("via api")}`], { cwd: ws }).json.items.length).toBe(1);
    const miss = run(["api", "GET", "/nowhere"], { cwd: ws });
    expect(miss.code).toBe(3);
    expect(miss.error.error).toBe("not_found");
  });

  test("the coordination commands", () => {
    const dir = makeWorkspace();
    const a = run(["cards", "create", "--type", "task", "--title", "A", "--status", "todo"], { cwd: dir }).json;
    const b = run(["cards", "create", "--type", "task", "--title", "B", "--status", "todo"], { cwd: dir }).json;
    expect(run(["cards", "links", "add", b.id, "depends-on", a.id], { cwd: dir }).json.links.length).toBe(1);
    const next = run(["cards", "take-next", "--filter", '{"blocked":false}', "--status", "doing", "--actor", "agent-1"], { cwd: dir }).json.card;
    expect(next.id).toBe(a.id);
    expect(next.status).toBe("doing");
    expect(run(["cards", "entries", "append", a.id, "evidence", '{"note":"done it"}', "--version", String(next.version)], { cwd: dir }).json.entry_id).toMatch(/^ent_/);
    expect(run(["cards", "comments", "add", a.id, "-"], { cwd: dir, input: "handoff note" }).json.comments[0].body).toBe("handoff note");
    expect(run(["cards", "release", a.id, "--actor", "agent-1"], { cwd: dir }).json.owner).toBeUndefined();
    const claimed = run(["cards", "claim", b.id, "--version", "2", "--actor", "agent-2"], { cwd: dir });
    expect(claimed.json.owner).toBe("agent-2");
    expect(run(["cards", "history", a.id], { cwd: dir }).json.items.length).toBeGreaterThan(3);
    expect(run(["cards", "links", "remove", b.id, "depends-on", a.id], { cwd: dir }).json.links).toEqual([]);
  });
});

describe("serve", () => {
  test("`--host localhost` advertises the address it bound, and answers there", async () => {
    const s = await serve(ws, {}, ["--host", "localhost"]);
    try {
      expect(s.url).toMatch(/^http:\/\/(127\.0\.0\.1|\[::1\]):\d+$/);
      expect((await fetch(`${s.url}/v1/health`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

describe("embedded and remote modes print the same bytes", () => {
  let server: Server;
  let dir: string;
  let id: string;
  beforeAll(async () => {
    dir = makeWorkspace();
    id = run(["cards", "create", "--type", "task", "--title", "parity"], { cwd: dir }).json.id;
    server = await serve(dir);
  });
  afterAll(async () => { await server?.stop(); });

  test("the caller's CARDS_ACTOR is who acts in both modes (a server never falls back to its own identity)", () => {
    for (const env of [{ CARDS_ACTOR: "agent-2" }, { CARDS_ACTOR: "agent-2", CARDS_URL: server.url }]) {
      const made = run(["cards", "create", "--type", "task", "--title", "whose"], { cwd: dir, env });
      expect(made.json.created_by).toBe("agent-2");
      const claimed = run(["cards", "claim", made.json.id, "--version", "1"], { cwd: dir, env });
      expect(claimed.json.owner).toBe("agent-2");
      expect(run(["cards", "list", "--owner", "me"], { cwd: dir, env }).json.items.map((c: any) => c.id)).toContain(made.json.id);
      // --actor still wins over the environment
      expect(run(["cards", "create", "--type", "task", "--title", "flag", "--actor", "agent-1"], { cwd: dir, env }).json.created_by).toBe("agent-1");
    }
  });

  test("an actor past Latin-1 (josé🚀, łukasz) acts remotely as embedded; one holding a control character is refused alike in both (before: remote failed as unreachable, exit 7, or got an empty 400)", () => {
    for (const actor of ["jos\u00e9\u{1f680}", "\u0142ukasz", "caf\u00e9"]) {
      const local = run(["cards", "create", "--type", "task", "--title", "who"], { cwd: dir, env: { CARDS_ACTOR: actor } });
      const remote = run(["cards", "create", "--type", "task", "--title", "who"], { cwd: dir, env: { CARDS_ACTOR: actor, CARDS_URL: server.url } });
      expect([actor, local.code, remote.code]).toEqual([actor, 0, 0]);
      expect([local.json.created_by, remote.json.created_by]).toEqual([actor, actor]);
      expect(run(["cards", "list", "--owner", "me"], { cwd: dir, env: { CARDS_ACTOR: actor, CARDS_URL: server.url } }).code).toBe(0);
    }
    // and one holding ", ", which is how a header sent twice arrives (before: taken embedded, refused remotely)
    for (const actor of ["ev\u001b[2Jil", "a\u009bb", "ann, bee"]) {
      const local = run(["cards", "create", "--type", "task", "--title", "who"], { cwd: dir, env: { CARDS_ACTOR: actor } });
      const remote = run(["cards", "create", "--type", "task", "--title", "who"], { cwd: dir, env: { CARDS_ACTOR: actor, CARDS_URL: server.url } });
      expect([local.code, local.error.error, local.error.field]).toEqual([2, "bad_request", "actor"]);
      expect(remote.stderr).toBe(local.stderr);
      expect(remote.code).toBe(local.code);
      // a read too: embedded it answered while the same read remotely was refused
      const localRead = run(["cards", "list"], { cwd: dir, env: { CARDS_ACTOR: actor } });
      const remoteRead = run(["cards", "list"], { cwd: dir, env: { CARDS_ACTOR: actor, CARDS_URL: server.url } });
      expect([localRead.code, localRead.error?.error, localRead.error?.field]).toEqual([2, "bad_request", "actor"]);
      expect([remoteRead.code, remoteRead.stderr]).toEqual([localRead.code, localRead.stderr]);
    }
    expect(run(["cards", "list"], { cwd: dir, env: { CARDS_ACTOR: "bot\u001b" } }).error.hint).toBe("name the actor in printable text (--actor, CARDS_ACTOR or X-Service-Actor)");
  });

  test("a blank actor (U+3000, NBSP, spaces) or one with other whitespace at its ends is refused alike in both modes and over HTTP (before: it became default_user or was trimmed)", async () => {
    const cases: Array<[Record<string, string>, string[]]> = [
      [{}, ["--actor", "\u3000"]], [{ CARDS_ACTOR: "\u3000" }, []], [{}, ["--actor", " "]], [{ CARDS_ACTOR: " \t" }, []],
      [{}, ["--actor", "\u00a0bob"]], [{ CARDS_ACTOR: "bob\u3000" }, []],
    ];
    for (const [env, flags] of cases) {
      const args = [...flags, "cards", "create", "--type", "task", "--title", "whose", "--dry-run"];
      const local = run(args, { cwd: dir, env });
      const remote = run(args, { cwd: dir, env: { ...env, CARDS_URL: server.url } });
      expect([env, flags, local.code, local.error?.error, local.error?.field]).toEqual([env, flags, 2, "bad_request", "actor"]);
      expect([remote.code, remote.stderr]).toEqual([local.code, local.stderr]);
    }
    const nbsp = await fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "\u00c2\u00a0bob" }, body: '{"type_id":"task","title":"whose","dry_run":true}' });
    expect([nbsp.status, ((await nbsp.json()) as any).message]).toEqual([400, 'the actor "\u00a0bob" starts or ends with whitespace (U+00A0)']);
    // plain spaces at the ends are dropped, as HTTP drops them from the header
    expect(run(["--actor", " bob ", "cards", "create", "--type", "task", "--title", "whose", "--dry-run"], { cwd: dir, env: { CARDS_URL: server.url } }).json.created_by).toBe("bob");
    expect(run(["--actor", " bob ", "cards", "create", "--type", "task", "--title", "whose", "--dry-run"], { cwd: dir }).json.created_by).toBe("bob");
  });

  test("cards serve with a blank CARDS_ACTOR stops at start, saying so (before: it served, and answered 400 to every request naming no actor)", () => {
    const r = run(["serve", "--port", "0"], { cwd: dir, env: { CARDS_ACTOR: "\u3000" } });
    expect([r.code, r.error?.error, r.error?.field]).toEqual([2, "bad_request", "actor"]);
    expect(r.error?.message).toStartWith("CARDS_ACTOR ");
  });

  test("an --idempotency-key outside printable ASCII is refused alike in both modes, and over HTTP, writing nothing (before: embedded took it, remote failed in fetch saying the write may have been applied, HTTP read it as Latin-1)", async () => {
    const count = () => run(["cards", "list", "--limit", "200"], { cwd: dir }).json.items.length;
    const before = count();
    for (const key of ["\u952e\u{1f680}", "caf\u00e9", "two words"]) {
      const args = ["--idempotency-key", key, "cards", "create", "--type", "task", "--title", "keyed"];
      const local = run(args, { cwd: dir });
      const remote = run(args, { cwd: dir, env: { CARDS_URL: server.url } });
      expect([key, local.code, local.error?.error, local.error?.field]).toEqual([key, 2, "bad_request", "Idempotency-Key"]);
      expect([remote.code, remote.stderr]).toEqual([local.code, local.stderr]);
      // the UTF-8 bytes as curl sends them
      const http = await fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": String.fromCharCode(...new TextEncoder().encode(key)) }, body: '{"type_id":"task","title":"keyed"}' });
      expect([http.status, ((await http.json()) as any).field]).toEqual([400, "Idempotency-Key"]);
    }
    expect(run(["--idempotency-key", "ok-key_1.2:3~!", "cards", "create", "--type", "task", "--title", "keyed"], { cwd: dir }).code).toBe(0);
    expect(count()).toBe(before + 1);
  });

  test("a remote write carries an Idempotency-Key of its own, kept by the server; an embedded write stores none", () => {
    const db = new Database(join(dir, ".cards/cards.db"), { readonly: true });
    try {
      const keys = (): string[] => db.query<{ key: string }, []>("SELECT key FROM idempotency ORDER BY key").all().map((r) => r.key);
      const before = keys();
      expect(run(["cards", "create", "--type", "task", "--title", "no key embedded"], { cwd: dir }).code).toBe(0);
      expect(keys()).toEqual(before);
      expect(run(["cards", "create", "--type", "task", "--title", "a key remote"], { cwd: dir, env: { CARDS_URL: server.url } }).code).toBe(0);
      const added = keys().filter((k) => !before.includes(k));
      expect(added).toHaveLength(1);
      expect(added[0]).toMatch(/cli-[0-9a-f-]{36}$/);
    } finally {
      db.close();
    }
  });

  const commands: string[][] = [
    ["workspace"], ["health"], ["boards", "get", "main"], ["boards", "get", "nope"],
    ["cards", "list"], ["cards", "list", "--status", "backlog", "--limit", "1"], ["cards", "list", "--sort", "bogus"],
    ["cards", "get", "ID"], ["cards", "get", "card_0000000000000000"], ["cards", "events", "ID"], ["cards", "history", "ID"],
    ["events", "--limit", "2"], ["cards", "patch", "ID", "--version", "99", "--title", "x"],
    ["breaches", "--type", "nope"],
    ["cards", "create", "--type", "task", "--title", "x", "--fields", '{"priority":"bogus"}'],
    ["api", "GET", "/cards/ID"], ["api", "DELETE", "/cards/ID?version=77"],
    // a URL resolves dot segments before it is sent: remote, these deleted the card
    ["cards", "links", "remove", "ID", ".", ".."], ["cards", "entries", "remove", "ID", ".", "..", "--version", "1"],
    ["cards", "get", "."], ["cards", "comments", "edit", "ID", "..", "x"], ["api", "DELETE", "/cards/ID/links/x/.."],
    ["api", "GET", "/cards/%"], ["api", "GET", "/cards/%ZZ"],
    ["api", "GET", "/cards?status=todo&status=backlog"], ["api", "GET", "/cards?limit=1&limit=5"], ["api", "GET", "/breaches?type=card_blocked&type=wip_exceeded"],
  ];
  test.each(commands.map((c) => [c.join(" "), c]))("%s", (_label, cmd) => {
    const args = (cmd as string[]).map((a) => (a === "ID" ? id : a));
    const local = run(args, { cwd: dir });
    const remote = run(args, { cwd: dir, env: { CARDS_URL: server.url } });
    expect(remote.code).toBe(local.code);
    expect(remote.stdout).toBe(local.stdout);
    expect(remote.stderr).toBe(local.stderr);
    expect(run(["cards", "get", id], { cwd: dir }).code).toBe(0); // still there
  });

  test("cards api reads a repeated query parameter as HTTP does: a list parameter's repeats are the list, any other is refused", async () => {
    for (const path of ["/cards?status=todo&status=backlog&sort=created_at", "/cards?limit=1&limit=5", "/breaches?type=card_blocked&type=wip_exceeded", "/events?type=card_created&type=card_deleted&limit=3", "/events/?type=card_created&type=card_deleted&limit=3"]) {
      const http = await fetch(`${server.url}/v1${path}`);
      if (path.startsWith("/events")) expect([path, http.status]).toEqual([path, 200]); // the feed's route, with or without a trailing slash
      const cli = run(["api", "GET", path], { cwd: dir });
      const body = await http.json();
      if (http.ok) expect([path, cli.code, cli.json]).toEqual([path, 0, body]);
      else expect([path, cli.code, JSON.parse(cli.stderr)]).toEqual([path, 2, body]);
    }
    expect(JSON.parse(run(["api", "GET", "/cards?limit=1&limit=5"], { cwd: dir }).stderr).message).toBe('query parameter "limit" is given more than once');
    expect(JSON.parse(run(["api", "GET", "/breaches?type=card_blocked&type=wip_exceeded"], { cwd: dir }).stderr).message).toBe('query parameter "type" is given more than once');
    // escapes that are not UTF-8 are refused as a server refuses them (they were searched as U+FFFD)
    expect(JSON.parse(run(["api", "GET", "/cards?q=%FF"], { cwd: dir }).stderr)).toMatchObject({ error: "bad_request", field: "q" });
  });

  test("the live stream reads an X-Service-Actor sent as UTF-8 as the JSON API does: actor=me finds a non-ASCII caller's events", async () => {
    const made = run(["cards", "create", "--type", "task", "--title", "streamed"], { cwd: dir, env: { CARDS_ACTOR: "j\u00f6rg" } }).json;
    const ac = new AbortController();
    const res = await fetch(`${server.url}/v1/events/stream?actor=me&types=card_created`, {
      headers: { "x-service-actor": String.fromCharCode(...new TextEncoder().encode("j\u00f6rg")), "last-event-id": "000000000000" }, signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let text = "";
    const deadline = Date.now() + 5000;
    let pending: Promise<{ done: boolean; value?: Uint8Array }> | undefined; // kept across waits: its chunk is not lost
    while (!text.includes(made.id) && Date.now() < deadline) {
      pending ??= reader.read();
      const r = await Promise.race([pending, Bun.sleep(500).then(() => null)]);
      if (!r) continue;
      pending = undefined;
      if (r.done) break;
      if (r.value) text += new TextDecoder().decode(r.value);
    }
    void pending?.catch(() => {}); // settled by the abort
    ac.abort();
    expect(text).toContain(made.id);
  });

  test("an argument or CARDS_ACTOR in Latin-1 bytes is refused (before: stored with U+FFFD); a U+FFFD really typed passes", () => {
    const sh = (script: string, env: Record<string, string> = {}) => {
      const r = spawnSync("sh", ["-c", script, BIN], { cwd: dir, env: cleanEnv({ CARDS_ACTOR: "ada", ...env }), encoding: "utf8" });
      return { code: r.status, stdout: r.stdout, error: r.stderr.trim() ? JSON.parse(r.stderr.trim().split("\n").at(-1)!) : undefined };
    };
    const title = sh(`exec "$0" cards create --type task --title "$(printf 'caf\\351')"`);
    expect([title.code, title.error?.error, title.error?.message]).toEqual([2, "usage", "an argument is not UTF-8 text (bytes of another encoding, such as Latin-1)"]);
    const actor = sh(`CARDS_ACTOR="$(printf 'jos\\351')" exec "$0" cards create --type task --title plain`);
    expect([actor.code, actor.error?.field]).toEqual([2, "CARDS_ACTOR"]);
    const real = sh(`exec "$0" cards create --type task --title "$(printf 'a \\357\\277\\275 b')"`);
    expect([real.code, JSON.parse(real.stdout).title]).toEqual([0, "a \uFFFD b"]);
  });

  test("the body the CLI builds is what the caller gave, in both modes (review 2026-11-25)", () => {
    const bad = join(dir, "latin1.json");
    writeFileSync(bad, Buffer.concat([Buffer.from('{"type_id":"task","title":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]));
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const card = run(["cards", "create", "--type", "task", "--title", "nums", "--fields", '{"priority":"low","estimate_hours":5}'], { cwd: dir, env }).json;
      // 1e400 parses to Infinity: JSON.stringify sent null, which removed the field (exit 0)
      const huge = run(["cards", "patch", card.id, "--version", "1", "--fields", '{"estimate_hours":1e400}'], { cwd: dir, env });
      expect([huge.code, huge.error.error, huge.error.field]).toEqual([5, "validation_failed", "estimate_hours"]);
      const viaApi = run(["api", "PATCH", `/cards/${card.id}`, "--data", '{"version":1,"fields":{"estimate_hours":1e400}}'], { cwd: dir, env });
      expect(viaApi.stderr).toBe(huge.stderr);
      expect(run(["cards", "get", card.id], { cwd: dir, env }).json).toMatchObject({ version: 1, fields: { estimate_hours: 5 } });
      // --fields is merged key by key over the fields of --data
      const merged = run(["cards", "create", "--data", '{"type_id":"task","title":"m","fields":{"priority":"urgent","branch":"b"}}', "--fields", '{"estimate_hours":2}'], { cwd: dir, env });
      expect(merged.json.fields).toEqual({ priority: "urgent", branch: "b", estimate_hours: 2 });
      const patched = run(["cards", "patch", merged.json.id, "--data", '{"version":1,"fields":{"branch":"c"}}', "--fields", '{"estimate_hours":3}'], { cwd: dir, env });
      expect(patched.json.fields).toEqual({ priority: "urgent", branch: "c", estimate_hours: 3 });
      // a GET carries no body: one usage error in both modes (remote said `unavailable`)
      const get = run(["api", "GET", "/health", "--data", '{"x":1}'], { cwd: dir, env });
      expect([get.code, get.error.error, get.error.field]).toEqual([2, "usage", "--data"]);
      // a file that is not UTF-8 is refused, not stored with U+FFFD
      const latin = run(["cards", "create", "--data", `@${bad}`], { cwd: dir, env });
      expect([latin.code, latin.error.error, latin.error.message]).toEqual([2, "bad_request", `--data (${bad}) is not valid UTF-8`]);
      const viaStdin = run(["api", "POST", "/cards", "--data", "@-"], { cwd: dir, env, input: readFileSync(bad) });
      expect([viaStdin.code, viaStdin.error.error]).toEqual([2, "bad_request"]);
      // a misspelt link type matched nothing and read as "no linked cards"
      const typo = run(["cards", "list", "--has-link", "depends_on"], { cwd: dir, env });
      expect([typo.code, typo.error.error, typo.error.field, typo.error.valid_options]).toEqual([5, "validation_failed", "has_link", ["depends-on", "blocked-by", "related", "parent", "sent-to"]]);
      // history pages forward after an event id
      const events = run(["cards", "events", merged.json.id], { cwd: dir, env }).json.items;
      const after = run(["cards", "history", merged.json.id, "--since", events[0].id], { cwd: dir, env });
      expect(after.json.items.map((i: any) => i.type)).toEqual(events.slice(1).map((e: any) => e.type));
    }
  });

  test("list --brief: each card without its fields, the page's cursor kept, in both modes", () => {
    const outs: string[] = [];
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const full = run(["cards", "list", "--limit", "2"], { cwd: dir, env });
      const brief = run(["cards", "list", "--limit", "2", "--brief"], { cwd: dir, env });
      expect(brief.code).toBe(0);
      expect(brief.json.items.map((c: any) => c.id)).toEqual(full.json.items.map((c: any) => c.id));
      for (const c of brief.json.items) expect(Object.keys(c).filter((k) => k !== "owner")).toEqual(["id", "type_id", "title", "status", "tags", "version", "updated_at"]);
      expect(brief.json.next_cursor).toBe(full.json.next_cursor);
      expect(brief.stdout.length).toBeLessThan(full.stdout.length);
      outs.push(brief.stdout);
    }
    expect(outs[1]).toBe(outs[0]);
  });

  test("artifacts put/get and upgrade-schema work the same in both modes", () => {
    const file = join(dir, "note.txt");
    writeFileSync(file, "artifact bytes");
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const card = run(["cards", "create", "--type", "task", "--title", "art"], { cwd: dir, env }).json;
      const put = run(["cards", "artifacts", "put", card.id, "output", file], { cwd: dir, env });
      expect(put.code).toBe(0);
      expect(put.json.fields.output).toMatchObject({ size: 14, mime: "text/plain; charset=utf-8" });
      const get = run(["artifacts", "get", put.json.fields.output.uri], { cwd: dir, env });
      expect(get.stdout).toBe("artifact bytes");
      // a query or fragment is no part of the artifact, in either mode
      for (const suffix of ["?x=1", "#frag"]) expect(run(["artifacts", "get", put.json.fields.output.uri + suffix], { cwd: dir, env }).stdout).toBe("artifact bytes");
      const viaStdin = run(["cards", "artifacts", "put", card.id, "output", "-", "--type", "text/csv"], { cwd: dir, env, input: "a,b\n" });
      expect(viaStdin.json.fields.output.mime).toBe("text/csv");
      const preview = run(["cards", "upgrade-schema", card.id, "--dry-run"], { cwd: dir, env }).json;
      expect(preview).toMatchObject({ applied: false, report: { from: 2, to: 2, fields_dropped: [] }, card: { id: card.id, schema_version: 2 } });
      expect(run(["artifacts", "get", "artifacts/sha256/00/nope"], { cwd: dir, env }).code).toBe(3);
      // a dot segment stays inside /artifacts: an HTTP client would have resolved it to /health
      const dots = run(["artifacts", "get", "artifacts/../health"], { cwd: dir, env });
      expect([dots.code, dots.stdout, dots.error]).toEqual([3, "", { error: "not_found", message: 'artifact "../health" not found', value: "../health" }]);
    }
  });

  test("an artifact --type outside printable ASCII is refused alike in both modes, storing nothing (before: embedded stored it, remote failed before sending)", () => {
    const file = join(dir, "type-note.txt");
    writeFileSync(file, "typed bytes");
    const answers: unknown[] = [];
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const card = run(["cards", "create", "--type", "task", "--title", "typed"], { cwd: dir, env }).json;
      for (const type of ["text/plain; name=\u20ac", "text/plain; name=caf\u00e9"]) {
        const put = run(["cards", "artifacts", "put", card.id, "output", file, "--type", type], { cwd: dir, env });
        answers.push([put.code, put.error]);
      }
      expect(run(["cards", "get", card.id], { cwd: dir, env }).json.version).toBe(1);
    }
    // embedded €, embedded é, remote €, remote é
    for (const a of answers) expect(a).toMatchObject([5, { error: "validation_failed", field: "Content-Type" }]);
    expect(answers.slice(2)).toEqual(answers.slice(0, 2));
  });

  test("`cards api` carries artifact bytes both ways in both modes; the SSE stream is refused with a pointer", () => {
    const file = join(dir, "api-note.txt");
    writeFileSync(file, "bytes via api\n");
    const outputs: string[] = [];
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const card = run(["cards", "create", "--type", "task", "--title", "api-art"], { cwd: dir, env }).json;
      const put = run(["api", "POST", `/cards/${card.id}/artifacts/output`, "--data", `@${file}`], { cwd: dir, env });
      expect(put.code).toBe(0);
      expect(put.json.fields.output).toMatchObject({ size: 14 });
      const got = run(["api", "GET", `/${put.json.fields.output.uri}`], { cwd: dir, env });
      expect(got.code).toBe(0);
      outputs.push(got.stdout);
      const stream = run(["api", "GET", "/events/stream"], { cwd: dir, env });
      expect(stream.code).toBe(2);
      expect(stream.error.hint).toContain("cards events --follow");
    }
    expect(outputs).toEqual(["bytes via api\n", "bytes via api\n"]);
  });

  test("breaches lists what holds now in both modes (as_of aside)", () => {
    for (const env of [{}, { CARDS_URL: server.url }]) {
      const r = run(["breaches", "--board", "main", "--type", "lane_limit"], { cwd: dir, env });
      expect(r.code).toBe(0);
      expect(r.json.items).toEqual([{ kind: "lane_limit", board_id: "main", column: "todo", count: 0, limit: 0 }]);
    }
  });

  test("a base URL with /v1 reaches the same server; a server that is not cards is `unavailable`, without a stack trace", async () => {
    expect(run(["health"], { cwd: dir, env: { CARDS_URL: `${server.url}/v1/` } }).json.workspace_id).toBeDefined();
    // in this process: the call runs in a child spawned asynchronously (spawnSync would block this server)
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<html>hi</html>", { status: 404, headers: { "content-type": "text/html" } }) });
    try {
      const p = Bun.spawn([BIN, "health"], { cwd: dir, env: cleanEnv({ CARDS_URL: `http://127.0.0.1:${other.port}` }), stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect(code).toBe(7);
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(JSON.parse(stderr)).toMatchObject({ error: "unavailable", message: expect.stringContaining("is not a cards server") });
    } finally {
      other.stop(true);
    }
  });

  test("a bare 413 (a proxy's limit) is payload_too_large, exit 5, not \"not a cards server\"", async () => {
    const proxy = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("<html>413 Request Entity Too Large</html>", { status: 413, headers: { "content-type": "text/html" } }) });
    try {
      const p = Bun.spawn([BIN, "cards", "create", "--type", "task", "--title", "x"], { cwd: dir, env: cleanEnv({ CARDS_URL: `http://127.0.0.1:${proxy.port}` }), stdout: "pipe", stderr: "pipe" });
      const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
      expect([code, JSON.parse(stderr).error]).toEqual([5, "payload_too_large"]);
    } finally {
      proxy.stop(true);
    }
  });

  test("a URL past the server's 16 KiB header limit (a bare 431 from Bun's parser) is bad_request saying so, exit 2, not \"not a cards server\"", () => {
    const r = run(["api", "GET", `/cards?q=${"word ".repeat(4000).trim().replaceAll(" ", "+")}`], { cwd: dir, env: { CARDS_URL: server.url } });
    expect([r.code, r.error?.error]).toEqual([2, "bad_request"]);
    expect(r.error?.message).toContain("as too long (431");
    // and the stream `events --follow` opens
    const f = run(["events", "--follow", "--owner", "o".repeat(17000)], { cwd: dir, env: { CARDS_URL: server.url } });
    expect([f.code, f.error?.error]).toEqual([2, "bad_request"]);
    expect(f.error?.message).toContain("GET /v1/events/stream: ");
    expect(f.error?.message).toContain("as too long (431");
  });

  test("--dir on the command line wins over CARDS_URL in the environment; --url wins over --dir", () => {
    const other = makeWorkspace();
    const mine = run(["--dir", other, "workspace"], { env: { CARDS_URL: "http://127.0.0.1:9" } });
    expect(mine.code).toBe(0);
    expect(run(["--dir", other, "--url", "http://127.0.0.1:9", "workspace"]).code).toBe(7);
  });

  test("serve on a port in use is `unavailable` (exit 7) with a hint, not an internal error", () => {
    const port = new URL(server.url).port;
    const r = run(["serve", "--port", port], { cwd: dir });
    expect(r.code).toBe(7);
    expect(r.error).toMatchObject({ error: "unavailable", hint: expect.stringContaining("--port 0") });
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test("an unreachable server is `unavailable` (exit 7)", () => {
    const r = run(["cards", "list"], { cwd: dir, env: { CARDS_URL: "http://127.0.0.1:9" } });
    expect(r.code).toBe(7);
    expect(r.error.error).toBe("unavailable");
  });
});
